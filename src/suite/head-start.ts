/**
 * The first wave of a suite's cases starts when the suite is defined, not when Vitest reaches them. After
 * the suite file is evaluated Vitest finishes collecting, sends the collected file to the main thread and
 * schedules the tests: about 50 ms for 1,000 cases during which no request is in flight
 * (scripts/bench-throughput.mjs). Only the cases Vitest itself starts at once (`maxConcurrency`) start
 * early, in its order, so the requests in flight are the ones a run without the head start would send.
 *
 * A case started early runs with its own abort signal; the test that takes it links its own signal
 * (timeout, cancel) to it. A case no test takes (a cancelled run) is dropped without an unhandled rejection.
 */
import { WORKER_REQUEST } from '../contract/session.ts';
import { workerRun } from '../vitest-internals.ts';

export interface HeadStart<T> {
  /** The case's early run, once (undefined: not started early, or already taken). */
  take(id: string, signal: AbortSignal): Promise<T> | undefined;
  /** Ids started early and not taken yet. */
  pending(): string[];
}

export function headStart<T>(
  ids: readonly string[],
  count: number,
  run: (id: string, signal: AbortSignal) => Promise<T>,
): HeadStart<T> {
  const early = new Map<string, { result: Promise<T>; controller: AbortController }>();
  for (const id of ids.slice(0, Math.max(0, count))) {
    const controller = new AbortController();
    const result = run(id, controller.signal);
    result.catch(() => {}); // the taker sees the rejection; an untaken case must not crash the worker
    early.set(id, { result, controller });
  }
  return {
    take(id, signal) {
      const e = early.get(id);
      if (!e) return undefined;
      early.delete(id);
      if (signal.aborted) e.controller.abort(signal.reason);
      else signal.addEventListener('abort', () => e.controller.abort(signal.reason), { once: true });
      return e.result;
    },
    pending: () => [...early.keys()],
  };
}

/**
 * How many cases Vitest starts at once in this worker, when a head start is safe: its `maxConcurrency`.
 * 0 — no head start — unless the warm pool's thread says it is running the tests (not `vitest list`, not
 * another pool) and no filter of Vitest's own (a name pattern, test ids or lines, tags) could skip a case
 * the suite would have started.
 */
export function vitestWave(): number {
  if ((globalThis as Record<symbol, unknown>)[WORKER_REQUEST] !== 'run') return 0;
  const run = workerRun();
  return run && !run.filtered ? run.maxConcurrency : 0;
}
