/**
 * Which runs use a cache folder right now, so that `skillopt cache prune` never removes entries a live run
 * has written or is about to read (a replay would then fail on replies it had a moment ago).
 *
 * A process that opens the cache records itself as `<dir>/users/<token>.json` (pid, host, start, command:
 * the run lock's holder record, src/util/lock.ts) and removes the file when it closes the cache or exits.
 * A record whose process is gone (killed with -9) is stale: it is ignored and removed by whoever reads it.
 * Recording is best effort: a cache folder that cannot be written (a restored read-only artifact under
 * `ro`) has nothing a prune could remove either.
 */
import { mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import {
  forgetAtExit,
  holderAlive,
  holderInfo,
  readLock,
  releaseAtExit,
  type Held,
  type LockInfo,
} from '../../util/lock.ts';
import { writeJsonAtomic } from '../../util/atomic.ts';

export const USERS_DIR = 'users';

/** A live user of the cache: its holder record and its file. */
export interface CacheUser extends LockInfo {
  file: string;
}

/** Record this process as a user of the cache in `dir` until `release()` (or exit). */
export function registerCacheUser(dir: string): Held {
  const info = holderInfo();
  const file = join(dir, USERS_DIR, `${info.token}.json`);
  try {
    mkdirSync(join(dir, USERS_DIR), { recursive: true });
    writeJsonAtomic(file, info);
  } catch {
    return { release() {} };
  }
  let released = false;
  const user: Held = {
    release() {
      if (released) return;
      released = true;
      forgetAtExit(user);
      try {
        unlinkSync(file);
      } catch {
        // removed by hand meanwhile
      }
    },
  };
  releaseAtExit(user);
  return user;
}

/** The runs using the cache in `dir` now, oldest first; stale records (their process is gone) are removed. */
export function liveCacheUsers(dir: string): CacheUser[] {
  let names: string[];
  try {
    names = readdirSync(join(dir, USERS_DIR));
  } catch {
    return [];
  }
  const out: CacheUser[] = [];
  for (const name of names) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    const file = join(dir, USERS_DIR, name);
    let info: ReturnType<typeof readLock>;
    try {
      info = readLock(file);
    } catch {
      continue;
    }
    if (typeof info !== 'object') continue; // gone meanwhile, or not a record of ours
    if (holderAlive(info)) {
      out.push({ ...info, file });
      continue;
    }
    try {
      unlinkSync(file);
    } catch {
      // another reader removed it first
    }
  }
  return out.sort((a, b) => a.started_at.localeCompare(b.started_at));
}
