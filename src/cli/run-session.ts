/**
 * A run's setup and teardown, shared by `eval`, `train` / `test --optimize` and `test`: lock the run folder,
 * open the host (releasing the lock if that fails), run the command's body, then close what the body opened
 * (its suite runner), the host and the lock, in that order, whatever happened. With `restoreOnReplayStop`, a
 * replay that stops on a cache miss leaves the folder as it found it (rundir/snapshot.ts).
 */
import { isReplayStop } from '../model/cache/cache.ts';
import { acquireRunLock } from '../util/lock.ts';
import { restoreFolder, snapshotFolder } from '../rundir/snapshot.ts';
import { openHost, type OpenHostOptions, type SessionHost } from '../vitest/host.ts';

export interface RunSessionOptions {
  /** The run folder (from config/out-root.ts): locked for the whole run. */
  outDir: string;
  host: OpenHostOptions;
  /** Where the lock's notes go (a stale lock taken over). */
  log: (line: string) => void;
  restoreOnReplayStop: boolean;
}

export interface RunSession {
  host: SessionHost;
  /** Close `resource` when the run ends, before the host (the last one registered first). */
  closeAtEnd<T extends { close(): Promise<unknown> }>(resource: T): T;
}

export async function withRunSession<T>(opts: RunSessionOptions, body: (run: RunSession) => Promise<T>): Promise<T> {
  // one run per folder: the lock first, and the folder's fingerprint checked before anything is written
  const lock = acquireRunLock(opts.outDir, { log: opts.log });
  const host = await openHost({ ...opts.host, session: { ...opts.host.session, runDir: opts.outDir } }).catch(
    (e: unknown) => {
      lock.release();
      throw e;
    },
  );
  const resources: Array<{ close(): Promise<unknown> }> = [];
  const before = opts.restoreOnReplayStop && host.cache?.mode === 'replay' ? snapshotFolder(opts.outDir) : null;
  try {
    return await body({
      host,
      closeAtEnd(resource) {
        resources.push(resource);
        return resource;
      },
    });
  } catch (e) {
    if (before && isReplayStop(e)) restoreFolder(before);
    throw e;
  } finally {
    for (const r of resources.reverse()) await r.close();
    await host.close();
    lock.release();
  }
}
