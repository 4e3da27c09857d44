/**
 * SKILL.md frontmatter (the Agent Skills format, docs/authoring.md): a document
 * that starts with a `---` line, YAML fields, a closing `---` line, then the markdown body.
 *
 * Rules checked (every violation is one line naming the file and the rule):
 * - `name` (required): 1–64 characters; lowercase letters, digits and `-`; no leading or trailing `-`, no
 *   `--`; in a file named `SKILL.md`, equal to its folder's name.
 * - `description` (required): a non-empty string of at most 1,024 characters.
 * - `license` (optional): a string. `compatibility` (optional): a string of at most 500 characters.
 *   `metadata` (optional): a key–value map. `allowed-tools` (optional): a string or a list of strings.
 * - No other top-level field.
 *
 * Which files: the full rules (folder-name match included) apply to a file named `SKILL.md`; any other
 * skill file that starts with frontmatter (`best_skill.md`, a copy elsewhere) gets the same rules except the
 * folder-name match; a file without frontmatter that is not named `SKILL.md` is a plain skill (no rules).
 *
 * The block is protected from the optimizer's edits (src/skill/regions.ts); only description optimization
 * changes it, through `replaceDescription`, which rewrites the description's value and no other byte.
 */
import { basename, dirname, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { clip } from '../util/clip.ts';

export const NAME_MAX = 64;
export const DESCRIPTION_MAX = 1024;
export const COMPATIBILITY_MAX = 500;
export const FRONTMATTER_FIELDS = [
  'name',
  'description',
  'license',
  'compatibility',
  'metadata',
  'allowed-tools',
] as const;

/** A SKILL.md (or skill file) that breaks the format's rules. */
export class SkillFormatError extends SkillOptError {}

export interface SkillFrontmatter {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, unknown>;
  'allowed-tools'?: string | string[];
}

/** Where the frontmatter block sits: `[0, end)` covers both `---` lines (and the newline after the second). */
export interface FrontmatterBlock {
  start: 0;
  end: number;
  /** The YAML between the fences. */
  yaml: string;
  /** Offset of the YAML text inside the document. */
  yamlStart: number;
}

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^(?:---|\.\.\.)[ \t]*$/;

/** The frontmatter block of a document that starts with a `---` line and has a closing `---` line; else null. */
export function frontmatterBlock(text: string): FrontmatterBlock | null {
  const open = OPEN.exec(text);
  if (!open) return null;
  let pos = open[0].length;
  while (pos <= text.length) {
    const nl = text.indexOf('\n', pos);
    const lineEnd = nl === -1 ? text.length : nl;
    const line = text.slice(pos, lineEnd).replace(/\r$/, '');
    if (CLOSE.test(line)) {
      return {
        start: 0,
        end: nl === -1 ? text.length : nl + 1,
        yaml: text.slice(open[0].length, pos),
        yamlStart: open[0].length,
      };
    }
    if (nl === -1) break;
    pos = nl + 1;
  }
  return null;
}

/** Whether the document starts with a frontmatter opening line (complete or not). */
export function startsWithFrontmatter(text: string): boolean {
  return OPEN.test(text) || text === '---';
}

/** The markdown body: the document without its frontmatter block (leading blank lines dropped). */
export function skillBody(text: string): string {
  const block = frontmatterBlock(text);
  return block ? text.slice(block.end).replace(/^\s*\n/, '') : text;
}

const isSkillMd = (path: string) => basename(path) === 'SKILL.md';

function fail(path: string, rule: string): never {
  throw new SkillFormatError(`${displayPath(path)}: ${rule}`);
}

/** The rules of `name`; null when it is valid. */
export function nameViolation(name: string): string | null {
  if (name.length === 0) return "frontmatter 'name' must not be empty";
  if (name.length > NAME_MAX) return `frontmatter 'name' is ${name.length} characters; the limit is ${NAME_MAX}`;
  const bad = [...new Set(name.replace(/[a-z0-9-]/g, ''))];
  if (bad.length > 0) {
    return `frontmatter 'name' '${clip(name, 60)}' may contain only lowercase letters, digits and '-' (found ${bad.map((c) => `'${c}'`).join(', ')})`;
  }
  if (name.startsWith('-') || name.endsWith('-')) return `frontmatter 'name' '${name}' must not start or end with '-'`;
  if (name.includes('--')) return `frontmatter 'name' '${name}' must not contain '--'`;
  return null;
}

/** The rules of `description`; null when it is valid. */
export function descriptionViolation(description: string): string | null {
  if (description.trim().length === 0) return "frontmatter 'description' must not be empty";
  if (description.length > DESCRIPTION_MAX)
    return `frontmatter 'description' is ${description.length} characters; the limit is ${DESCRIPTION_MAX}`;
  return null;
}

/** Parse the YAML of a frontmatter block (one-line error naming the file). */
function readYaml(path: string, yaml: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseYaml(yaml);
  } catch (e) {
    fail(path, `frontmatter is not valid YAML: ${String((e as Error).message).split('\n')[0]}`);
  }
  if (value === null || value === undefined) fail(path, "frontmatter is empty: it needs 'name' and 'description'");
  if (typeof value !== 'object' || Array.isArray(value))
    fail(path, 'frontmatter must be a YAML mapping of fields (name, description, …)');
  return value as Record<string, unknown>;
}

/** Check the fields against the format's rules; `folderName` when the file is a SKILL.md. */
function checkFields(path: string, fm: Record<string, unknown>, folderName: string | null): SkillFrontmatter {
  for (const key of Object.keys(fm)) {
    if (!(FRONTMATTER_FIELDS as readonly string[]).includes(key)) {
      fail(path, `unknown frontmatter field '${clip(key, 40)}' (allowed: ${FRONTMATTER_FIELDS.join(', ')})`);
    }
  }
  if (fm.name === undefined || fm.name === null) fail(path, "frontmatter field 'name' is required");
  if (typeof fm.name !== 'string') fail(path, "frontmatter 'name' must be a string");
  const nameRule = nameViolation(fm.name);
  if (nameRule) fail(path, nameRule);
  if (folderName !== null && fm.name !== folderName) {
    fail(path, `frontmatter 'name' '${fm.name}' must match the folder name '${folderName}'`);
  }
  if (fm.description === undefined || fm.description === null)
    fail(path, "frontmatter field 'description' is required");
  if (typeof fm.description !== 'string') fail(path, "frontmatter 'description' must be a string");
  const descRule = descriptionViolation(fm.description);
  if (descRule) fail(path, descRule);
  if (fm.license !== undefined && typeof fm.license !== 'string') fail(path, "frontmatter 'license' must be a string");
  if (fm.compatibility !== undefined) {
    if (typeof fm.compatibility !== 'string') fail(path, "frontmatter 'compatibility' must be a string");
    if (fm.compatibility.length > COMPATIBILITY_MAX) {
      fail(
        path,
        `frontmatter 'compatibility' is ${fm.compatibility.length} characters; the limit is ${COMPATIBILITY_MAX}`,
      );
    }
  }
  if (
    fm.metadata !== undefined &&
    (fm.metadata === null || typeof fm.metadata !== 'object' || Array.isArray(fm.metadata))
  ) {
    fail(path, "frontmatter 'metadata' must be a key–value map");
  }
  const tools = fm['allowed-tools'];
  if (
    tools !== undefined &&
    typeof tools !== 'string' &&
    !(Array.isArray(tools) && tools.every((t) => typeof t === 'string'))
  ) {
    fail(path, "frontmatter 'allowed-tools' must be a string or a list of strings");
  }
  return fm as unknown as SkillFrontmatter;
}

export interface ParsedSkill {
  frontmatter: SkillFrontmatter;
  block: FrontmatterBlock;
  body: string;
}

/**
 * Parse and validate a skill document that must have frontmatter (a SKILL.md, or a skill an agent lists).
 * `folderCheck`: also require `name` to equal the folder name (default: when the file is named SKILL.md).
 */
export function parseSkill(path: string, text: string, opts: { folderCheck?: boolean } = {}): ParsedSkill {
  const block = frontmatterBlock(text);
  if (!block) {
    if (startsWithFrontmatter(text)) fail(path, "frontmatter has no closing '---' line");
    fail(
      path,
      "no frontmatter: a SKILL.md starts with a '---' line, YAML fields (name, description, …) and a closing '---' line",
    );
  }
  const folderCheck = opts.folderCheck ?? isSkillMd(path);
  const frontmatter = checkFields(
    path,
    readYaml(path, block.yaml),
    folderCheck ? basename(dirname(resolve(path))) : null,
  );
  return { frontmatter, block, body: text.slice(block.end) };
}

/**
 * The format check of a skill file as it is read (seed skills, `--skill`, `env.skill_init`): a SKILL.md gets
 * every rule; any other file that starts with frontmatter gets them without the folder-name match; a plain
 * markdown skill (no frontmatter, not named SKILL.md) is returned as null. Throws SkillFormatError.
 */
export function checkSkillFile(path: string, text: string): SkillFrontmatter | null {
  if (!isSkillMd(path) && !startsWithFrontmatter(text)) return null;
  return parseSkill(path, text).frontmatter;
}

/** YAML text of `description: <value>` that reads back as exactly `value`. */
function renderDescription(value: string): string {
  const plain = `description: ${value}`;
  if (!/[\n\r]/.test(value) && value === value.trim()) {
    try {
      if (isDeepStrictEqual(parseYaml(plain), { description: value })) return plain;
    } catch {
      // not a plain scalar: quoted below
    }
  }
  return `description: ${JSON.stringify(value)}`;
}

/**
 * The document with its frontmatter `description` set to `description` and every other byte unchanged
 * (the value may have spanned several lines: block, folded or multi-line scalars are replaced by one line).
 * Throws SkillFormatError when the new description breaks the format's rules.
 */
export function replaceDescription(text: string, description: string, path = 'SKILL.md'): string {
  const rule = descriptionViolation(description);
  if (rule) fail(path, rule);
  const block = frontmatterBlock(text);
  if (!block) fail(path, 'no frontmatter to hold a description');
  const lines = block.yaml.split('\n');
  const keyAt = lines.findIndex((l) => /^description[ \t]*:/.test(l));
  if (keyAt === -1) fail(path, "frontmatter field 'description' is required");
  // the value continues over indented lines (and blank lines between them), not over trailing blank lines
  let end = keyAt + 1;
  while (end < lines.length && (/^[ \t]/.test(lines[end]!) || lines[end]!.trim() === '')) end++;
  while (end > keyAt + 1 && lines[end - 1]!.trim() === '') end--;
  const yaml = [...lines.slice(0, keyAt), renderDescription(description), ...lines.slice(end)].join('\n');
  const before = readYaml(path, block.yaml);
  const after = readYaml(path, yaml);
  if (!isDeepStrictEqual({ ...before, description }, after))
    fail(path, 'could not rewrite the description without changing another frontmatter field');
  return text.slice(0, block.yamlStart) + yaml + text.slice(block.yamlStart + block.yaml.length);
}
