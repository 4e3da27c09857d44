/**
 * The simulated model server the whole-process benchmarks call, on a thread of the benchmark's own
 * process (so neither measured process pays for it), reporting when each run's first request arrived.
 * The server (dist/sim/server.js) logs a request when it replies, `latencyMs` after it arrived, so the
 * arrival is the first such line's time less the latency.
 *
 *   const server = await startBenchServer({ latencyMs: 50 });
 *   server.url; await server.mark(); …run a client…; const { firstRequestAt, requests } = await server.mark();
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { join } from 'node:path';
import { REPO } from './bench-project.mjs';

const now = () => performance.timeOrigin + performance.now();

if (!isMainThread && workerData?.benchServer) {
  const { startSimServer } = await import(join(REPO, 'dist', 'sim', 'server.js'));
  let firstReplyAt = null;
  const server = await startSimServer({
    host: '127.0.0.1',
    port: 0,
    latencyMs: workerData.latencyMs,
    // a target that always follows its rules: every case passes, as in a healthy CI run
    noise: 0,
    interference: 0,
    dilution: 0,
    log: (line) => {
      if (firstReplyAt === null && line.includes('POST /v1/chat/completions 200')) firstReplyAt = now();
    },
  });
  parentPort.on('message', (msg) => {
    if (msg === 'close') return void server.close().then(() => parentPort.close());
    const { requests } = server.stats();
    parentPort.postMessage({
      firstRequestAt: firstReplyAt === null ? null : firstReplyAt - workerData.latencyMs,
      requests,
    });
    firstReplyAt = null;
    server.resetStats();
  });
  parentPort.postMessage({ url: server.url });
}

/** Start the server thread; `mark()` returns what arrived since the last mark (absolute ms) and starts anew. */
export async function startBenchServer({ latencyMs }) {
  const thread = new Worker(new URL(import.meta.url), { workerData: { benchServer: true, latencyMs } });
  const next = () =>
    new Promise((resolve, reject) => {
      thread.once('error', reject);
      thread.once('message', (m) => {
        thread.off('error', reject);
        resolve(m);
      });
    });
  const { url } = await next();
  return {
    url,
    async mark() {
      const reply = next();
      thread.postMessage('mark');
      return reply;
    },
    async close() {
      thread.postMessage('close');
      await new Promise((r) => thread.once('exit', r));
    },
  };
}
