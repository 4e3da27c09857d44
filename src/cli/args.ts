/** Small argument helpers shared by the commands (each command owns its own flags). */
import { SkillOptError } from '../util/errors.ts';

export interface SplitArgs {
  /** Values of flags this command owns, by flag name (without dashes); repeated flags accumulate. */
  flags: Map<string, string[]>;
  /** Boolean flags seen. */
  switches: Set<string>;
  /** Everything not owned by the command, in order (e.g. Vitest flags and filters). */
  rest: string[];
}

/**
 * Take the command's own flags out of argv. `valued` flags take one value (`--config C` or `--config=C`);
 * `multi` flags take every following word up to the next flag (`--x` or `-x`) (`--cfg-options a=1 b=2`);
 * `switches` take none. Anything else is left in `rest` untouched.
 */
export function takeFlags(
  argv: string[],
  spec: { valued?: string[]; multi?: string[]; switches?: string[] },
): SplitArgs {
  const valued = new Set(spec.valued ?? []);
  const multi = new Set(spec.multi ?? []);
  const switchNames = new Set(spec.switches ?? []);
  const flags = new Map<string, string[]>();
  const switches = new Set<string>();
  const rest: string[] = [];
  const push = (name: string, value: string) => flags.set(name, [...(flags.get(name) ?? []), value]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([A-Za-z][\w-]*)(?:=(.*))?$/s.exec(arg);
    if (!m) {
      rest.push(arg);
      continue;
    }
    const name = m[1]!;
    const inline = m[2];
    if (valued.has(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined || (inline === undefined && value.startsWith('--'))) {
        throw new SkillOptError(`--${name} needs a value`);
      }
      push(name, value);
    } else if (multi.has(name)) {
      if (inline !== undefined) push(name, inline);
      // A list ends at the next flag, short ones included (`--cfg-options a=1 -t x` keeps `-t x`).
      while (i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) push(name, argv[++i]!);
      if (!flags.has(name)) flags.set(name, []);
    } else if (switchNames.has(name)) {
      if (inline !== undefined && /^(false|no|0)$/i.test(inline)) switches.delete(name);
      else switches.add(name);
    } else {
      rest.push(arg);
    }
  }
  return { flags, switches, rest };
}

export function single(args: SplitArgs, name: string): string | undefined {
  const values = args.flags.get(name);
  return values && values.length > 0 ? values[values.length - 1] : undefined;
}

export function numberFlag(args: SplitArgs, name: string): number | undefined {
  const raw = single(args, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new SkillOptError(`--${name} must be a number, got '${raw}'`);
  return n;
}
