/**
 * The thread side of the warm pool (see warm-pool.ts): Vitest's own worker runtime (`vitest/worker`, the
 * public entry of a custom pool's worker) of the running Vitest, given an adapter whose teardown detaches
 * the run's RPC instead of the runtime itself. After `stop` the thread keeps its loaded modules and waits for the next run's `start`,
 * which the pool precedes with the run's environment.
 */
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { ENV_MESSAGE } from './warm-pool.ts';
import { WORKER_REQUEST } from '../contract/session.ts';
import { vitestWorkerEntry } from '../vitest-internals.ts';

type Listener = (message: unknown) => void;
/** `vitest/worker`; `setupEnvironment` (and `runBaseTests`' traces) since Vitest 4.1. */
interface VitestWorkerModule {
  init(worker: Record<string, unknown>): void;
  runBaseTests(method: 'run' | 'collect', state: unknown, traces: unknown): Promise<void>;
  setupEnvironment?(context: unknown): Promise<unknown>;
}

if (!parentPort) throw new Error('skillopt warm pool: this module runs in a worker thread');
const port = parentPort;
const { distPath, preload = [] } = workerData as { distPath: string; preload?: string[] };
const vitestWorker = (await import(vitestWorkerEntry(distPath))) as VitestWorkerModule;

/** Whether this thread's current request runs the tests or only collects them (`vitest list`): the suites' head start (suite/head-start.ts) reads it. */
function markRequest(method: 'run' | 'collect'): void {
  (globalThis as Record<symbol, unknown>)[WORKER_REQUEST] = method;
}

/** Make `process.env` exactly `env` (this thread's copy; the process's is untouched). */
function resetEnv(env: Record<string, string | undefined>): void {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  for (const [key, value] of Object.entries(env)) if (value !== undefined) process.env[key] = value;
}

// Registered in the same turn as the runtime's handler below (a port delivers nothing before its first
// listener, and a message delivered to this one alone would be lost to the runtime).
port.on('message', (message: unknown) => {
  const env = (message as Record<string, unknown> | null)?.[ENV_MESSAGE];
  if (env && typeof env === 'object') resetEnv(env as Record<string, string | undefined>);
});

/** The runtime's own message handler (registered first, kept for the thread's life) and each run's RPC. */
let runtimeListener: Listener | undefined;
const runListeners = new Set<Listener>();

vitestWorker.init({
  post: (response: unknown) => port.postMessage(response),
  on: (listener: Listener) => {
    if (runtimeListener) runListeners.add(listener);
    else runtimeListener = listener;
    port.on('message', listener);
  },
  off: (listener: Listener) => {
    runListeners.delete(listener);
    port.off('message', listener);
  },
  teardown: () => {
    for (const listener of runListeners) port.off('message', listener);
    runListeners.clear();
  },
  runTests: (state: unknown, traces: unknown) => {
    markRequest('run');
    return vitestWorker.runBaseTests('run', state, traces);
  },
  collectTests: (state: unknown, traces: unknown) => {
    markRequest('collect');
    return vitestWorker.runBaseTests('collect', state, traces);
  },
  setup: vitestWorker.setupEnvironment,
});

// A prestarted thread (prestart.ts) loads what the suites will import while the main thread is still busy;
// a failure here is left to the suite's own import to report.
for (const file of preload) void import(pathToFileURL(file).href).catch(() => {});
