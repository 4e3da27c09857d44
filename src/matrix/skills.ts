/**
 * The skills of a matrix run (docs/matrix.md): `--skills none,seed,PATH,…`. `none` is the bare model (no
 * skill), `seed` each suite's own skill (the default), any other item a skill file. Each gets a label, the
 * second part of its cells' folder names, that depends on the skill alone (so adding a skill to a rerun
 * renames no cell): `none`, `seed`, or the file's path below the working directory without its extension,
 * with every character a folder name should not hold made `-` (a file outside it: its name and 8 hex digits of
 * its path's hash). `NAME=PATH` names a file's cells itself (`best=outputs/run/best_skill.md`): a label that
 * stays the same wherever the file is.
 */
import { createHash } from 'node:crypto';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import { SkillOptError } from '../util/errors.ts';
import type { MatrixSkillEntry } from '../runfiles/index.ts';

export interface MatrixSkill {
  label: string;
  kind: 'none' | 'seed' | 'file';
  /** The file (absolute); null for `none` and `seed`. */
  path: string | null;
  /** The file's text; `''` for `none`; null for `seed` (each suite's own). */
  text: string | null;
}

export const NO_SKILL_ITEM = 'none';
export const SEED_SKILL_ITEM = 'seed';

/** A path as shown and labelled: relative to the working directory when below it. */
function shownPath(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
}

/** `NAME=PATH`: a label given with the file (letters, digits, `.`, `_`, `-`; not `none` or `seed`). */
const NAMED = /^([A-Za-z0-9][A-Za-z0-9._-]*)=(.+)$/;

const slug = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '');

/** The label of a skill file (see the module comment); a file outside the working directory: its name and a hash of its path. */
export function skillLabel(path: string): string {
  const abs = resolve(path);
  const shown = shownPath(abs);
  const label =
    shown === abs
      ? `${slug(basename(abs).replace(/\.[A-Za-z0-9]+$/, ''))}-${createHash('sha256').update(abs).digest('hex').slice(0, 8)}`
      : slug(shown.replace(/\.[A-Za-z0-9]+$/, ''));
  return label === NO_SKILL_ITEM || label === SEED_SKILL_ITEM || label === '' ? `file-${label || 'skill'}` : label;
}

/**
 * The items of `--skills` (comma-separated, repeatable), each read with `read` (a file's checks are the
 * command's own); none twice, and no two files with one label. Absent: the suites' own skill alone.
 */
export function matrixSkills(
  values: readonly string[] | undefined,
  read: (path: string) => { path: string; text: string },
): MatrixSkill[] {
  const items = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (values !== undefined && items.length === 0)
    throw new SkillOptError('--skills needs at least one item: none, seed or a skill file');
  const skills = (items.length > 0 ? items : [SEED_SKILL_ITEM]).map((item): MatrixSkill => {
    if (item === NO_SKILL_ITEM) return { label: NO_SKILL_ITEM, kind: 'none', path: null, text: '' };
    if (item === SEED_SKILL_ITEM) return { label: SEED_SKILL_ITEM, kind: 'seed', path: null, text: null };
    const named = NAMED.exec(item);
    if (named && (named[1] === NO_SKILL_ITEM || named[1] === SEED_SKILL_ITEM))
      throw new SkillOptError(`--skills ${item}: ${named[1]} names no file; choose another name for it`);
    const file = read(named ? named[2]! : item);
    return { label: named ? named[1]! : skillLabel(file.path), kind: 'file', path: file.path, text: file.text };
  });
  for (const [i, a] of skills.entries()) {
    const b = skills.slice(i + 1).find((x) => x.label === a.label);
    if (!b) continue;
    throw new SkillOptError(
      a.path === b.path
        ? `--skills names ${a.path === null ? a.label : shownPath(a.path)} twice`
        : `--skills ${shownPath(a.path!)} and ${shownPath(b.path!)} would share the cell folder name ${a.label}: name one (NAME=PATH)`,
    );
  }
  return skills;
}

/** A skill as matrix-run.json lists it. */
export function skillEntry(skill: MatrixSkill): MatrixSkillEntry {
  return {
    label: skill.label,
    kind: skill.kind,
    path: skill.path === null ? null : shownPath(skill.path),
    sha256: skill.text === null || skill.kind !== 'file' ? null : createHash('sha256').update(skill.text).digest('hex'),
  };
}
