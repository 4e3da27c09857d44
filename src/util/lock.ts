/**
 * The run directory's lock (docs/output-files.md): one process at a time writes into a run directory.
 *
 * `<dir>/run.lock` holds the holder's pid, host, start time and command. It is created exclusively and
 * complete: the holder's details are written to a private temp file first, which is then hard-linked to
 * `run.lock` (link fails with EEXIST when the lock is taken, so there is never a half-written lock).
 * A second process fails at once with a one-line error naming the holder.
 *
 * A stale lock (its pid is not alive on this host, or the pid now belongs to a process that started
 * later) is taken over: the taker first creates `run.lock.takeover-<token of the stale lock>`
 * exclusively, so exactly one process may remove that particular stale lock, re-reads `run.lock` and
 * removes it only when it still is that stale lock, then competes for the free lock like anyone else.
 * A lock of another host is never taken over (its pid cannot be checked from here).
 *
 * The lock is released (removed, only when it is still ours) by `release()`, on process exit, and on
 * SIGINT/SIGTERM (then the signal's default action proceeds unless another handler, e.g. Vitest's, takes
 * care of it). A folder the lock had to create (or that `outRoot` created) is removed again when it is
 * still empty at release, so a run that failed before writing anything leaves nothing behind.
 *
 * The same holder record and release at exit serve other files a process holds for its life (the model
 * cache's record of the runs using it: src/model/cache/users.ts), which is why it sits below both.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { exactCommand } from './command-line.ts';
import { SkillOptError } from './errors.ts';
import { displayPath } from './paths.ts';

export const LOCK_FILE = 'run.lock';

export interface LockInfo {
  pid: number;
  host: string;
  started_at: string;
  command: string;
  /** Unique per acquisition: a lock is only ever removed by the one who checked it is this one. */
  token: string;
  /** Linux: the process's start time in clock ticks since boot (/proc/<pid>/stat), to detect pid reuse. */
  proc_start: string | null;
}

export interface RunLock {
  readonly dir: string;
  readonly file: string;
  readonly info: LockInfo;
  release(): void;
}

export class RunLockError extends SkillOptError {}

/** Folders created for this process's runs (by `outRoot` or by the lock): removed at release when still empty. */
const createdDirs = new Set<string>();

export function markCreatedRunDir(dir: string): void {
  createdDirs.add(resolve(dir));
}

/** Something a process holds until it releases it or exits. */
export interface Held {
  release(): void;
}

const held = new Set<Held>();

/** Release `h` on process exit and on SIGINT/SIGTERM, unless released before (then call `forgetAtExit`). */
export function releaseAtExit(h: Held): void {
  held.add(h);
  installHandlers();
}

export function forgetAtExit(h: Held): void {
  held.delete(h);
  if (held.size === 0) uninstallHandlers();
}

function releaseAll(): void {
  for (const lock of [...held]) lock.release();
}

function onExit(): void {
  releaseAll();
}

function onSignal(signal: NodeJS.Signals): void {
  releaseAll();
  // Nobody else handles it: the default action (terminate with the signal), as without us.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

let installed = false;
function installHandlers(): void {
  if (installed) return;
  installed = true;
  process.on('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
}

function uninstallHandlers(): void {
  if (!installed) return;
  installed = false;
  process.off('exit', onExit);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}

/** Start time of a process (clock ticks since boot) from /proc, or null where that is not available. */
export function procStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name (which may contain spaces and parentheses): state is field 3, starttime 22
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the process that wrote `info` may still be running (true whenever it cannot be ruled out). */
export function holderAlive(info: LockInfo): boolean {
  if (info.host !== hostname()) return true;
  if (info.pid === process.pid) return info.proc_start === null || info.proc_start === procStart(process.pid);
  try {
    process.kill(info.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it exists (another user's process)
  }
  const now = info.proc_start === null ? null : procStart(info.pid);
  // the pid exists, but belongs to a process that started after the holder: the holder is gone
  return !(now !== null && now !== info.proc_start);
}

export type ReadLock = LockInfo | 'missing' | 'unreadable';

export function readLock(file: string): ReadLock {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw e;
  }
  try {
    const info = JSON.parse(text) as LockInfo;
    if (typeof info.pid === 'number' && typeof info.token === 'string' && typeof info.host === 'string') return info;
  } catch {
    // fall through
  }
  return 'unreadable';
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function tryUnlink(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

export function describeHolder(h: LockInfo): string {
  return `pid ${h.pid} on ${h.host}, started ${h.started_at}: ${h.command}`;
}

/** Make sure `dir` is a folder; returns whether this call created it. */
function ensureDir(dir: string): boolean {
  let created: string | undefined;
  try {
    created = mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new RunLockError(`${displayPath(dir)}: cannot create the run folder (env.out_root): ${(e as Error).message}`);
  }
  if (!statSync(dir).isDirectory()) throw new RunLockError(`${displayPath(dir)}: env.out_root is not a folder`);
  return created !== undefined;
}

/**
 * Remove `holder`'s stale lock: 'removed', or 'changed' (it is not that lock any more), or 'busy' (another
 * process is removing it right now): look again.
 * Only the process that created the takeover file of this very lock may remove it, and only after
 * re-reading that the lock file still is this lock.
 */
function removeStale(file: string, holder: LockInfo): 'removed' | 'changed' | 'busy' {
  const guard = `${file}.takeover-${holder.token.replace(/[^\w-]/g, '')}`;
  try {
    writeFileSync(guard, `${JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() })}\n`, {
      flag: 'wx',
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return 'busy';
    throw e;
  }
  try {
    const now = readLock(file);
    if (typeof now !== 'object' || now.token !== holder.token) return 'changed';
    unlinkSync(file);
    return 'removed';
  } finally {
    tryUnlink(guard);
  }
}

export interface AcquireOptions {
  /** The command line to record (default: this process's, secrets redacted). */
  command?: string;
  log?: (line: string) => void;
  /** How many times to look again when the lock changes under us (default 400, 10 ms apart at most). */
  attempts?: number;
}

/** This process as a holder: pid, host, start, command line (secrets redacted) and a fresh token. */
export function holderInfo(command?: string): LockInfo {
  return {
    pid: process.pid,
    host: hostname(),
    started_at: new Date().toISOString(),
    command: command ?? exactCommand(),
    token: `${process.pid}-${randomBytes(8).toString('hex')}`,
    proc_start: procStart(process.pid),
  };
}

/**
 * Take `<dir>/run.lock` for this process (creating `dir` when needed), or throw a one-line RunLockError
 * (exit code 2) naming the live holder.
 */
export function acquireRunLock(dir: string, opts: AcquireOptions = {}): RunLock {
  const root = resolve(dir);
  if (ensureDir(root)) markCreatedRunDir(root);
  const file = join(root, LOCK_FILE);
  const info = holderInfo(opts.command);
  const token = info.token;
  const tmp = join(root, `.${LOCK_FILE}.${token}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(info, null, 2)}\n`, { flag: 'wx' });
  const attempts = opts.attempts ?? 400;
  let unreadableSeen = 0;
  try {
    for (let attempt = 0; attempt < attempts; attempt++) {
      try {
        linkSync(tmp, file);
        return register(root, file, info);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new RunLockError(`${displayPath(file)}: cannot create the run lock: ${(e as Error).message}`);
        }
      }
      const holder = readLock(file);
      if (holder === 'missing') continue; // released meanwhile: try again
      if (holder === 'unreadable') {
        // only a hand-made file can be unreadable (locks are linked complete); give an editor a moment
        if (++unreadableSeen > 20) {
          throw new RunLockError(
            `${displayPath(root)}: the lock file ${displayPath(file)} is not a skillopt lock; delete it if no skillopt run uses this folder`,
          );
        }
        sleep(10);
        continue;
      }
      if (holderAlive(holder)) {
        throw new RunLockError(
          `${displayPath(root)}: locked by another skillopt run (${describeHolder(holder)}; lock file ${displayPath(file)}) — ` +
            `wait for it to finish or use a new env.out_root` +
            (holder.host !== hostname() ? `; if that run is gone, delete ${displayPath(file)}` : ''),
        );
      }
      const taken = removeStale(file, holder);
      if (taken === 'removed') {
        opts.log?.(
          `taking over the stale lock of ${displayPath(root)}: pid ${holder.pid} (started ${holder.started_at}) is gone`,
        );
      } else if (taken === 'busy') {
        sleep(Math.min(10, 1 + attempt)); // another process is removing it right now
      }
    }
    throw new RunLockError(
      `${displayPath(root)}: could not take ${displayPath(file)} (a stale-lock takeover did not finish; ` +
        `if no skillopt run uses this folder, delete ${displayPath(file)} and ${displayPath(file)}.takeover-*)`,
    );
  } finally {
    tryUnlink(tmp);
  }
}

function register(dir: string, file: string, info: LockInfo): RunLock {
  let released = false;
  const lock: RunLock = {
    dir,
    file,
    info,
    release() {
      if (released) return;
      released = true;
      forgetAtExit(lock);
      try {
        const now = readLock(file);
        if (typeof now === 'object' && now.token === info.token) tryUnlink(file);
      } catch {
        // unreadable now (permissions changed under us): leave it; a later run sees a dead pid
      }
      if (createdDirs.has(dir)) {
        try {
          rmdirSync(dir); // only when empty: the run wrote nothing
          createdDirs.delete(dir);
        } catch {
          // it holds the run's outputs
        }
      }
    },
  };
  releaseAtExit(lock);
  return lock;
}
