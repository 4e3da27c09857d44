/**
 * The flags Vitest's own CLI defines, read from the installed Vitest (never a copied list), so that
 * `skillopt test` passes on exactly what `vitest` accepts. Vitest has no public list of them: the names come
 * from src/vitest-internals.ts.
 */
import { vitestCliOptionNames } from '../vitest-internals.ts';

export interface VitestFlags {
  /** Top-level option names as cac stores them (camelCase; one-letter names are the short aliases). */
  names: ReadonlySet<string>;
  /** The long flags in kebab case (`--test-name-pattern`), for did-you-mean suggestions. */
  long: readonly string[];
}

let cached: Promise<VitestFlags> | undefined;

export function vitestFlags(): Promise<VitestFlags> {
  cached ??= loadVitestFlags();
  return cached;
}

async function loadVitestFlags(): Promise<VitestFlags> {
  const names = new Set((await vitestCliOptionNames()).map((n) => n.split('.')[0]!));
  const long = [...names].filter((n) => n.length > 1).map((n) => n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
  return { names, long };
}

/** Whether Vitest defines the flag `name` (as typed after the dashes: `reporter`, `t`, `output-file.junit`, `no-color`). */
export function isVitestFlag(flags: VitestFlags, name: string): boolean {
  const top = name.split('.')[0]!;
  const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  return flags.names.has(camel(top)) || (top.startsWith('no-') && flags.names.has(camel(top.slice(3))));
}
