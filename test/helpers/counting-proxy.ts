/**
 * A counting HTTP proxy on 127.0.0.1 (ephemeral port), for tests that check exactly which requests a run
 * sends: it forwards every request to `upstream` (a loopback base URL ending in /v1) unchanged and records,
 * for each chat completion, the model and the `seed` of its body.
 *
 *   const proxy = await startCountingProxy(sim.url);
 *   // proxy.baseURL === 'http://127.0.0.1:<port>/v1'; proxy.byModel() → { 'sim-small': 24 }
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountedRequest {
  path: string;
  model: string | null;
  seed: number | null;
}

export interface CountingProxy {
  baseURL: string;
  /** Every chat completion request, in arrival order. */
  readonly completions: readonly CountedRequest[];
  /** Chat completion requests by model. */
  byModel(): Record<string, number>;
  /** Forget what was counted (the next step of a test counts from zero). */
  reset(): void;
  close(): Promise<void>;
}

function body(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const target = new URL(upstream.replace(/\/v1\/?$/, '/'));
  if (target.hostname !== '127.0.0.1' && target.hostname !== 'localhost')
    throw new Error(`counting proxy: upstream ${upstream} is not loopback`);
  let completions: CountedRequest[] = [];
  const forward = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await body(req);
    const path = (req.url ?? '/').split('?')[0]!;
    if (path.endsWith('/chat/completions')) {
      let parsed: { model?: unknown; seed?: unknown } = {};
      try {
        parsed = JSON.parse(raw.toString('utf8')) as typeof parsed;
      } catch {
        // counted with no model: the upstream answers it with its error
      }
      completions.push({
        path,
        model: typeof parsed.model === 'string' ? parsed.model : null,
        seed: typeof parsed.seed === 'number' ? parsed.seed : null,
      });
    }
    const headers = { ...req.headers, host: target.host, 'content-length': String(raw.length) };
    const out = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    out.end(raw);
  };
  const server = createServer((req, res) => void forward(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get completions() {
      return completions;
    },
    byModel() {
      const out: Record<string, number> = {};
      for (const c of completions) out[c.model ?? '(none)'] = (out[c.model ?? '(none)'] ?? 0) + 1;
      return out;
    },
    reset() {
      completions = [];
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
