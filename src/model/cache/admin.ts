/**
 * Keeping the cache bounded and visible: what `skillopt cache stats` and `skillopt cache prune` compute.
 * Both work on the folder alone (no config needed). Prune refuses while a run uses the cache (users.ts),
 * naming it: its entries are its replies, and a replay of the same run needs every one of them.
 */
import { SkillOptError } from '../../util/errors.ts';
import { FileStore, type EntryFile } from './store.ts';
import { describeHolder } from '../../util/lock.ts';
import { displayPath } from '../../util/paths.ts';
import { liveCacheUsers, type CacheUser } from './users.ts';

/** A temp file this old belongs to a writer that was killed. */
const STALE_TEMP_MS = 60 * 60 * 1000;

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
};
const AGE_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `500MB`, `1.5G`, `200k`, `1048576` → bytes (K/M/G/T are powers of 1024). */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new SkillOptError(`--max-size ${text}: expected a size like 500MB, 2GB or 800K`);
  return Math.floor(Number(m[1]) * unit);
}

/** `30d`, `12h`, `2w`, `90m`, `45s` → milliseconds. */
export function parseAge(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$/i.exec(text);
  if (!m) throw new SkillOptError(`--older-than ${text}: expected an age like 30d, 12h, 2w or 90m`);
  return Number(m[1]) * AGE_UNITS[m[2]!.toLowerCase()]!;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}

export interface RunLogRecord {
  time: string;
  command: string;
  mode: string;
  hits: number;
  misses: number;
  writes?: number;
}

export interface CacheStats {
  dir: string;
  entries: number;
  /** Bytes of data. */
  bytes: number;
  /** Bytes on disk (allocated blocks: a small entry still takes a block). */
  disk: number;
  oldest_use: string | null;
  newest_use: string | null;
  /** Temp files of writers that were killed (prune removes them). */
  stale_temps: number;
  recent_runs: RunLogRecord[];
  /** Over the recent runs: hits / (hits + misses); null when they made no lookup. */
  recent_hit_rate: number | null;
}

export function cacheStats(dir: string, opts: { runs?: number; now?: number } = {}): CacheStats {
  const store = new FileStore(dir);
  const now = opts.now ?? Date.now();
  let entries = 0;
  let bytes = 0;
  let disk = 0;
  let oldest = Infinity;
  let newest = -Infinity;
  let staleTemps = 0;
  for (const f of store.walk({ temps: true })) {
    if (f.temp) {
      if (now - f.mtimeMs > STALE_TEMP_MS) staleTemps++;
      continue;
    }
    entries++;
    bytes += f.size;
    disk += f.disk;
    oldest = Math.min(oldest, f.mtimeMs);
    newest = Math.max(newest, f.mtimeMs);
  }
  const runs = store
    .readRuns()
    .filter(
      (r): r is Record<string, unknown> & RunLogRecord => typeof r.hits === 'number' && typeof r.misses === 'number',
    )
    .slice(-(opts.runs ?? 10))
    .map((r) => ({
      time: String(r.time ?? ''),
      command: String(r.command ?? ''),
      mode: String(r.mode ?? ''),
      hits: r.hits,
      misses: r.misses,
      ...(typeof r.writes === 'number' ? { writes: r.writes } : {}),
    }));
  const hits = runs.reduce((a, r) => a + r.hits, 0);
  const lookups = hits + runs.reduce((a, r) => a + r.misses, 0);
  return {
    dir,
    entries,
    bytes,
    disk,
    oldest_use: entries ? new Date(oldest).toISOString() : null,
    newest_use: entries ? new Date(newest).toISOString() : null,
    stale_temps: staleTemps,
    recent_runs: runs,
    recent_hit_rate: lookups ? hits / lookups : null,
  };
}

export interface PruneResult {
  removed: number;
  removed_disk: number;
  kept: number;
  kept_disk: number;
  temps_removed: number;
  /** Runs using the cache (a dry run still counts; a real prune refuses). */
  in_use: CacheUser[];
}

/** Prune's refusal while runs use the cache: one line naming the first, and what to do. */
function inUseError(dir: string, users: CacheUser[], removed: number): SkillOptError {
  const first = users[0]!;
  const runs = users.length === 1 ? 'a running skillopt run' : `${users.length} running skillopt runs; first`;
  return new SkillOptError(
    `skillopt cache prune: ${displayPath(dir)} is in use by ${runs} (${describeHolder(first)})${removed ? `; stopped after removing ${removed} entries` : ''} — ` +
      `prune once it has finished (its entries are the replies it needs); if that run is gone, delete ${displayPath(first.file)}`,
    { exitCode: 2 },
  );
}

/**
 * Remove entries unused for longer than `olderThanMs` (last use = mtime: written, or read by a `rw` run),
 * then the least recently used until the entries take at most `maxBytes` on disk; and the temp files of
 * killed writers. `dryRun` counts without removing. Throws (exit 2) while a run uses the cache, naming it;
 * a run that starts meanwhile stops the prune before its next removal.
 */
export function pruneCache(
  dir: string,
  opts: { maxBytes?: number; olderThanMs?: number; dryRun?: boolean; now?: number },
): PruneResult {
  const store = new FileStore(dir);
  const now = opts.now ?? Date.now();
  const kept: EntryFile[] = [];
  const users = liveCacheUsers(dir);
  if (users.length && !opts.dryRun) throw inUseError(dir, users, 0);
  const out: PruneResult = { removed: 0, removed_disk: 0, kept: 0, kept_disk: 0, temps_removed: 0, in_use: users };
  const drop = (f: EntryFile): void => {
    if (!opts.dryRun) {
      const live = liveCacheUsers(dir);
      if (live.length) throw inUseError(dir, live, out.removed);
    }
    if (opts.dryRun || store.remove(f.path)) {
      out.removed++;
      out.removed_disk += f.disk;
    }
  };
  for (const f of store.walk({ temps: true })) {
    if (f.temp) {
      if (now - f.mtimeMs > STALE_TEMP_MS && (opts.dryRun || store.remove(f.path))) out.temps_removed++;
      continue;
    }
    if (opts.olderThanMs !== undefined && now - f.mtimeMs > opts.olderThanMs) drop(f);
    else kept.push(f);
  }
  let total = kept.reduce((a, f) => a + f.disk, 0);
  if (opts.maxBytes !== undefined && total > opts.maxBytes) {
    kept.sort((a, b) => a.mtimeMs - b.mtimeMs);
    let i = 0;
    while (total > opts.maxBytes && i < kept.length) {
      const f = kept[i++]!;
      drop(f);
      total -= f.disk;
    }
    kept.splice(0, i);
  }
  out.kept = kept.length;
  out.kept_disk = total;
  return out;
}
