/** Shared setup for model-client tests: a fault server + a client with an observable sleep. */
import { onTestEnd } from '../helpers/cleanup.ts';
import { Accounting } from '../../src/model/accounting.ts';
import { createModelClient, type ModelClient, type ModelClientOptions } from '../../src/model/client.ts';
import type { RoleConfig } from '../../src/model/types.ts';
import { startFaultServer, type FaultServer, type FaultServerOptions, type Script } from '../helpers/fault-server.ts';

export function roleConfig(baseURL: string, over: Partial<RoleConfig> = {}): RoleConfig {
  return {
    role: 'target',
    backend: 'openai_compat',
    model: 'mitko',
    baseURL,
    apiKeyEnv: 'SKILLOPT_TEST_API_KEY',
    temperature: null,
    maxTokens: 512,
    timeoutMs: 5_000,
    retries: 3,
    retryBaseDelayMs: 10,
    retryMaxDelayMs: 100,
    concurrency: 4,
    structuredOutput: 'auto',
    ...over,
  };
}

export interface Harness {
  server: FaultServer;
  client: ModelClient;
  accounting: Accounting;
  /** Every delay passed to the injected sleep. */
  delays: number[];
  logs: string[];
}

export async function setup(
  script: Script,
  opts: {
    role?: Partial<RoleConfig>;
    server?: FaultServerOptions;
    client?: Partial<ModelClientOptions>;
  } = {},
): Promise<Harness> {
  const server = await startFaultServer(script, opts.server);
  const accounting = new Accounting();
  const delays: number[] = [];
  const logs: string[] = [];
  const client = createModelClient(roleConfig(server.baseURL, opts.role), {
    accounting,
    // Record the requested delay, wait a token amount (respecting the signal like the real sleep).
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        delays.push(ms);
        if (signal?.aborted) return reject(signal.reason);
        const t = setTimeout(resolve, 1);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            reject(signal.reason);
          },
          { once: true },
        );
      }),
    random: () => 0.5,
    env: {},
    log: (l) => logs.push(l),
    ...opts.client,
  });
  onTestEnd(async () => {
    client.close();
    await server.close();
  });
  return { server, client, accounting, delays, logs };
}

export const user = (content: string) => [{ role: 'user' as const, content }];
