/**
 * The warm pool's first thread, started before the CLI loads anything else. A `skillopt test` spends about
 * 0.4 s loading Vitest, zod and the openai SDK on the main thread, then the first Vitest run starts a
 * worker thread that spends about 0.25 s booting and loading Vitest's runtime and the suites' imports while
 * the main thread waits. Started first, the thread does that work on the other core meanwhile, and the
 * pool's first worker takes it over (warm-pool.ts).
 *
 * It is taken over only by a worker that would have started an identical thread: the same Vitest dist
 * folder and the same `execArgv` (what Vitest derives from the resolved config; a config that sets other
 * conditions or `execArgv` gets a fresh thread, and this one ends). Its environment is set to the run's
 * before the run starts, as for every reused thread. It is unref'd: a command that never runs a suite
 * exits as if it had not been started.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { compiledSibling } from '../util/paths.ts';
import { defaultThreadOptions, threadKey } from '../vitest-internals.ts';

interface Prestarted {
  key: string;
  thread: Worker;
}

const SLOT = Symbol.for('skillopt.prestarted-thread');
type Slot = { [SLOT]?: Prestarted };

/** Start the thread: it loads Vitest's worker runtime, then the `vitest` entry and this package's. Returns its id. */
export function prestartWarmThread(): number {
  const slot = globalThis as Slot;
  if (slot[SLOT]) return slot[SLOT].thread.threadId;
  const { distPath, execArgv, env } = defaultThreadOptions();
  // Suites import `vitest` and `skillopt` (resolved to these files when skillopt is installed, as users have it).
  const preload = [fileURLToPath(import.meta.resolve('vitest'))];
  if (import.meta.url.endsWith('.js')) preload.push(fileURLToPath(new URL('../index.js', import.meta.url)));
  const thread = new Worker(compiledSibling(import.meta.url, 'warm-worker'), {
    env,
    execArgv,
    stdout: true,
    stderr: true,
    workerData: { distPath, preload },
  });
  thread.unref();
  // A thread that fails to start is simply not there to take over.
  thread.once('error', () => {
    if (slot[SLOT]?.thread === thread) slot[SLOT] = undefined;
  });
  slot[SLOT] = { key: threadKey(distPath, execArgv), thread };
  return thread.threadId;
}

/** The prestarted thread if it fits `key` (once); one that does not fit is ended. */
export function takePrestarted(key: string): Worker | undefined {
  const slot = globalThis as Slot;
  const p = slot[SLOT];
  if (!p) return undefined;
  slot[SLOT] = undefined;
  if (p.key === key && p.thread.threadId >= 0) return p.thread;
  void p.thread.terminate();
  return undefined;
}

/** End a prestarted thread no worker took over (a config that names its own pool, or a session that is over). */
export function discardPrestarted(): void {
  takePrestarted('');
}

/** Commands that run the suites in Vitest workers (not `--help`, not `--merge-reports`, which runs none). */
export function runsSuites(argv: readonly string[]): boolean {
  const [name, ...rest] = argv;
  if (name !== 'test' && name !== 'eval' && name !== 'train') return false;
  return !rest.some((a) => a === '--help' || a === '-h' || a.startsWith('--merge-reports'));
}
