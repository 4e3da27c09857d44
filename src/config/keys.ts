/**
 * Key-path helpers shared by the loader, the overrides and the env layer: the known key tree (from the
 * schema defaults), the upstream flat → dotted key map, retired keys, and "did you mean" suggestions.
 */
import { SECTIONS, defaultConfig } from './schema.ts';
import { closest } from '../util/closest.ts';
import { isPlainObject } from '../util/objects.ts';

/** One value set by one source (a `--cfg-options` item, an environment variable, …). */
export interface Override {
  path: string[];
  value: unknown;
  /** Human-readable origin used in error messages, e.g. `--cfg-options train.batch_size=abc`. */
  source: string;
}

let tree: Record<string, unknown> | undefined;
/** The default configuration, used as the map of known keys and their types (do not mutate). */
export function knownTree(): Record<string, unknown> {
  tree ??= defaultConfig() as unknown as Record<string, unknown>;
  return tree;
}

/** Value at a key path, or undefined. */
export function getAt(obj: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = obj;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

/** Upstream's other names for the codex keys of `model` (in a file's model section, the first one set wins). */
export const CODEX_ALIASES: Readonly<Record<string, readonly string[]>> = {
  codex_exec_path: ['codex_path', 'codex_cli_bin', 'codex_bin'],
  codex_exec_sandbox: ['sandbox', 'codex_sandbox'],
};

/** Upstream SkillOpt's renames and aliases; every other section key whose name is unique maps to itself. */
const FLAT_RENAMES: Readonly<Record<string, string>> = {
  model_backend: 'model.backend',
  optimizer_model: 'model.optimizer',
  target_model: 'model.target',
  judge_model: 'model.judge',
  edit_budget: 'optimizer.learning_rate',
  min_edit_budget: 'optimizer.min_learning_rate',
  env: 'env.name',
  ...Object.fromEntries(
    Object.entries(CODEX_ALIASES).flatMap(([canonical, aliases]) => aliases.map((a) => [a, `model.${canonical}`])),
  ),
};

/** Upstream keys that are accepted and dropped with a warning. */
export const RETIRED_KEYS: Readonly<Record<string, string>> = {
  'gradient.max_analyst_rounds': 'retired upstream (analysts run one round); ignored',
  human_feedback: 'upstream human-review gate is not part of skillopt; ignored',
};
const RETIRED_FLAT: Readonly<Record<string, string>> = { max_analyst_rounds: 'gradient.max_analyst_rounds' };

let flatMap: Map<string, string[] | 'ambiguous'> | undefined;
/** flat (undotted) key → dotted path; `'ambiguous'` when the name exists in several sections. */
export function flatKeyMap(): Map<string, string[] | 'ambiguous'> {
  if (flatMap) return flatMap;
  const m = new Map<string, string[] | 'ambiguous'>();
  const t = knownTree();
  for (const section of SECTIONS) {
    for (const key of Object.keys(t[section] as object)) {
      m.set(key, m.has(key) ? 'ambiguous' : [section, key]);
    }
  }
  for (const [flat, dotted] of Object.entries(FLAT_RENAMES)) m.set(flat, dotted.split('.'));
  flatMap = m;
  return m;
}

/** Sections a flat name is ambiguous between, for the error message. */
function sectionsHaving(key: string): string[] {
  const t = knownTree();
  return SECTIONS.filter((s) => key in (t[s] as object)).map((s) => `${s}.${key}`);
}

export type FlatRoute = { path: string[] } | { retired: string } | { error: string };

/**
 * Route an undotted legacy key to its dotted path. `raw`, the value given, shapes the example when the key
 * is a section's name (`model=1`): a section holds keys, not a value.
 */
export function routeFlatKey(key: string, raw = 'VALUE'): FlatRoute {
  if (RETIRED_FLAT[key]) return { retired: RETIRED_FLAT[key] };
  const hit = flatKeyMap().get(key);
  if (hit === 'ambiguous') return { error: `${key}: ambiguous key, use one of ${sectionsHaving(key).join(', ')}` };
  if (hit) return { path: [...hit] };
  if ((SECTIONS as readonly string[]).includes(key)) {
    const first = Object.keys(knownTree()[key] as object)[0]!;
    return { error: `${key} is a section, not a key: set one of its keys, such as ${key}.${first}=${raw}` };
  }
  const s = suggest([key]);
  return { error: `${key}: unknown key${s ? ` (did you mean ${s}?)` : ''}` };
}

/** The retired-key reason when `path` (dotted) is retired. */
export function retiredReason(path: readonly string[]): string | undefined {
  return RETIRED_KEYS[path.join('.')];
}

/** "did you mean" for an unknown key path: a sibling with a close name, or the same name elsewhere. */
export function suggest(path: readonly string[]): string | undefined {
  if (path.length === 0) return undefined;
  const name = path[path.length - 1]!;
  const parentPath = path.slice(0, -1);
  const parent = getAt(knownTree(), parentPath);
  const fmt = (p: readonly string[]) => p.join('.');
  // An upstream flat name used inside a section (model.optimizer_model) or at top level.
  const routed = flatKeyMap().get(name);
  if (routed && routed !== 'ambiguous' && fmt(routed) !== fmt(path)) return fmt(routed);
  if (isPlainObject(parent)) {
    const sib = closest(name, Object.keys(parent));
    if (sib) return fmt([...parentPath, sib]);
  }
  if (parentPath.length <= 1) {
    // The key exists (or nearly) in another section, or at top level a flat name is close.
    const t = knownTree();
    const all: string[] = [];
    for (const s of SECTIONS) for (const k of Object.keys(t[s] as object)) all.push(`${s}.${k}`);
    const exact = all.filter((p) => p.endsWith(`.${name}`));
    if (exact.length === 1) return exact[0];
    const byName = closest(
      name,
      all.map((p) => p.split('.')[1]!),
    );
    if (byName) {
      const hits = all.filter((p) => p.endsWith(`.${byName}`));
      if (hits.length === 1) return hits[0];
    }
  }
  return undefined;
}
