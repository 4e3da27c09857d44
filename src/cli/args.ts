/**
 * Each command declares its flags once, in a table (name, type, default, help, short alias); the parser
 * and the `--help` text are both made from it. `node:util` `parseArgs` splits argv into tokens; the
 * strictness is applied over them here, so that `skillopt test` can hand the flags Vitest defines on to
 * Vitest while a flag nobody defines stops the command (exit 2, with the nearest flag it meant).
 */
import { parseArgs } from 'node:util';
import { closest } from '../util/closest.ts';
import { SkillOptError } from '../util/errors.ts';

export type FlagType = 'boolean' | 'string' | 'number' | 'list';

export interface Flag {
  type: FlagType;
  help: string;
  /** The value's placeholder in the help (`C`, `k=v`, `train|val|test|all`); not for booleans. */
  arg?: string;
  default?: string | number | boolean;
  /** A one-letter alias (`-x`). */
  short?: string;
  /** Shown without brackets in the usage line: the command needs it. */
  required?: boolean;
  /** A list takes the following words that match (`k=v`), up to the first that does not or the next flag. */
  words?: RegExp;
}

export type FlagTable = Readonly<Record<string, Flag>>;

type ValueOf<F extends Flag> = F['type'] extends 'boolean'
  ? boolean
  : F['type'] extends 'number'
    ? number
    : F['type'] extends 'list'
      ? string[]
      : string;

/** The parsed values: booleans default to false and lists to []; others are undefined unless the table has a default. */
export type FlagValues<T extends FlagTable> = {
  [K in keyof T]: T[K]['type'] extends 'boolean' | 'list'
    ? ValueOf<T[K]>
    : T[K] extends { default: string | number }
      ? ValueOf<T[K]>
      : ValueOf<T[K]> | undefined;
};

export interface CommandSpec<T extends FlagTable> {
  /** `train`, `cache stats|prune`. */
  name: string;
  /** What goes between the name and the flags in the usage line (`<dir>`, `[vitest args]`). */
  operands?: string;
  flags: T;
  /** Text between the usage line and the flag list. */
  about?: string;
  /** Text after the flag list. */
  notes?: string;
}

export interface ParsedArgs<T extends FlagTable> {
  values: FlagValues<T>;
  /** Arguments that are not flags, in order. */
  positionals: string[];
  /** The flags (with their values) and positionals handed on, in argv order (`skillopt test` → Vitest). */
  passed: string[];
}

/** For a command that hands flags on: which it may hand on, and their names for a did-you-mean. */
export interface PassOn {
  accepts(name: string): boolean;
  names: readonly string[];
}

/** Declare a command's flags (keeps the literal types that give `FlagValues` its shape). */
export function defineCommand<const T extends FlagTable>(spec: CommandSpec<T>): CommandSpec<T> {
  return spec;
}

/** argv as parseArgs tokens, the table's flags declared (so a flag's value is not taken for a positional). */
function flagTokens(table: FlagTable, argv: string[]) {
  const options = Object.fromEntries(
    Object.entries(table).map(([name, f]) => [
      name,
      // a list is declared boolean so parseArgs leaves its words as positionals (`--cfg-options a=1 b=2`)
      {
        type: f.type === 'boolean' || f.type === 'list' ? ('boolean' as const) : ('string' as const),
        ...(f.short ? { short: f.short } : {}),
      },
    ]),
  );
  return parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true }).tokens;
}

/** Whether argv names a flag the command's table does not define (only then is a pass-on list needed). */
export function hasForeignFlag(spec: CommandSpec<FlagTable>, argv: string[]): boolean {
  return flagTokens(spec.flags, argv).some((t) => t.kind === 'option' && !spec.flags[t.name]);
}

/**
 * Parse argv against the command's table. Without `passOn` a flag the table lacks is an error; with it,
 * a flag `passOn` accepts goes to `passed` with everything that follows it up to the next flag (its value,
 * file filters), and positionals go there too. A list flag takes every following word up to the next flag.
 */
export function parseFlags<T extends FlagTable>(spec: CommandSpec<T>, argv: string[], passOn?: PassOn): ParsedArgs<T> {
  const table: FlagTable = spec.flags;
  const tokens = flagTokens(table, argv);
  const raw = new Map<string, string[]>();
  const positionals: string[] = [];
  const passed: string[] = [];
  const passedIndexes = new Set<number>();
  const pass = (index: number) => {
    if (!passedIndexes.has(index)) passed.push(argv[index]!);
    passedIndexes.add(index);
  };
  // what the words after the previous flag belong to (a list: its name as typed and whether it took a word)
  let after: { list: string; shown: string; took: boolean } | 'passed' | null = null;
  let terminated = false;
  /** The words after a list flag end: it must have taken one (`--cfg-options` alone is a mistake, not nothing). */
  const closeList = (next?: string) => {
    if (after === null || after === 'passed' || after.took) return;
    const flag = table[after.list]!;
    throw new SkillOptError(
      `${after.shown} needs at least one ${flag.arg ?? 'value'}${next !== undefined ? `, got '${next}'` : ''}`,
    );
  };
  for (const token of tokens) {
    if (token.kind === 'option-terminator') {
      closeList();
      terminated = true;
      if (passOn) pass(token.index);
      after = null;
      continue;
    }
    if (token.kind === 'positional') {
      if (
        !terminated &&
        after !== null &&
        after !== 'passed' &&
        (table[after.list]!.words?.test(token.value) ?? true)
      ) {
        raw.get(after.list)!.push(token.value);
        after.took = true;
        continue;
      }
      if (!terminated) closeList(token.value);
      after = null;
      if (passOn) pass(token.index);
      else positionals.push(token.value);
      continue;
    }
    closeList();
    const flag = table[token.name];
    const shown = token.rawName.startsWith('--') ? `--${token.name}` : token.rawName;
    if (!flag) {
      if (passOn?.accepts(token.name)) {
        pass(token.index);
        after = 'passed';
        continue;
      }
      const known = [...Object.keys(table).map((n) => `--${n}`), ...(passOn?.names ?? []).map((n) => `--${n}`)];
      const near = token.rawName.startsWith('--') ? closest(shown, known) : undefined;
      throw new SkillOptError(
        `unknown flag '${shown}' for skillopt ${spec.name}${near ? ` (did you mean ${near}?)` : ''}; see skillopt ${spec.name.split(' ')[0]} --help`,
      );
    }
    const values = raw.get(token.name) ?? [];
    raw.set(token.name, values);
    after = null;
    if (flag.type === 'list') {
      if (token.value !== undefined) values.push(token.value);
      after = { list: token.name, shown, took: token.value !== undefined };
    } else if (flag.type === 'boolean') {
      values.push(token.value ?? 'true');
    } else {
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--')))
        throw new SkillOptError(`${shown} needs a value`);
      values.push(token.value);
    }
  }
  closeList();
  const values: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(table)) values[name] = typed(name, flag, raw.get(name));
  return { values: values as FlagValues<T>, positionals, passed };
}

function typed(name: string, flag: Flag, given: string[] | undefined): unknown {
  if (flag.type === 'list') return given ?? [];
  const last = given?.at(-1);
  if (flag.type === 'boolean') {
    if (last === undefined) return flag.default ?? false;
    if (/^(true|yes|1)$/i.test(last)) return true;
    if (/^(false|no|0)$/i.test(last)) return false;
    throw new SkillOptError(`--${name} takes no value, got '${last}'`);
  }
  if (last === undefined) return flag.default;
  if (flag.type === 'number') {
    const n = Number(last);
    if (last.trim() === '' || !Number.isFinite(n)) throw new SkillOptError(`--${name} must be a number, got '${last}'`);
    return n;
  }
  return last;
}

/** A command with operands takes exactly what its usage line names: anything more is one line naming it. */
export function noOperands(spec: CommandSpec<FlagTable>, positionals: string[]): void {
  if (positionals.length > 0)
    throw new SkillOptError(
      `unexpected argument '${positionals[0]}' for skillopt ${spec.name} (see skillopt ${spec.name.split(' ')[0]} --help)`,
    );
}

const WIDTH = 100;
/** What main.ts prints before the usage line. */
export const USAGE_PREFIX = 'Usage: ';

function flagLabel(name: string, flag: Flag): string {
  const value =
    flag.type === 'boolean'
      ? ''
      : flag.type === 'list'
        ? ` ${flag.arg ?? 'v'} ...`
        : ` ${flag.arg ?? (flag.type === 'number' ? 'N' : 'V')}`;
  return `${flag.short ? `-${flag.short}, ` : ''}--${name}${value}`;
}

function usageTerm(name: string, flag: Flag): string {
  const value =
    flag.type === 'boolean'
      ? ''
      : flag.type === 'list'
        ? ` ${flag.arg ?? 'v'} ...`
        : ` ${flag.default !== undefined && flag.arg === undefined ? String(flag.default) : (flag.arg ?? 'V')}`;
  return flag.required ? `--${name}${value}` : `[--${name}${value}]`;
}

/** The command's `--help`: a usage line made from the table, its text, one line per flag, its notes. */
export function helpText(spec: CommandSpec<FlagTable>): string {
  const head = `skillopt ${spec.name}${spec.operands ? ` ${spec.operands}` : ''}`;
  const lines: string[] = [];
  let line = head;
  // under the first flag of the line main prints as `Usage: skillopt <name> …`
  const indent = ' '.repeat(USAGE_PREFIX.length + Math.min(head.length + 1, 24));
  for (const [name, flag] of Object.entries(spec.flags)) {
    const term = usageTerm(name, flag);
    if (line.length + 1 + term.length > WIDTH && line.trim() !== '') {
      lines.push(line);
      line = indent + term;
    } else line += ` ${term}`;
  }
  lines.push(line);
  if (spec.about) lines.push('', spec.about);
  const labels = Object.entries(spec.flags).map(([name, flag]) => [flagLabel(name, flag), flag] as const);
  const column = Math.min(Math.max(0, ...labels.map(([l]) => l.length)) + 2, 28);
  if (labels.length > 0) lines.push('');
  for (const [label, flag] of labels) {
    const shownDefault =
      flag.default !== undefined && flag.type !== 'boolean' ? ` (default ${String(flag.default)})` : '';
    const pad = label.length + 2 > column ? `\n  ${' '.repeat(column)}` : ' '.repeat(column - label.length);
    lines.push(`  ${label}${pad}${flag.help}${shownDefault}`);
  }
  if (spec.notes) lines.push('', spec.notes);
  return lines.join('\n');
}
