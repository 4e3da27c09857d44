/**
 * A small FIFO semaphore: at most `limit` holders at once; waiters are served in arrival order.
 * A waiter whose AbortSignal fires leaves the queue and its `acquire` rejects with the signal's reason.
 */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
  cleanup: () => void;
}

export class Limiter {
  readonly limit: number;
  private inUse = 0;
  private readonly queue: Waiter[] = [];
  private head = 0;

  constructor(limit: number) {
    if (!Number.isFinite(limit) || limit < 1) throw new RangeError(`concurrency limit must be >= 1, got ${limit}`);
    this.limit = Math.floor(limit);
  }

  /** Holders right now. */
  get active(): number {
    return this.inUse;
  }

  /** Waiters right now. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** A slot right now if one is free and nobody is waiting, else null. */
  tryAcquire(): Release | null {
    if (this.inUse >= this.limit || this.pending > 0) return null;
    this.inUse++;
    return this.makeRelease();
  }

  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const free = this.tryAcquire();
    if (free) return Promise.resolve(free);
    return new Promise<Release>((resolve, reject) => {
      const onAbort = (): void => {
        const idx = this.queue.indexOf(waiter, this.head);
        if (idx >= 0) this.queue.splice(idx, 1);
        reject(abortReason(signal!));
      };
      const waiter: Waiter = {
        grant: (release) => resolve(release),
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  /** Run `fn` holding one slot. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private makeRelease(): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.inUse--;
      this.dispatch();
    };
  }

  private dispatch(): void {
    while (this.inUse < this.limit && this.head < this.queue.length) {
      const w = this.queue[this.head++]!;
      w.cleanup();
      this.inUse++;
      w.grant(this.makeRelease());
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
