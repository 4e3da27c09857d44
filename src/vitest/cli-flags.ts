/**
 * The flags Vitest's own CLI defines, read from the installed Vitest (never a copied list), so that
 * `skillopt test` passes on exactly what `vitest` accepts. `vitest/node` exports `parseCLI` but not the
 * option table behind it; the module it re-exports `parseCLI` from also exports `createCLI`, whose cac
 * instance holds every option Vitest registers.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

interface CacOption {
  /** e.g. ['t', 'testNamePattern'], ['outputFile'], ['color'] for `--no-color`. */
  names: string[];
}

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
  const entry = createRequire(import.meta.url).resolve('vitest/node');
  const from = /export\s*\{[^}]*\bas parseCLI\b[^}]*\}\s*from\s*['"]([^'"]+)['"]/.exec(readFileSync(entry, 'utf8'))?.[1];
  const chunkUrl = from ? new URL(from, pathToFileURL(entry)) : undefined;
  const exportName = chunkUrl ? /\bcreateCLI as (\w+)\b/.exec(readFileSync(chunkUrl, 'utf8'))?.[1] : undefined;
  const mod = chunkUrl && exportName ? ((await import(chunkUrl.href)) as Record<string, unknown>) : undefined;
  const createCLI = mod?.[exportName!];
  if (typeof createCLI !== 'function') {
    throw new Error(`cannot read the CLI options of the installed Vitest (${entry}): no createCLI beside parseCLI`);
  }
  const cli = (createCLI as () => { globalCommand: { options: CacOption[] } })();
  const names = new Set<string>();
  for (const option of cli.globalCommand.options) for (const n of option.names) names.add(n.split('.')[0]!);
  const long = [...names].filter((n) => n.length > 1).map((n) => n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
  return { names, long };
}

/** Whether Vitest defines the flag `name` (as typed after the dashes: `reporter`, `t`, `output-file.junit`, `no-color`). */
export function isVitestFlag(flags: VitestFlags, name: string): boolean {
  const top = name.split('.')[0]!;
  const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  return flags.names.has(camel(top)) || (top.startsWith('no-') && flags.names.has(camel(top.slice(3))));
}
