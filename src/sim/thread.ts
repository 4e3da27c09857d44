/**
 * The simulated model server on a thread of its own. A session host with a simulated role starts it
 * here rather than on its own thread: the simulated model stands in for a remote endpoint, and answering
 * hundreds of requests a second on the host's thread would slow the host (which also makes the suites'
 * model calls and runs Vitest) as no real endpoint does.
 */
import { Worker } from 'node:worker_threads';
import { SkillOptError } from '../util/errors.ts';
import { compiledSibling } from '../util/paths.ts';
import type { SimStats } from './dispatch.ts';
import type { SimServerOptions } from './server.ts';

export type SimThreadRequest = { t: 'stats'; id: number } | { t: 'close' };
export type SimThreadReply =
  | { t: 'ready'; url: string; host: string; port: number; banner: string }
  | { t: 'failed'; message: string }
  | { t: 'log'; line: string }
  | { t: 'stats'; id: number; stats: SimStats };

export interface SimServerThread {
  /** Base URL ending in /v1. */
  url: string;
  host: string;
  port: number;
  banner: string;
  stats(): Promise<SimStats>;
  close(): Promise<void>;
}

export function startSimServerThread(opts: SimServerOptions): Promise<SimServerThread> {
  const { log, ...options } = opts;
  const thread = new Worker(compiledSibling(import.meta.url, 'thread-worker'), { workerData: options });
  const waiting = new Map<number, (stats: SimStats) => void>();
  let nextId = 0;
  let closed: Promise<void> | undefined;
  const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));

  return new Promise<SimServerThread>((resolve, reject) => {
    thread.once('error', (e) => reject(new SkillOptError(`simulated model server thread failed: ${e.message}`)));
    thread.on('message', (msg: SimThreadReply) => {
      if (msg.t === 'log') log?.(msg.line);
      else if (msg.t === 'failed') reject(new SkillOptError(msg.message));
      else if (msg.t === 'stats') {
        waiting.get(msg.id)?.(msg.stats);
        waiting.delete(msg.id);
      } else if (msg.t === 'ready') {
        resolve({
          url: msg.url,
          host: msg.host,
          port: msg.port,
          banner: msg.banner,
          stats: () =>
            new Promise<SimStats>((done) => {
              const id = nextId++;
              waiting.set(id, done);
              thread.postMessage({ t: 'stats', id } satisfies SimThreadRequest);
            }),
          close() {
            closed ??= (async () => {
              thread.postMessage({ t: 'close' } satisfies SimThreadRequest);
              await exited;
            })();
            return closed;
          },
        });
      }
    });
  });
}
