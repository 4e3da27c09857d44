/**
 * What a run directory holds (docs/output-files.md): `<dir>/run.json` records a fingerprint of everything that
 * determines the run's results, and a later run into the same folder resumes (or, for `skillopt test`,
 * overwrites) only when its own fingerprint matches. Otherwise it stops before writing anything, with one
 * line naming the first difference:
 *
 *   outputs/x: this folder holds a run with optimizer.learning_rate=4; this run has optimizer.learning_rate=2 —
 *   use a new env.out_root (or delete the folder) to start over
 *
 * The fingerprint is a flat, ordered map of named values:
 * - `run` (optimize = train / test --optimize, eval, test), `suite`, `dataset` (SHA-256 of the dataset
 *   file's bytes; for tasks written inline in the suite file, of that file), `skill` (SHA-256 of the skill
 *   text: the initial skill of an optimize run, the skill under eval; `seed` for a test of the suites'
 *   own seed skills), `split` (eval / test: which split);
 * - every key of the resolved config (dotted paths) except the ALLOW-LIST below, secret-named keys
 *   (credentials are not an identity), and, for eval and test, the optimizer-only sections
 *   (`train`, `gradient`, `optimizer`): a new config key is outcome-relevant by default;
 * - the identity of each role's model: backend, model name, base URL with its userinfo stripped (the
 *   simulated model's URL is a fresh port each run: its knobs `model.simulated.*` are config keys);
 * - for test: the Vitest arguments that select cases (file filters, -t, --shard, --project, --merge-reports;
 *   reporters and output files are not part of it).
 *
 * What `skillopt test` does not know before it runs (the dataset's content, the seed skills' text) is not
 * part of its fingerprint: it reuses nothing, so it cannot mix them up.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isSecretKey } from '../util/redact.ts';
import { defaultConfig, type SkillOptConfig } from '../config/schema.ts';
import type { RoleConfig } from '../model/types.ts';
import { buildRunFile, parseRunFile } from '../runfiles/parse.ts';
import { RunRecordSchema, type RunRecordFile } from '../runfiles/run-record.ts';
import { writeJsonAtomic } from '../util/atomic.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { VERSION } from '../version.ts';
import { LOCK_FILE } from '../util/lock.ts';

export const RUN_FILE = 'run.json';
export const RUN_FILE_VERSION = 1;

export type RunKind = 'optimize' | 'eval' | 'test';

/**
 * Config keys that may differ when a run resumes: they extend or bound the run (epochs, budgets,
 * patience, target), or only change how it is executed (workers, concurrency, timeouts, retries, which
 * environment variable holds the key) or where it is written. `*` matches any run of characters.
 */
export const RESUMABLE_KEYS: readonly string[] = [
  'train.num_epochs',
  'train.max_model_calls',
  'train.max_tokens',
  'train.max_cost',
  'train.patience',
  'train.target_pass_rate',
  'train.steps_per_epoch', // informational: always recomputed
  'env.out_root',
  'env.max_cost', // a higher budget completes the same folder
  'env.workers',
  'env.exec_timeout',
  'env.split_output_dir',
  'model.*timeout*',
  'model.*retries*',
  'model.retry_*_delay_s',
  'model.*concurrency*',
  'model.*api_key_env',
  'cache.*', // the model-call cache changes where replies come from, never what they are
  'models.*', // named models act only through --models, which makes them the run's model.* keys
  'model.simulated.latency_scale', // delays the simulated model's replies, never changes them
];

/** Sections an eval or a test never uses (the optimizer's). */
const OPTIMIZER_ONLY_SECTIONS = ['train', 'gradient', 'optimizer'];

/** Names a skillopt run writes: such a folder without run.json holds a run that cannot be checked. */
const RUN_OUTPUTS = new Set([
  'config.json',
  'runtime_state.json',
  'history.json',
  'summary.json',
  'results.jsonl',
  'eval_summary.json',
  'split_manifest.json',
  'usage.json',
  'best_skill.md',
  'predictions',
  'steps',
  'skills',
]);

const globs = RESUMABLE_KEYS.map(
  (k) =>
    new RegExp(
      `^${k
        .split('*')
        .map((p) => p.replace(/[.]/g, '\\.'))
        .join('.*')}$`,
    ),
);

export function isResumableKey(key: string): boolean {
  return globs.some((re) => re.test(key));
}

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

export interface Fingerprint {
  kind: RunKind;
  /** Compared, in this order. */
  entries: Record<string, Json>;
  /** Shown beside a difference (paths of the dataset and the skill); not compared. */
  about: Record<string, string>;
}

export interface FingerprintInput {
  kind: RunKind;
  config: SkillOptConfig;
  roles: { optimizer: RoleConfig; target: RoleConfig; judge: RoleConfig };
  /** From the suite's manifest (optimize, eval). */
  manifest?: { suite: string; dataset: string };
  /** The suite files (for a dataset written inline in the suite file). */
  suiteFiles?: string[];
  /** The skill the results depend on; null = the suites' seed skills (test without --skill). */
  skill: { path: string; text: string } | null;
  /** eval / test: the split selected. */
  split?: string;
  /** test: Vitest's arguments that select which cases run. */
  selection?: Record<string, Json>;
}

export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The dataset's content hash: the file's bytes, else (tasks inline in the suite) the suite file's. */
export function datasetDigest(
  manifest: { suite: string; dataset: string },
  suiteFiles: string[] = [],
): { sha256: string; label: string } {
  const path = resolve(manifest.dataset);
  if (existsSync(path) && statSync(path).isFile())
    return { sha256: sha256(readFileSync(path)), label: manifest.dataset };
  const suiteFile = suiteFiles.find((f) => f.includes(`${manifest.suite}.skill.test`)) ?? suiteFiles[0];
  if (suiteFile && existsSync(suiteFile))
    return { sha256: sha256(readFileSync(suiteFile)), label: `${manifest.dataset} in ${displayPath(suiteFile)}` };
  return { sha256: sha256(manifest.dataset), label: manifest.dataset };
}

/** `scheme://user:pass@host` → `scheme://host`. */
function stripUserinfo(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/i, '$1');
}

function roleIdentity(r: RoleConfig): string {
  if (r.backend === 'simulated') return `simulated ${r.model}`;
  const where = r.azure?.endpoint
    ? `azure ${stripUserinfo(r.azure.endpoint)} (api ${r.azure.apiVersion})`
    : stripUserinfo(r.baseURL);
  return `${r.backend} ${r.model} at ${where}`;
}

function flatten(value: unknown, prefix: string, out: Record<string, Json>): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
    return;
  }
  if (value === undefined) return;
  out[prefix] = JSON.parse(JSON.stringify(value)) as Json;
}

/** Keys compared first, in this order (the rest follow in the config's order). */
const FIRST = [
  'run',
  'suite',
  'dataset',
  'skill',
  'split',
  'env.split_mode',
  'env.split_ratio',
  'env.split_seed',
  'env.split_dir',
  'env.limit',
  'env.data_path',
];

export function runFingerprint(input: FingerprintInput): Fingerprint {
  const entries: Record<string, Json> = { run: input.kind };
  const about: Record<string, string> = {};
  if (input.manifest) {
    entries.suite = input.manifest.suite;
    const d = datasetDigest(input.manifest, input.suiteFiles);
    entries.dataset = `sha256:${d.sha256}`;
    about.dataset = d.label;
  }
  if (input.skill) {
    entries.skill = `sha256:${sha256(input.skill.text)}`;
    about.skill = displayPath(input.skill.path);
  } else {
    entries.skill = 'seed';
    about.skill = 'the seed skill of each suite';
  }
  if (input.split !== undefined) entries.split = input.split;
  const config: Record<string, Json> = {};
  flatten(input.config, '', config);
  for (const [key, value] of Object.entries(config)) {
    if (isResumableKey(key) || isSecretKey(key.slice(key.lastIndexOf('.') + 1))) continue;
    if (input.kind !== 'optimize' && OPTIMIZER_ONLY_SECTIONS.includes(key.slice(0, key.indexOf('.')))) continue;
    entries[key] = typeof value === 'string' ? stripUserinfo(value) : value;
  }
  const roles =
    input.kind === 'optimize' ? (['optimizer', 'target', 'judge'] as const) : (['target', 'judge'] as const);
  for (const role of roles) entries[`${role} model`] = roleIdentity(input.roles[role]);
  for (const [k, v] of Object.entries(input.selection ?? {})) entries[k] = v;
  return { kind: input.kind, entries: ordered(entries), about };
}

function ordered(entries: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const k of FIRST) if (k in entries) out[k] = entries[k]!;
  for (const [k, v] of Object.entries(entries)) if (!(k in out)) out[k] = v;
  return out;
}

export interface Difference {
  key: string;
  held: Json | undefined;
  current: Json | undefined;
}

let defaults: Record<string, Json> | undefined;
function defaultValues(): Record<string, Json> {
  if (!defaults) flatten(defaultConfig(), '', (defaults = {}));
  return defaults;
}

/**
 * The first entry that differs (in the held run's order, then keys only the current run has), or null.
 * A config key the held run's skillopt did not know yet is no difference while it has its default value.
 */
export function firstDifference(held: Record<string, Json>, current: Record<string, Json>): Difference | null {
  const keys = [...new Set([...FIRST, ...Object.keys(held), ...Object.keys(current)])];
  for (const key of keys) {
    const a = held[key];
    const b = current[key];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    if (a === undefined && key in defaultValues() && JSON.stringify(defaultValues()[key]) === JSON.stringify(b))
      continue;
    return { key, held: a, current: b };
  }
  return null;
}

const KIND_LABEL: Record<RunKind, string> = {
  optimize: 'an optimize run (train / test --optimize)',
  eval: 'an eval',
  test: 'a test run',
};

function show(value: Json | undefined, about: string | undefined): string {
  const text =
    value === undefined ? '(unset)' : typeof value === 'string' ? (value === '' ? '""' : value) : JSON.stringify(value);
  const short = typeof value === 'string' && value.startsWith('sha256:') ? `sha256:${value.slice(7, 19)}` : text;
  return about ? `${short} (${about})` : short;
}

export function describeDifference(
  dir: string,
  d: Difference,
  held: { kind?: RunKind; about?: Record<string, string> },
  current: Fingerprint,
): string {
  const head = `${displayPath(dir)}: `;
  const tail = ' — use a new env.out_root (or delete the folder) to start over';
  if (d.key === 'run') {
    return `${head}this folder holds ${KIND_LABEL[d.held as RunKind] ?? `a ${String(d.held)} run`}; this run is ${KIND_LABEL[current.kind]}${tail}`;
  }
  return `${head}this folder holds a run with ${d.key}=${show(d.held, held.about?.[d.key])}; this run has ${d.key}=${show(d.current, current.about[d.key])}${tail}`;
}

/** run.json as read: older runs may lack fields, so every one but `kind` is optional (src/runfiles/run-record.ts). */
export type RunRecord = RunRecordFile;

/** What the folder holds besides run.json and the lock (dotfiles, e.g. temp files, do not count). */
function outputsIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter(
    (n) => n !== RUN_FILE && !n.startsWith('.') && n !== LOCK_FILE && !n.startsWith(`${LOCK_FILE}.`),
  );
}

export class RunDirMismatch extends SkillOptError {}

export function readRunRecord(dir: string): RunRecord | null {
  const file = join(dir, RUN_FILE);
  if (!existsSync(file)) return null;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new RunDirMismatch(
      `${displayPath(file)}: unreadable (${(e as Error).message}) — use a new env.out_root (or delete the folder) to start over`,
    );
  }
  try {
    return parseRunFile(RunRecordSchema, value, displayPath(file));
  } catch (e) {
    throw new RunDirMismatch(`${(e as Error).message} — use a new env.out_root (or delete the folder) to start over`);
  }
}

/**
 * Decide whether this run may use `dir`: 'fresh' (nothing of another run in it) or 'resume' (it holds a
 * run with the same fingerprint). Throws a one-line RunDirMismatch (exit 2) otherwise. Writes nothing.
 */
export function checkRunDir(dir: string, fp: Fingerprint): 'fresh' | 'resume' {
  const outputs = outputsIn(dir);
  const record = readRunRecord(dir);
  if (!record) {
    const theirs = outputs.find((n) => RUN_OUTPUTS.has(n));
    if (theirs) {
      throw new RunDirMismatch(
        `${displayPath(dir)}: this folder holds a run's outputs (${theirs}) but no ${RUN_FILE} to check them against — use a new env.out_root (or delete the folder) to start over`,
      );
    }
    return 'fresh';
  }
  if (outputs.length === 0) return 'fresh'; // a run that stopped before writing anything
  const diff = firstDifference({ run: record.kind, ...(record.fingerprint ?? {}) }, fp.entries);
  if (diff) throw new RunDirMismatch(describeDifference(dir, diff, record, fp));
  return 'resume';
}

/** Record `fp` as the folder's run (atomically), keeping the first run's creation time on a resume. */
export function writeRunRecord(dir: string, fp: Fingerprint, resumed: boolean): void {
  const previous = resumed ? readRunRecord(dir) : null;
  const now = new Date().toISOString();
  const record: Required<Omit<RunRecord, 'schema_version'>> = {
    version: RUN_FILE_VERSION,
    kind: fp.kind,
    skillopt_version: VERSION,
    created_at: previous?.created_at ?? now,
    updated_at: now,
    fingerprint: fp.entries,
    about: fp.about,
    may_differ_on_resume: RESUMABLE_KEYS,
  };
  writeJsonAtomic(join(dir, RUN_FILE), buildRunFile(RunRecordSchema, record, RUN_FILE));
}

/**
 * The one call the commands make once they know what they will run (after the suite's manifest, before
 * writing anything): check the folder against this run's fingerprint, then record it. Returns whether
 * the folder already held this run.
 */
export function claimRunDir(dir: string, input: FingerprintInput): 'fresh' | 'resume' {
  const fp = runFingerprint(input);
  const state = checkRunDir(dir, fp);
  writeRunRecord(dir, fp, state === 'resume');
  return state;
}

/** Vitest options that select which cases a `skillopt test` runs (by their command-line spelling). */
const SELECTING_OPTIONS: Record<string, string> = {
  testNamePattern: '-t',
  shard: '--shard',
  project: '--project',
  exclude: '--exclude',
  mergeReports: '--merge-reports',
  dir: '--dir',
  root: '--root',
};

/** The part of `skillopt test`'s Vitest arguments that decides which cases run (reporters and output files do not). */
export function vitestSelection(filters: string[], options: Record<string, unknown>): Record<string, Json> {
  const out: Record<string, Json> = {};
  if (filters.length) out['test files'] = [...filters];
  for (const [option, flag] of Object.entries(SELECTING_OPTIONS)) {
    const v = options[option];
    if (v !== undefined && v !== null && v !== false) out[flag] = JSON.parse(JSON.stringify(v)) as Json;
  }
  return out;
}
