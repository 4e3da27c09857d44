/**
 * The simulated OpenAI-compatible model server (docs/simulated-model.md): a real HTTP server on
 * node:http. This module carries the bytes (listening, bodies, latency, logging, closing); what each
 * request is answered is sim/dispatch.ts's. It is deterministic: the same options and the same request
 * give a byte-identical reply, whatever the order or concurrency of requests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SkillOptError } from '../util/errors.ts';
import { SimHttpError } from './errors.ts';
import { DEFAULT_SIM_KNOBS, type SimKnobs } from './knobs.ts';
import { dispatchRequest, resolveSimConfig, simWorldFor, type SimStats, type SimWorldOptions } from './dispatch.ts';

export interface SimServerOptions extends Partial<SimKnobs>, Omit<SimWorldOptions, 'latencyMs'> {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Port; 0 (default) = ephemeral. */
  port?: number;
  /** Accepted model ids; empty (default) = any. */
  models?: string[];
  /**
   * Delay before each successful chat completion reply, in ms (errors are immediate); default 0: none, or
   * a profile's for a profile's model id (docs/simulated-model.md#model-profiles).
   */
  latencyMs?: number;
  /** Receives the banner and one line per request (every line says "simulated"). */
  log?: (line: string) => void;
  /** Log one line per request (default true); the in-process server of a run logs only start and stop. */
  logRequests?: boolean;
}

export interface SimServer {
  /** Base URL ending in /v1, for the `openai` SDK's `baseURL`. */
  url: string;
  host: string;
  port: number;
  /** The startup line (also sent to `log`). */
  banner: string;
  close(): Promise<void>;
  stats(): SimStats;
  resetStats(): void;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-skillopt-simulated': '1',
    ...extraHeaders,
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(
          new SimHttpError(413, `Request body larger than ${MAX_BODY_BYTES} bytes.`, { code: 'request_too_large' }),
        );
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function formatUrl(host: string, port: number): string {
  const h = host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}/v1`;
}

/** Start the simulated model server. A port in use (or any listen error) → SkillOptError. */
export async function startSimServer(opts: SimServerOptions = {}): Promise<SimServer> {
  const cfg = resolveSimConfig(opts);
  const host = opts.host ?? '127.0.0.1';
  const requestedPort = opts.port ?? 0;
  if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
    throw new SkillOptError(`simulated model server: port must be an integer 0..65535, got ${requestedPort}`);
  }
  const latencyMs = opts.latencyMs ?? 0;
  if (!Number.isFinite(latencyMs) || latencyMs < 0) {
    throw new SkillOptError(`simulated model server: latencyMs must be a non-negative number, got ${latencyMs}`);
  }
  const log = opts.log;
  let stats: SimStats = { requests: 0, byStage: {}, byModel: {} };
  const pending = new Set<{ timer: NodeJS.Timeout; res: ServerResponse }>();
  let closing = false;

  const count = (stage: string, model: string) => {
    stats.requests++;
    stats.byStage[stage] = (stats.byStage[stage] ?? 0) + 1;
    stats.byModel[model] = (stats.byModel[model] ?? 0) + 1;
  };

  const later = (res: ServerResponse, model: string, fn: () => void) => {
    const delay = simWorldFor(cfg, model).latencyMs;
    if (delay <= 0) return fn();
    const entry = {
      timer: setTimeout(() => {
        pending.delete(entry);
        fn();
      }, delay),
      res,
    };
    pending.add(entry);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    const line = (status: number, detail: string) => {
      if (opts.logRequests !== false || status >= 400)
        log?.(`[simulated] ${method} ${path} ${status} ${detail}`.trimEnd());
    };
    const reply = await dispatchRequest({ method, path, body: () => readBody(req) }, cfg, snapshot);
    if (reply.kind === 'reply') {
      line(reply.status, reply.detail);
      return sendJson(res, reply.status, reply.body, reply.headers);
    }
    const { result } = reply;
    count(result.stage, result.model);
    later(res, result.model, () => {
      line(
        200,
        `model=${result.model} role=${result.stage === 'target' ? 'target' : `optimizer stage=${result.stage}`} tokens=${result.completion.usage.total_tokens}`,
      );
      sendJson(res, 200, result.completion);
    });
  };

  const snapshot = (): SimStats => ({
    requests: stats.requests,
    byStage: { ...stats.byStage },
    byModel: { ...stats.byModel },
  });

  const server = createServer((req, res) => {
    if (closing) {
      res.destroy();
      return;
    }
    void handle(req, res);
  });
  server.keepAliveTimeout = 30_000;
  server.maxHeadersCount = 200;

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const where = `${host}:${requestedPort}`;
      if (err.code === 'EADDRINUSE') {
        reject(
          new SkillOptError(
            `simulated model server: port ${requestedPort} on ${host} is already in use (choose another with --port)`,
            { cause: err },
          ),
        );
      } else {
        reject(new SkillOptError(`simulated model server: cannot listen on ${where}: ${err.message}`, { cause: err }));
      }
    };
    server.once('error', onError);
    server.listen(requestedPort, host, () => {
      server.off('error', onError);
      resolve();
    });
  });

  const port = (server.address() as AddressInfo).port;
  const url = formatUrl(host, port);
  // the knobs that differ from the default world
  const changed = (Object.keys(DEFAULT_SIM_KNOBS) as (keyof SimKnobs)[]).filter(
    (k) => k !== 'seed' && cfg[k] !== DEFAULT_SIM_KNOBS[k],
  );
  const knobs = [
    `model ${cfg.models.length > 0 ? cfg.models.join(', ') : 'any'}`,
    `seed ${cfg.seed}`,
    ...changed.map((k) => `${k} ${cfg[k]}`),
    ...(latencyMs > 0 ? [`latency ${latencyMs} ms`] : []),
  ];
  const banner = `[simulated] skillopt simulated model server listening on ${url} (${knobs.join(', ')})`;
  log?.(banner);

  let closed: Promise<void> | null = null;
  return {
    url,
    host,
    port,
    banner,
    stats: snapshot,
    resetStats() {
      stats = { requests: 0, byStage: {}, byModel: {} };
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        for (const p of pending) {
          clearTimeout(p.timer);
          p.res.destroy();
        }
        pending.clear();
        server.close(() => {
          log?.('[simulated] skillopt simulated model server stopped');
          resolve();
        });
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
