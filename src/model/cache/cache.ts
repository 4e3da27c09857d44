/**
 * The model-call cache (docs/cache.md): one per process that makes model calls (the session host, which
 * serves every worker thread through the model gateway and the optimizer's own client; a worker of a
 * `forks` pool opens its own). The model client asks it before a request and fills it after a success.
 *
 * Modes: `rw` looks up and stores; `ro` looks up and never writes (CI jobs that must not grow a restored
 * cache); `replay` looks up and never sends a request: a miss is a CacheMissError naming the role and stage
 * (the suite adds the case), exit 2; `off` opens no cache at all (the client then does no extra work).
 *
 * Errors are never stored (only a call that returned a usable reply is); a corrupt entry (unreadable, or its
 * checksum does not match its content: see store.ts) is a miss with a warning, never a crash, and in replay
 * an error naming the entry; an entry without a checksum (an older version's) gains one on a `rw` hit; a failing write (full disk, read-only folder) is a warning once, and the run goes on.
 */
import { resolve } from 'node:path';
import type { CacheMode, CacheSettings } from './settings.ts';
import { SCHEMA_VERSION } from '../../runfiles/version.ts';
import { SkillOptError } from '../../util/errors.ts';
import { displayPath } from '../../util/paths.ts';
import type { RoleConfig } from '../types.ts';
import {
  cacheKey,
  endpointIdentity,
  endpointLabel,
  simKnobs,
  simKnobsOf,
  type EntryKind,
  type SimKnobs,
} from './key.ts';
import { FileStore, type StoredEntry } from './store.ts';
import { registerCacheUser } from './users.ts';
import type { Held } from '../../util/lock.ts';
import { commandArgv, currentIo } from '../../util/io-context.ts';

/** Hits and misses of some lookups. */
export interface CacheTally {
  hits: number;
  misses: number;
}

/** What a summary reports: `cache: { hits, misses }` overall and per role (and, for the optimizer, per stage). */
export interface CacheSummary extends CacheTally {
  mode: CacheMode;
  by_role: Record<string, CacheTally>;
  by_stage?: Record<string, CacheTally>;
  /** Entries written by this run (rw). */
  writes?: number;
}

/** A miss under `--model-cache replay`: no request was sent. The name travels through the model gateway. */
export class CacheMissError extends SkillOptError {
  readonly role: string;
  readonly stage: string;

  constructor(init: {
    role: string;
    stage: string;
    endpoint: string;
    dir: string;
    corrupt?: { entry: string; why: string };
  }) {
    super(
      `no cached reply for the ${init.role} call (stage ${init.stage}, ${init.endpoint}) in ${displayPath(init.dir)}` +
        `${init.corrupt ? ` (its entry ${displayPath(init.corrupt.entry)} is corrupt: ${init.corrupt.why})` : ''}; --model-cache replay sends no request`,
      { exitCode: 2 },
    );
    this.role = init.role;
    this.stage = init.stage;
  }
}

export const CACHE_MISS_ERROR = 'CacheMissError';

/** Whether `e` is a replay miss, also after crossing the model gateway (which keeps an error's name). */
export function isCacheMiss(e: unknown): e is Error {
  return e instanceof Error && e.name === CACHE_MISS_ERROR;
}

/** A replay run stopping on the cases the cache could not answer (the rollouts' one line, exit 2). */
export class ReplayStop extends SkillOptError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
    this.name = 'ReplayStop';
  }
}

/** Whether `e` stops a replay run on a miss: a rollout's cases, or one call (an optimizer stage) with no cached reply. */
export function isReplayStop(e: unknown): boolean {
  return e instanceof ReplayStop || isCacheMiss(e);
}

/** The one line a replay miss of a case becomes (the verdict's reason, eval's and the optimizer's error). */
export function replayMissLine(
  miss: { suite: string; id: string; error: string | null },
  count?: { misses: number; of: number },
  opts: { next?: boolean } = {},
): string {
  const n = count && count.misses > 1 ? `${count.misses} of ${count.of} cases have no cached reply; first: ` : '';
  const next = opts.next ? ' — fill the cache first with --model-cache rw' : '';
  return `--model-cache replay: ${n}case ${miss.suite}/${miss.id}: ${miss.error ?? 'no cached reply'}${next}`;
}

/** The next step after a replay miss. */
export const REPLAY_MISS_NEXT =
  'fill the cache first: run the same command with --model-cache rw (or ro, which calls the endpoint only for what is missing and writes nothing)';

/** The role MCP records are counted under (`by_role.mcp`). */
const MCP_ROLE = { role: 'mcp' } as const;

/** Mutable counters per role, then stage. */
type Counters = Map<string, Map<string, CacheTally & { writes: number }>>;

export interface ModelCacheOptions {
  dir: string;
  mode: Exclude<CacheMode, 'off'>;
  /** The in-process simulated model's knobs (part of its identity). */
  sim: SimKnobs | null;
  /** A simulated model id's knobs when they differ by id (`model.simulated.profiles`); default: `sim` for every id. */
  simOf?: (model: string) => SimKnobs;
  /** Warnings (corrupt entry, failed write), one line each; never a secret. */
  log?: (line: string) => void;
}

export class ModelCache {
  readonly mode: Exclude<CacheMode, 'off'>;
  /** Absolute. */
  readonly dir: string;
  readonly store: FileStore;
  private readonly sim: SimKnobs | null;
  private readonly simOf: ((model: string) => SimKnobs) | undefined;
  private readonly log: (line: string) => void;
  private readonly identities = new WeakMap<RoleConfig, string>();
  private readonly counters: Counters = new Map();
  private readonly warned = new Set<string>();
  private writeFailed = false;
  /** This process's record among the cache's users (`cache prune` leaves a folder in use alone). */
  private readonly user: Held;

  constructor(opts: ModelCacheOptions) {
    this.mode = opts.mode;
    this.dir = resolve(opts.dir);
    this.store = new FileStore(this.dir);
    this.sim = opts.sim;
    this.simOf = opts.simOf;
    this.log = opts.log ?? ((line) => currentIo().stderr.write(`${line}\n`));
    this.user = registerCacheUser(this.dir);
  }

  /** This process no longer uses the cache (also done at exit). Lookups after it still work. */
  close(): void {
    this.user.release();
  }

  /** The key of a request of `role` (see key.ts). */
  key(role: RoleConfig, kind: EntryKind, request: unknown): string {
    let id = this.identities.get(role);
    if (id === undefined) this.identities.set(role, (id = JSON.stringify(endpointIdentity(role, this.simKnobs(role)))));
    return cacheKey(id, kind, request);
  }

  /**
   * The stored value of `key`, decoded; undefined on a miss. Counted as a hit or a miss of `role`/`stage`.
   * `decode` returns undefined for a value it cannot use: that is a corrupt entry, a miss with a warning.
   */
  get<T>(
    role: { role: string },
    stage: string,
    kind: EntryKind,
    key: string,
    decode: (value: unknown) => T | undefined,
  ): { value: T } | { miss: true; corrupt?: string } {
    const read = this.store.read(key, kind, { markUsed: this.mode === 'rw' });
    let corrupt: string | undefined;
    if (read && 'entry' in read) {
      const value = decode(read.entry.value);
      if (value !== undefined) {
        this.count(role.role, stage).hits++;
        // written before checksums: the same entry again, now with its checksum (a failed write costs nothing)
        if (read.legacy && this.mode === 'rw') this.tryWrite(read.entry);
        return { value };
      }
      corrupt = 'its value does not decode';
    } else if (read) {
      corrupt = read.corrupt;
    }
    if (corrupt !== undefined)
      this.warnOnce(
        key,
        `warning: model cache: ${displayPath(this.store.pathOf(key))} is corrupt (${corrupt}); treated as a miss${this.mode === 'rw' ? ' and rewritten' : ''}`,
      );
    this.count(role.role, stage).misses++;
    return corrupt !== undefined ? { miss: true, corrupt } : { miss: true };
  }

  /** Store a successful reply (`rw` only). A write that fails is a warning (once), never an error of the call. */
  put(role: { role: string }, stage: string, kind: EntryKind, key: string, value: unknown): void {
    if (this.mode !== 'rw') return;
    if (
      this.tryWrite({
        schema_version: SCHEMA_VERSION,
        v: 1,
        key,
        kind,
        role: role.role,
        stage,
        created: new Date().toISOString(),
        value,
      })
    )
      this.count(role.role, stage).writes++;
  }

  /**
   * A recorded MCP response (docs/cache.md#mcp-servers), counted under role `mcp` and its stage (the
   * server); undefined on a miss. `corrupt`: why an entry that exists could not be used.
   */
  recall(stage: string, key: string): { value: Record<string, unknown> } | { miss: true; corrupt?: string } {
    return this.get(MCP_ROLE, stage, 'mcp', key, (v) =>
      v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined,
    );
  }

  /** Record an MCP response (`rw` only, like put). */
  record(stage: string, key: string, value: Record<string, unknown>): void {
    this.put(MCP_ROLE, stage, 'mcp', key, value);
  }

  /** The error of a replay miss of `key`; `corrupt`: why its entry could not be used. */
  missError(role: RoleConfig, stage: string, key: string, corrupt?: string): CacheMissError {
    return new CacheMissError({
      role: role.role,
      stage,
      endpoint: endpointLabel(role, this.simKnobs(role)),
      dir: this.dir,
      ...(corrupt ? { corrupt: { entry: this.store.pathOf(key), why: corrupt } } : {}),
    });
  }

  private simKnobs(role: RoleConfig): SimKnobs | null {
    return this.simOf ? this.simOf(role.model) : this.sim;
  }

  private tryWrite(entry: StoredEntry): boolean {
    try {
      this.store.write(entry);
      return true;
    } catch (e) {
      if (!this.writeFailed) {
        this.writeFailed = true;
        this.log(
          `warning: model cache: cannot write to ${displayPath(this.dir)} (${(e as Error).message}); this run's replies are not cached`,
        );
      }
      return false;
    }
  }

  /** Hits and misses so far: overall, by role, by stage. */
  summary(): CacheSummary {
    const byRole: Record<string, CacheTally> = {};
    const byStage: Record<string, CacheTally> = {};
    let hits = 0;
    let misses = 0;
    let writes = 0;
    for (const [role, stages] of this.counters) {
      const r = (byRole[role] ??= { hits: 0, misses: 0 });
      for (const [stage, c] of stages) {
        const s = (byStage[stage] ??= { hits: 0, misses: 0 });
        r.hits += c.hits;
        r.misses += c.misses;
        s.hits += c.hits;
        s.misses += c.misses;
        hits += c.hits;
        misses += c.misses;
        writes += c.writes;
      }
    }
    return { mode: this.mode, hits, misses, by_role: byRole, by_stage: byStage, writes };
  }

  /** Append this process's counts to the run log (`skillopt cache stats`); nothing when it made no lookup. */
  recordRun(command: string): void {
    const s = this.summary();
    if (s.hits + s.misses === 0) return;
    try {
      this.store.appendRun({
        time: new Date().toISOString(),
        command,
        mode: s.mode,
        hits: s.hits,
        misses: s.misses,
        writes: s.writes,
        by_role: s.by_role,
      });
    } catch {
      // the run log is information only
    }
  }

  private count(role: string, stage: string): CacheTally & { writes: number } {
    let stages = this.counters.get(role);
    if (!stages) this.counters.set(role, (stages = new Map()));
    let c = stages.get(stage);
    if (!c) stages.set(stage, (c = { hits: 0, misses: 0, writes: 0 }));
    return c;
  }

  private warnOnce(key: string, line: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.log(line);
  }
}

/** The cache a config asks for (`cache.mode`, `cache.dir`), or null when it is off. */
export function openModelCache(config: CacheSettings, opts: { log?: (line: string) => void } = {}): ModelCache | null {
  const mode = config.cache.mode;
  if (mode === 'off') return null;
  return new ModelCache({
    dir: config.cache.dir,
    mode,
    sim: simKnobs(config.model.simulated),
    simOf: (model) => simKnobsOf(config.model.simulated, model),
    ...(opts.log ? { log: opts.log } : {}),
  });
}

/** How a run names itself in the run log: `test`, `test --optimize`, `eval`, `train`, or `vitest`. */
export function runLabel(args: readonly string[] | null = commandArgv()): string {
  if (!args) return 'vitest';
  const cmd = args[0] ?? '';
  return cmd === 'test' && args.includes('--optimize') ? 'test --optimize' : cmd;
}

/** An all-zero summary for a run whose cache is off. */
export function offSummary(): CacheSummary {
  return { mode: 'off', hits: 0, misses: 0, by_role: {} };
}
