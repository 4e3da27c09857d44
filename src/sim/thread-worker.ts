/**
 * Thread entry of the simulated model server started by a session host (see thread.ts): the server
 * itself, driven by messages from the host thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startSimServer, type SimServerOptions } from './server.ts';
import type { SimThreadReply, SimThreadRequest } from './thread.ts';

if (!parentPort) throw new Error('the simulated model server thread must run in a worker thread');
const port = parentPort;
const post = (message: SimThreadReply): void => port.postMessage(message);

try {
  const server = await startSimServer({
    ...(workerData as Omit<SimServerOptions, 'log'>),
    log: (line) => post({ t: 'log', line }),
  });
  port.on('message', (msg: SimThreadRequest) => {
    if (msg.t === 'stats') post({ t: 'stats', id: msg.id, stats: server.stats() });
    // Closing the port lets the thread end; the host waits for that exit.
    else if (msg.t === 'close') void server.close().then(() => port.close());
  });
  post({ t: 'ready', url: server.url, host: server.host, port: server.port, banner: server.banner });
} catch (e) {
  post({ t: 'failed', message: e instanceof Error ? e.message : String(e) });
  port.close();
}
