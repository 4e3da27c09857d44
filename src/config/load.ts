/**
 * Config loading: YAML files with `_base_` inheritance, the environment layer and `--cfg-options`,
 * validated by the schema. Precedence: defaults < base < child < environment < CLI.
 *
 * - `_base_: <relative path>` (a string) is resolved relative to the file that names it, recursively,
 *   with cycle detection. Mappings are deep-merged (child wins); lists and scalars are replaced.
 * - Per file layer (before merging, as upstream): legacy flat top-level keys are routed to their sections
 *   (`batch_size` → train.batch_size, a string `env:` → env.name; the structured key wins inside one
 *   file), Codex aliases become canonical keys, retired upstream keys are dropped with a warning, and a
 *   null section (`train:` with nothing under it) counts as empty.
 * - Every key path remembers which source set it (file, `--cfg-options` item, environment variable), so a
 *   validation error names the source that set the faulty key: one line, e.g.
 *   `configs/x.yaml: train.num_epoch: unknown key (did you mean train.num_epochs?)`.
 * - When `optimizer.min_learning_rate` was not set anywhere and `learning_rate` is below its default,
 *   the floor follows learning_rate (so `optimizer.learning_rate=1` alone is valid). The same holds for
 *   a floor set by a lower-precedence source than the learning_rate that undercuts it (a base file's
 *   floor, a config file's floor under `--cfg-options optimizer.learning_rate=2`): the more specific
 *   setting wins, as everywhere else, and a warning names both. A floor above a learning_rate set in
 *   the same or a lower-precedence source (one file, or `--cfg-options` setting both) stays an error.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './errors.ts';
import { envOverrides } from './env.ts';
import { CODEX_ALIASES, type Override, getAt, knownTree, routeFlatKey, RETIRED_KEYS, suggest } from './keys.ts';
import { parseCfgOptions } from './overrides.ts';
import { secretWarnings } from './redact.ts';
import { resolveRoleBackends } from './roles.ts';
import { ConfigSchema, SECTIONS, type SkillOptConfig } from './schema.ts';
import { displayPath } from '../util/paths.ts';
import { isPlainObject } from '../util/objects.ts';
import { currentEnv } from '../util/io-context.ts';

export interface LoadConfigOptions {
  /** The config file (its `_base_` chain is followed). Omitted: defaults + environment + CLI only. */
  path?: string;
  /** `--cfg-options` items, `key=value`. */
  cfgOptions?: readonly string[];
  /** Environment for the environment layer (default: the current command's, util/io-context.ts). */
  env?: NodeJS.ProcessEnv;
}

export interface LoadedConfig {
  config: SkillOptConfig;
  /** Absolute paths of the files read, in inheritance order (root base first, the given file last). */
  files: string[];
  /** Non-fatal findings: secrets in YAML, retired keys dropped. */
  warnings: string[];
  /** Dotted key path → the source that set it last (file, `--cfg-options …`, `environment variable …`). */
  sources: Record<string, string>;
  /** The source that set a key (or its closest parent), if any layer set it. */
  sourceOf(dottedPath: string): string | undefined;
}

interface Layer {
  source: string;
  data: Record<string, unknown>;
}

// ── YAML files ────────────────────────────────────────────────────────────────────────────────────

function describeKind(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`;
}

function readYamlFile(file: string, display: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `${display}: cannot read config file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      {
        cause: err,
      },
    );
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    const where = pos ? `:${pos.line}:${pos.col}` : '';
    const reason = (first.message.split('\n')[0] ?? first.message).replace(/ at line \d+, column \d+:?\s*$/, '').trim();
    throw new ConfigError(`${display}${where}: malformed YAML: ${reason}`);
  }
  const data: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (data === null || data === undefined) return {};
  if (!isPlainObject(data)) {
    throw new ConfigError(
      `${display}: top level must be a mapping of sections (${SECTIONS.join(', ')}), got ${describeKind(data)}`,
    );
  }
  return data;
}

/** Normalise one file layer in place (see module doc). */
function normaliseLayer(data: Record<string, unknown>, source: string, warnings: string[]): Record<string, unknown> {
  for (const section of SECTIONS) if (data[section] === null) data[section] = {};
  if (typeof data.env === 'string') data.env = { name: data.env };
  for (const [retired, why] of Object.entries(RETIRED_KEYS)) {
    const path = retired.split('.');
    const parent = getAt(data, path.slice(0, -1));
    const last = path[path.length - 1]!;
    if (isPlainObject(parent) && last in parent) {
      delete parent[last];
      warnings.push(`${source}: ${retired}: ${why}`);
    }
  }
  if (isPlainObject(data.model)) {
    const model = data.model;
    for (const [canonical, aliases] of Object.entries(CODEX_ALIASES)) {
      for (const alias of aliases) {
        if (!(alias in model)) continue;
        if (!(canonical in model)) model[canonical] = model[alias];
        delete model[alias];
      }
    }
  }
  // Legacy flat keys at top level → their section (a structured key in the same file wins).
  for (const key of Object.keys(data)) {
    if ((SECTIONS as readonly string[]).includes(key)) continue;
    const route = routeFlatKey(key);
    if ('retired' in route) {
      warnings.push(`${source}: ${key}: retired upstream key, ignored`);
      delete data[key];
      continue;
    }
    if (!('path' in route)) continue; // left in place: the schema reports it as an unknown key
    const [section, ...rest] = route.path as [string, ...string[]];
    const value = data[key];
    delete data[key];
    if (!isPlainObject(data[section])) {
      if (data[section] !== undefined) continue; // a malformed section is reported by the schema
      data[section] = {};
    }
    const target = data[section] as Record<string, unknown>;
    const leaf = rest.join('.');
    if (!(leaf in target)) target[leaf] = value;
  }
  return data;
}

/** The file chain, root base first. */
function readChain(path: string, warnings: string[]): { files: string[]; layers: Layer[] } {
  const files: string[] = [];
  const layers: Layer[] = [];
  const stack: string[] = [];
  const visit = (file: string, namedBy: { display: string; ref: string } | undefined) => {
    const display = displayPath(file);
    if (stack.includes(file)) {
      const start = stack.indexOf(file);
      const base = dirname(stack[start]!);
      const chain = [...stack.slice(start), file].map((f) => relative(base, f) || f);
      throw new ConfigError(`${displayPath(stack[start]!)}: _base_ cycle: ${chain.join(' -> ')}`);
    }
    if (!existsSync(file) || !statSync(file).isFile()) {
      if (namedBy) throw new ConfigError(`${namedBy.display}: _base_ file not found: ${namedBy.ref}`);
      throw new ConfigError(`${display}: config file not found`);
    }
    stack.push(file);
    const data = readYamlFile(file, display);
    const baseRef = data._base_;
    delete data._base_;
    if (baseRef !== undefined && baseRef !== null) {
      if (typeof baseRef !== 'string' || baseRef.trim() === '') {
        throw new ConfigError(`${display}: _base_: expected a relative path string, got ${describeKind(baseRef)}`);
      }
      visit(resolve(dirname(file), baseRef), { display, ref: baseRef });
    }
    stack.pop();
    warnings.push(...secretWarnings(data, display));
    files.push(file);
    layers.push({ source: display, data: normaliseLayer(data, display, warnings) });
  };
  visit(resolve(path), undefined);
  return { files, layers };
}

// ── merging with provenance ───────────────────────────────────────────────────────────────────────

type Provenance = Map<string, string>;

function clearBelow(prov: Provenance, key: string): void {
  const prefix = `${key}.`;
  for (const k of [...prov.keys()]) if (k.startsWith(prefix)) prov.delete(k);
}

function mergeInto(
  target: Record<string, unknown>,
  layer: Record<string, unknown>,
  source: string,
  prov: Provenance,
  prefix: string[],
): void {
  for (const [k, v] of Object.entries(layer)) {
    const path = [...prefix, k];
    const key = path.join('.');
    if (isPlainObject(v)) {
      if (!isPlainObject(target[k])) {
        target[k] = {};
        clearBelow(prov, key);
        prov.set(key, source);
      }
      mergeInto(target[k] as Record<string, unknown>, v, source, prov, path);
    } else {
      target[k] = structuredClone(v);
      clearBelow(prov, key);
      prov.set(key, source);
    }
  }
}

function overrideToLayer(o: Override): Layer {
  const data: Record<string, unknown> = {};
  let cur = data;
  o.path.forEach((p, i) => {
    if (i === o.path.length - 1) cur[p] = o.value;
    else cur = cur[p] = {} as Record<string, unknown>;
  });
  return { source: o.source, data };
}

function merge(layers: readonly Layer[]): { raw: Record<string, unknown>; prov: Provenance } {
  const raw: Record<string, unknown> = {};
  const prov: Provenance = new Map();
  for (const layer of layers) mergeInto(raw, layer.data, layer.source, prov, []);
  return { raw, prov };
}

function lookup(prov: Provenance, path: readonly PropertyKey[]): string | undefined {
  for (let i = path.length; i > 0; i--) {
    const hit = prov.get(path.slice(0, i).map(String).join('.'));
    if (hit !== undefined) return hit;
  }
  return undefined;
}

// ── error formatting ──────────────────────────────────────────────────────────────────────────────

function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

const EXPECTED: Readonly<Record<string, string>> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'a boolean (true/false)',
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
  null: 'null',
};

type Issue = z.core.$ZodIssue;

function expectedOf(issue: Issue): string[] {
  if (issue.code === 'invalid_type') return [EXPECTED[issue.expected] ?? issue.expected];
  if (issue.code === 'invalid_union') return issue.errors.flatMap((errs) => errs.flatMap((e) => expectedOf(e)));
  return [];
}

function joinOr(items: string[]): string {
  const uniq = [...new Set(items)];
  return uniq.length <= 1
    ? (uniq[0] ?? 'a valid value')
    : `${uniq.slice(0, -1).join(', ')} or ${uniq[uniq.length - 1]}`;
}

function describeIssue(issue: Issue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
    case 'invalid_union': {
      const expected = expectedOf(issue);
      // Nullable keys (their default is null) also accept null.
      if (getAt(knownTree(), issue.path) === null && issue.path.length > 0) expected.push('null');
      return `expected ${joinOr(expected)}, got ${describeValue(value)}`;
    }
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => (v === '' ? '""' : String(v))).join(', ')}, got ${describeValue(value)}`;
    case 'too_small': {
      if (issue.origin === 'array') return `must have at least ${issue.minimum} item(s)`;
      if (issue.origin === 'string')
        return `must not be shorter than ${issue.minimum} character(s), got ${describeValue(value)}`;
      return `must be ${issue.inclusive ? '>=' : '>'} ${issue.minimum}, got ${describeValue(value)}`;
    }
    case 'too_big':
      return `must be ${issue.inclusive ? '<=' : '<'} ${issue.maximum}, got ${describeValue(value)}`;
    case 'invalid_format':
      return `${issue.message}, got ${describeValue(value)}`;
    default:
      return issue.message;
  }
}

function formatError(issues: readonly Issue[], raw: unknown, prov: Provenance, fallback: string): string {
  const issue = issues[0]!;
  const more = issues.length > 1 ? ` (+${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  if (issue.code === 'unrecognized_keys') {
    const path = [...issue.path.map(String), issue.keys[0]!];
    const src = lookup(prov, path) ?? fallback;
    const s = suggest(path);
    const others = issue.keys.length > 1 ? ` (also unknown: ${issue.keys.slice(1).join(', ')})` : '';
    return `${src}: ${path.join('.')}: unknown key${s ? ` (did you mean ${s}?)` : ''}${others}${more}`;
  }
  const src = lookup(prov, issue.path) ?? fallback;
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
  return `${src}: ${where}: ${describeIssue(issue, getAt(raw, issue.path))}${more}`;
}

// ── public API ────────────────────────────────────────────────────────────────────────────────────

function validate(raw: Record<string, unknown>, prov: Provenance, fallback: string): SkillOptConfig {
  const r = ConfigSchema.safeParse(raw);
  if (!r.success) throw new ConfigError(formatError(r.error.issues, raw, prov, fallback));
  return r.data;
}

/** Load, merge and validate a configuration. Throws ConfigError (one line) on any problem. */
export function loadConfig(opts: LoadConfigOptions = {}): LoadedConfig {
  const env = opts.env ?? currentEnv();
  const warnings: string[] = [];
  const chain = opts.path !== undefined ? readChain(opts.path, warnings) : { files: [], layers: [] };
  const cli = parseCfgOptions(opts.cfgOptions ?? []);
  warnings.push(...cli.warnings);
  const fallback = chain.layers.length > 0 ? chain.layers[chain.layers.length - 1]!.source : 'config';

  // Pass 1 (files + CLI): which roles run openai_compat, so that MODEL variables only touch those.
  const roles = () => {
    const parsed = ConfigSchema.safeParse(merge([...chain.layers, ...cli.overrides.map(overrideToLayer)]).raw);
    return parsed.success ? resolveRoleBackends(parsed.data.model) : undefined;
  };

  const layers = [
    ...chain.layers,
    ...envOverrides(env, roles).map(overrideToLayer),
    ...cli.overrides.map(overrideToLayer),
  ];
  const { raw, prov } = merge(layers);
  const lr = getAt(raw, ['optimizer', 'learning_rate']);
  const defaultMin = (knownTree() as unknown as SkillOptConfig).optimizer.min_learning_rate;
  if (typeof lr === 'number' && Number.isInteger(lr) && lr >= 0) {
    const min = getAt(raw, ['optimizer', 'min_learning_rate']);
    const minSource = prov.get('optimizer.min_learning_rate');
    const lrSource = prov.get('optimizer.learning_rate');
    // Precedence groups: each file of the _base_ chain (base first), then the environment, then --cfg-options.
    const rank = (source: string | undefined): number => {
      const file = chain.layers.findIndex((l) => l.source === source);
      if (file >= 0) return file;
      return source?.startsWith('--cfg-options ') ? chain.layers.length + 1 : chain.layers.length;
    };
    if (minSource === undefined) {
      if (lr < defaultMin) (raw.optimizer as Record<string, unknown>).min_learning_rate = lr;
    } else if (typeof min === 'number' && min > lr && lrSource !== undefined && rank(lrSource) > rank(minSource)) {
      (raw.optimizer as Record<string, unknown>).min_learning_rate = lr;
      warnings.push(
        `optimizer.min_learning_rate=${min} (${minSource}) is above optimizer.learning_rate=${lr} (${lrSource}); the floor follows learning_rate`,
      );
    }
  }
  const config = validate(raw, prov, fallback);
  const sources = Object.fromEntries(prov);
  return {
    config,
    files: chain.files,
    warnings,
    sources,
    sourceOf: (dotted: string) => lookup(prov, dotted.split('.')),
  };
}

/** Validate an in-memory config object (e.g. from a test); `source` names it in errors. */
export function parseConfig(data: unknown, source = 'config'): SkillOptConfig {
  if (!isPlainObject(data)) throw new ConfigError(`${source}: top level must be a mapping, got ${describeKind(data)}`);
  const { raw, prov } = merge([{ source, data: normaliseLayer(structuredClone(data), source, []) }]);
  return validate(raw, prov, source);
}
