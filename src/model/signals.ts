/** Abort-signal helpers of the model client: an abortable sleep and a signal fed by several others. */
import type { SleepFn } from './client-types.ts';

export const defaultSleep: SleepFn = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** A signal (of `ac`) that aborts when any input does; `dispose` removes the listeners. */
export function anySignal(
  signals: Array<AbortSignal | undefined>,
  ac: AbortController = new AbortController(),
): { signal: AbortSignal; dispose: () => void } {
  const cleanups: Array<() => void> = [];
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) {
      ac.abort(s.reason);
      break;
    }
    const on = (): void => ac.abort(s.reason);
    s.addEventListener('abort', on, { once: true });
    cleanups.push(() => s.removeEventListener('abort', on));
  }
  return { signal: ac.signal, dispose: () => cleanups.forEach((c) => c()) };
}
