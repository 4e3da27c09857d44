/**
 * The warm pool: Vitest's `threads` pool, except that a thread which ended its run cleanly is parked
 * instead of terminated, and the next run's worker takes it back. A rollout is a whole Vitest run, and a
 * fresh thread pays about 0.2 s to load Vitest's runtime, the openai SDK and the suite's imports before
 * its first case; the optimizer runs many rollouts, so that start-up was a large share of its time
 * (scripts/bench-throughput.mjs). Test files still get fresh module state: Vitest's runtime re-evaluates
 * them (and everything it transformed) for every file when `isolate` is on, as it is by default.
 *
 * A thread is reused only by the Vitest instance that started it, with the same `execArgv`, at most
 * `MAX_RUNS` times (the runtime keeps a little per-run state), and never after a run that was cancelled
 * or failed to stop. Every run resets the thread's `process.env` to the run's environment, so a suite
 * that changed it does not leak the change into the next run. Closing that Vitest instance ends its
 * parked threads.
 */
import type { Writable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type {
  PoolOptions,
  PoolRunnerInitializer,
  PoolWorker,
  Vitest,
  WorkerRequest,
  WorkerResponse,
} from 'vitest/node';
import { compiledSibling } from '../util/paths.ts';
import { threadKey } from '../vitest-internals.ts';
import { takePrestarted } from './prestart.ts';

export const WARM_POOL_NAME = 'skillopt-threads';
const MAX_RUNS = 25;

/** The message that resets a thread's `process.env` before a run (see warm-worker.ts). */
export const ENV_MESSAGE = '__skillopt_env__';

interface ParkedThread {
  key: string;
  thread: Worker;
  runs: number;
  /** Drops the thread from the park if it dies there. */
  onExit: () => void;
}

interface Park {
  closed: boolean;
  threads: ParkedThread[];
  /**
   * Threads told to stop whose worker has not yet parked or ended them. Vitest does not wait for a run's
   * workers to stop before the next run starts, so the next run waits briefly for these.
   */
  readonly stopping: Array<{ key: string; settled: Promise<void> }>;
}

/** How long a starting worker waits for a stopping thread it could take over. */
const STOPPING_WAIT_MS = 1_000;

const parks = new WeakMap<Vitest, Park>();

function parkOf(vitest: Vitest): Park {
  let park = parks.get(vitest);
  if (!park) {
    const p: Park = { closed: false, threads: [], stopping: [] };
    vitest.onClose(async () => {
      p.closed = true;
      await Promise.all(p.threads.splice(0).map((t) => t.thread.terminate()));
    });
    parks.set(vitest, p);
    park = p;
  }
  return park;
}

class WarmThreadWorker implements PoolWorker {
  readonly name = WARM_POOL_NAME;
  private thread: Worker | undefined;
  private runs = 0;
  private readonly key: string;
  private readonly park: Park;
  private readonly listeners: Array<[string, (arg: unknown) => void]> = [];
  private readonly stdout: Writable;
  private readonly stderr: Writable;
  /** Set when the runtime answered `stop` without an error: only then is the thread fit to reuse. */
  private stoppedCleanly = false;
  private stopRequested = false;
  /** Set when Vitest cancels the run this worker serves (bail, Ctrl-C): its thread is not reused. */
  private cancelled = false;
  /** Settles once `stop` has parked or ended the thread. */
  private settleStop: (() => void) | undefined;

  constructor(private readonly options: PoolOptions) {
    this.key = threadKey(options.distPath, options.execArgv);
    this.park = parkOf(options.project.vitest);
    this.stdout = options.project.vitest.logger.outputStream as Writable;
    this.stderr = options.project.vitest.logger.errorStream as Writable;
  }

  private get live(): Worker {
    if (!this.thread) throw new Error('skillopt warm pool: the worker thread is not running');
    return this.thread;
  }

  on(event: string, callback: (arg: unknown) => void): void {
    this.listeners.push([event, callback]);
    this.live.on(event, callback);
  }

  off(event: string, callback: (arg: unknown) => void): void {
    const i = this.listeners.findIndex(([e, c]) => e === event && c === callback);
    if (i >= 0) this.listeners.splice(i, 1);
    this.thread?.off(event, callback);
  }

  send(message: WorkerRequest): void {
    if (message.type === 'stop' && !this.stopRequested) {
      this.stopRequested = true;
      this.trackStopping();
    }
    this.live.postMessage(message);
  }

  private trackStopping(): void {
    const entry = { key: this.key, settled: Promise.resolve() };
    entry.settled = new Promise<void>((resolve) => {
      this.settleStop = () => {
        this.dropStopping(entry);
        resolve();
      };
    });
    this.park.stopping.push(entry);
  }

  private dropStopping(entry: Park['stopping'][number]): void {
    const i = this.park.stopping.indexOf(entry);
    if (i >= 0) this.park.stopping.splice(i, 1);
  }

  private takeParked(): ParkedThread | undefined {
    const i = this.park.threads.findIndex((p) => p.key === this.key);
    if (i < 0) return undefined;
    const [p] = this.park.threads.splice(i, 1);
    p!.thread.off('exit', p!.onExit);
    return p;
  }

  /** A parked thread for this key, waiting briefly for one that is still stopping. */
  private async reusable(): Promise<ParkedThread | undefined> {
    const parked = this.takeParked();
    const waitingFor = this.park.stopping.filter((s) => s.key === this.key);
    if (parked || waitingFor.length === 0) return parked;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), STOPPING_WAIT_MS);
    });
    const late = await Promise.race([Promise.race(waitingFor.map((s) => s.settled)).then(() => false), timedOut]);
    clearTimeout(timer);
    // A stop that never finished (its worker was never told to stop) must not hold up later runs.
    if (late) for (const s of waitingFor) this.dropStopping(s);
    return this.takeParked();
  }

  deserialize(data: unknown): unknown {
    return data;
  }

  async start(): Promise<void> {
    if (this.thread) return;
    const p = await this.reusable();
    const env = this.options.env as NodeJS.ProcessEnv;
    if (p) {
      this.thread = p.thread;
      this.runs = p.runs;
      this.thread.ref();
    } else if ((this.thread = takePrestarted(this.key))) {
      this.thread.ref();
    } else {
      this.thread = new Worker(compiledSibling(import.meta.url, 'warm-worker'), {
        env,
        execArgv: this.options.execArgv,
        stdout: true,
        stderr: true,
        workerData: { distPath: this.options.distPath },
      });
    }
    // Sent before Vitest's `start`: the runtime sees this run's environment, not a previous run's.
    this.thread.postMessage({ [ENV_MESSAGE]: env });
    this.runs++;
    this.stoppedCleanly = false;
    this.stopRequested = false;
    this.cancelled = false;
    // Vitest forgets its cancel listeners when the next run starts: this one hears only this run's cancel.
    this.options.project.vitest.onCancel(() => {
      this.cancelled = true;
    });
    this.thread.on('message', this.watchStop);
    this.stdout.setMaxListeners(1 + this.stdout.getMaxListeners());
    this.thread.stdout.pipe(this.stdout);
    this.stderr.setMaxListeners(1 + this.stderr.getMaxListeners());
    this.thread.stderr.pipe(this.stderr);
  }

  private readonly watchStop = (message: unknown): void => {
    const m = message as Partial<WorkerResponse> | null;
    if (this.stopRequested && m?.__vitest_worker_response__ && m.type === 'stopped') this.stoppedCleanly = !m.error;
  };

  async stop(): Promise<void> {
    try {
      await this.release();
    } finally {
      this.settleStop?.();
      this.settleStop = undefined;
    }
  }

  private async release(): Promise<void> {
    const thread = this.thread;
    if (!thread) return;
    this.thread = undefined;
    for (const [event, callback] of this.listeners.splice(0)) thread.off(event, callback);
    thread.off('message', this.watchStop);
    thread.stdout.unpipe(this.stdout);
    this.stdout.setMaxListeners(this.stdout.getMaxListeners() - 1);
    thread.stderr.unpipe(this.stderr);
    this.stderr.setMaxListeners(this.stderr.getMaxListeners() - 1);
    if (this.stoppedCleanly && !this.park.closed && !this.cancelled && this.runs < MAX_RUNS && thread.threadId >= 0) {
      thread.unref();
      const park = this.park;
      const parked: ParkedThread = {
        key: this.key,
        thread,
        runs: this.runs,
        onExit: () => {
          const i = park.threads.indexOf(parked);
          if (i >= 0) park.threads.splice(i, 1);
        },
      };
      thread.once('exit', parked.onExit);
      park.threads.push(parked);
      return;
    }
    await thread.terminate();
  }
}

/** The pool, for Vitest's `pool` option (the skillopt plugin sets it unless the config names another). */
export function warmThreadsPool(): PoolRunnerInitializer {
  return { name: WARM_POOL_NAME, createPoolWorker: (options) => new WarmThreadWorker(options) };
}
