/**
 * A barrier for concurrency tests: the first `n` callers of `arrive()` wait until all `n` have arrived,
 * later callers pass straight through. A fault-server script that awaits it holds the first `n`
 * requests in flight together, so "n requests were in flight at once" is a fact of the run instead of
 * a race between a server-side delay and the machine's scheduling.
 *
 *   const gate = barrier(3);
 *   const srv = await startFaultServer(async () => (await gate.arrive(), { content: 'ok' }));
 *
 * If fewer than `n` ever arrive (the code under test serialises), the waiters are released after
 * `giveUpMs` so the test fails on its own assertion (`maxInFlight` below `n`) with a readable message
 * instead of hanging until the test timeout. A correct implementation never gets near it.
 */
export interface Barrier {
  /** Resolves once `n` callers have arrived (at once for the `n`-th and every later caller). */
  arrive(): Promise<void>;
  /** How many callers have arrived so far. */
  readonly arrived: number;
  /** Whether the barrier opened because `n` arrived (false: not yet, or only the give-up timer). */
  readonly reached: boolean;
}

export function barrier(n: number, giveUpMs = 30_000): Barrier {
  let arrived = 0;
  let reached = false;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let timer: NodeJS.Timeout | undefined;
  return {
    arrive() {
      arrived++;
      if (arrived >= n) {
        reached = true;
        if (timer) clearTimeout(timer);
        open();
      } else if (!timer) {
        timer = setTimeout(open, giveUpMs);
        timer.unref();
      }
      return opened;
    },
    get arrived() {
      return arrived;
    },
    get reached() {
      return reached;
    },
  };
}
