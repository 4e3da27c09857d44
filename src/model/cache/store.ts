/**
 * The cache's storage: one JSON file per entry in 256 sharded folders, `<dir>/v1/<2 hex>/<sha256>.json`.
 *
 * Chosen on measurement (scripts/bench-cache.mjs, docs/performance.md), against the two
 * embedded stores from npm that install on Node 20 without a compiler: `lmdb` (a native addon shipped
 * prebuilt in its package) and `cacache` (pure JS, npm's own cache). With 100,000 entries a bare read of a
 * file is ~10 µs with a warm page cache (90,000–100,000/s; 8,000–18,000/s cold), a full lookup with its key
 * 16 µs; LMDB reads 94,000–190,000/s (about 2× faster, and 107 MB on disk against the files' 391 MB),
 * cacache 1,600–3,500/s (and 1.2 GB). A run makes one lookup per model call, and a model call costs
 * milliseconds to seconds, so either file or LMDB lookups are noise. Files won on everything else: no
 * dependency and no native addon (lmdb's install script and binary, msgpackr); several processes read and
 * write at once with no lock (write a temp file, rename it over the entry: a reader sees the old entry, the
 * new one or none, never a torn one); one damaged file costs one entry, not the store; prune frees space at
 * once (LMDB's file never shrinks without a compacting copy); entries are plain JSON a person can read.
 *
 * Each entry carries `sum`, the SHA-256 of its content (the entry's JSON without `sum`), checked on every read:
 * an entry edited after it was written is corrupt (a miss; an error in replay). An entry written before
 * checksums existed has none: it is read as valid, and a `rw` hit writes it again with its checksum.
 *
 * An entry's mtime is its last use (written, or read in `rw` mode; marked at most once an hour, so a hit
 * costs no extra system call), which is what `prune` goes by.
 */
import {
  closeSync,
  fstatSync,
  futimesSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { redactText } from '../../util/redact.ts';
import { CacheEntrySchema } from '../../runfiles/cache-entry.ts';
import { runFileProblem } from '../../runfiles/parse.ts';
import type { SCHEMA_VERSION } from '../../runfiles/version.ts';
import type { EntryKind } from './key.ts';
import { parseJsonLines } from '../../util/jsonl.ts';

export const STORE_VERSION = 'v1';
/** The run log `skillopt cache stats` reads ("hit rate of recent runs"). */
export const STATS_FILE = 'stats.jsonl';
/** The run log is cut back to its last STATS_KEEP lines once it is larger than this. */
const STATS_MAX_BYTES = 256 * 1024;
const STATS_KEEP = 500;
/** A read in `rw` mode marks the entry used (its mtime) when the mark is older than this. */
const USE_MARK_MS = 60 * 60 * 1000;

/** One entry as stored. */
export interface StoredEntry {
  /** Absent in entries written before run files carried it (they read as 1). */
  schema_version?: typeof SCHEMA_VERSION;
  v: 1;
  key: string;
  kind: EntryKind;
  role: string;
  stage: string;
  created: string;
  value: unknown;
  /** SHA-256 (hex) of the entry's JSON without this field; absent in entries written before checksums. */
  sum?: string;
}

/** `legacy`: the entry has no checksum yet (written by an older version). */
export type ReadResult = { entry: StoredEntry; legacy?: true } | { corrupt: string } | null;

const checksum = (json: string): string => createHash('sha256').update(json).digest('hex');

/** The file text of an entry: its redacted JSON, with `sum` the checksum of that JSON (without `sum`). */
function sealed(entry: StoredEntry): string {
  const { sum: _old, ...content } = entry;
  // parsed back so the checksum is of exactly what a reader re-serializes
  const json = JSON.stringify(JSON.parse(redactText(JSON.stringify(content))));
  return `${json.slice(0, -1)},"sum":"${checksum(json)}"}`;
}

/** An entry file found by a walk. */
export interface EntryFile {
  path: string;
  /** Bytes of data. */
  size: number;
  /** Bytes on disk (allocated blocks). */
  disk: number;
  mtimeMs: number;
}

let tmpCounter = 0;
const tmpTag = `${process.pid}.${threadId}.${randomBytes(4).toString('hex')}`;

export class FileStore {
  private readonly root: string;
  private readonly shards = new Set<string>();

  constructor(readonly dir: string) {
    this.root = join(dir, STORE_VERSION);
  }

  pathOf(key: string): string {
    return join(this.root, key.slice(0, 2), `${key}.json`);
  }

  /**
   * The entry of `key`, `{ corrupt }` when its file is unreadable or not an entry of that key and kind, null
   * when absent. `markUsed`: set its mtime to now (for prune's least-recently-used order) if older than an hour.
   * One open, fstat, read, close — what readFileSync does — so the mtime comes for free.
   */
  read(key: string, kind: EntryKind, opts: { markUsed?: boolean } = {}): ReadResult {
    let text: string;
    let fd: number | undefined;
    try {
      fd = openSync(this.pathOf(key), 'r');
      const st = fstatSync(fd);
      const buf = Buffer.allocUnsafe(st.size);
      let off = 0;
      while (off < st.size) {
        const n = readSync(fd, buf, off, st.size - off, off);
        if (n === 0) break;
        off += n;
      }
      text = buf.toString('utf8', 0, off);
      if (opts.markUsed && Date.now() - st.mtimeMs > USE_MARK_MS) {
        try {
          const now = new Date();
          futimesSync(fd, now, now);
        } catch {
          // not ours to mark (a restored read-only artifact): prune then goes by its write time
        }
      }
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      return { corrupt: (e as Error).message };
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    let entry: Partial<StoredEntry>;
    try {
      entry = JSON.parse(text) as Partial<StoredEntry>;
    } catch (e) {
      return { corrupt: `not JSON (${(e as Error).message})` };
    }
    const problem = runFileProblem(CacheEntrySchema, entry);
    if (problem) return { corrupt: `not a cache entry this skillopt reads (${problem})` };
    if (entry.key !== key || entry.kind !== kind) return { corrupt: 'not an entry of this key' };
    if (!('sum' in entry)) return { entry: entry as StoredEntry, legacy: true };
    const { sum, ...content } = entry;
    if (typeof sum !== 'string' || checksum(JSON.stringify(content)) !== sum) {
      return { corrupt: 'its checksum does not match its content: the entry was changed after it was written' };
    }
    return { entry: entry as StoredEntry };
  }

  /**
   * Write an entry atomically (temp file + rename); redacted like every file skillopt writes, and its
   * checksum computed over what is written (after redaction, so a read finds it whole).
   */
  write(entry: StoredEntry): void {
    const shard = join(this.root, entry.key.slice(0, 2));
    if (!this.shards.has(shard)) {
      mkdirSync(shard, { recursive: true });
      this.shards.add(shard);
    }
    const path = join(shard, `${entry.key}.json`);
    const tmp = join(shard, `.${entry.key}.${tmpTag}.${++tmpCounter}.tmp`);
    try {
      writeFileSync(tmp, sealed(entry));
      renameSync(tmp, path);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
  }

  /** Every entry file (and, with `temps`, leftover temp files of killed writers). */
  *walk(opts: { temps?: boolean } = {}): Generator<EntryFile & { temp: boolean }> {
    let shards: string[];
    try {
      shards = readdirSync(this.root);
    } catch {
      return;
    }
    for (const shard of shards) {
      const sdir = join(this.root, shard);
      let names: string[];
      try {
        names = readdirSync(sdir);
      } catch {
        continue;
      }
      for (const name of names) {
        const temp = name.startsWith('.') && name.endsWith('.tmp');
        if (!temp && !name.endsWith('.json')) continue;
        if (temp && !opts.temps) continue;
        const path = join(sdir, name);
        try {
          const st = statSync(path);
          yield { path, size: st.size, disk: st.blocks * 512, mtimeMs: st.mtimeMs, temp };
        } catch {
          // removed meanwhile
        }
      }
    }
  }

  remove(path: string): boolean {
    try {
      unlinkSync(path);
      return true;
    } catch {
      return false;
    }
  }

  /** Append one line to the run log, cutting it back when it grew large (a lost line under a race is harmless). */
  appendRun(record: Record<string, unknown>): void {
    mkdirSync(this.dir, { recursive: true });
    const file = join(this.dir, STATS_FILE);
    appendFileSync(file, `${redactText(JSON.stringify(record))}\n`);
    try {
      if (statSync(file).size <= STATS_MAX_BYTES) return;
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim());
      const tmp = `${file}.${tmpTag}.${++tmpCounter}.tmp`;
      writeFileSync(tmp, `${lines.slice(-STATS_KEEP).join('\n')}\n`);
      renameSync(tmp, file);
    } catch {
      // another process is cutting it: fine
    }
  }

  /** The run log's records, oldest first (damaged lines skipped). */
  readRuns(): Array<Record<string, unknown>> {
    let text: string;
    try {
      text = readFileSync(join(this.dir, STATS_FILE), 'utf8');
    } catch {
      return [];
    }
    return parseJsonLines<Record<string, unknown>>(text).map((r) => r.value);
  }
}
