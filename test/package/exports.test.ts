/**
 * The public API, pinned: what each entry of package.json's `exports` exports (its runtime values from the
 * compiled dist/, its value and type names from the source), and that docs/api.md lists every one of them,
 * once, under its entry. Adding or removing an export is a deliberate change to the list below and to
 * docs/api.md. Needs dist/: `npm test` builds first.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { assertBuilt, REPO } from '../e2e/helpers.ts';

interface Entry {
  /** The `exports` key of package.json. */
  subpath: string;
  source: string;
  dist: string;
  /** The heading of its section in docs/api.md. */
  heading: string;
  values: string[];
  types: string[];
}

const ENTRIES: Entry[] = [
  {
    subpath: '.',
    source: 'src/index.ts',
    dist: 'dist/index.js',
    heading: '## `skillopt`',
    values: [
      'defineSkillSuite',
      'defineTriggerSuite',
      'exactMatch',
      'includesAll',
      'includesAny',
      'regex',
      'label',
      'numeric',
      'jsonSchema',
      'llmJudge',
      'threshold',
      'weighted',
      'toolCalls',
      'finalState',
      'noToolCalls',
      'toolCallLimit',
      'mcpServers',
      'tool',
      'ToolError',
    ],
    types: [
      'SkillSuiteOptions',
      'SkillSuite',
      'TriggerSuiteOptions',
      'TriggerCase',
      'SkillTask',
      'ChatMessage',
      'Presentation',
      'Scorer',
      'ScorerLike',
      'ScoreContext',
      'Score',
      'Tool',
      'ToolSet',
      'ToolContext',
      'TrajectoryStep',
      'RunHook',
      'RunContext',
      'RunModel',
      'ChatReply',
      'McpOptions',
      'McpClient',
    ],
  },
  {
    subpath: './vitest',
    source: 'src/vitest/index.ts',
    dist: 'dist/vitest/index.js',
    heading: '## `skillopt/vitest`',
    values: ['skillopt'],
    types: ['SkillOptPluginOptions'],
  },
  {
    subpath: './runfiles',
    source: 'src/runfiles/public.ts',
    dist: 'dist/runfiles/public.js',
    heading: '## `skillopt/runfiles`',
    values: [
      'readRunFile',
      'parseRunFile',
      'SCHEMA_VERSION',
      'RUN_FILE_SCHEMAS',
      'ResultRowSchema',
      'RunSummarySchema',
      'EvalSummarySchema',
      'OptimizeSummarySchema',
      'CompareFileSchema',
      'RunRecordSchema',
    ],
    types: ['ResultRow', 'RunSummaryFile', 'EvalSummaryFile', 'OptimizeSummaryFile', 'CompareFile', 'RunRecordFile'],
  },
];

const sorted = (xs: string[]) => [...xs].sort();

/** Each entry's exported names, split into values and type-only names, as TypeScript sees the source. */
function sourceExports(): Map<string, { values: string[]; types: string[] }> {
  const files = ENTRIES.map((e) => join(REPO, e.source));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    strict: true,
  });
  const checker = program.getTypeChecker();
  const out = new Map<string, { values: string[]; types: string[] }>();
  for (const entry of ENTRIES) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(join(REPO, entry.source))!)!;
    const values: string[] = [];
    const types: string[] = [];
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      (target.flags & ts.SymbolFlags.Value ? values : types).push(symbol.name);
    }
    out.set(entry.subpath, { values: sorted(values), types: sorted(types) });
  }
  return out;
}

/** The names docs/api.md lists under `heading`: the first backticked name of each bullet, up to the next `## `. */
function documented(heading: string): string[] {
  const text = readFileSync(join(REPO, 'docs', 'api.md'), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) return [];
  const rest = text.slice(start + heading.length + 2);
  const section = rest.slice(0, rest.search(/\n## |$/));
  return section.split('\n').flatMap((line) => /^- `([A-Za-z_$][\w$]*)/.exec(line)?.[1] ?? []);
}

describe('the public API', () => {
  it('package.json exports these entries and no other', () => {
    const exportsMap = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).exports as Record<string, unknown>;
    expect(Object.keys(exportsMap).sort()).toEqual([...ENTRIES.map((e) => e.subpath), './package.json'].sort());
    for (const e of ENTRIES) {
      expect(exportsMap[e.subpath], e.subpath).toEqual({
        types: `./${e.dist.replace(/\.js$/, '.d.ts')}`,
        default: `./${e.dist}`,
      });
    }
  });

  it('each entry exports exactly the pinned values and types', () => {
    const found = sourceExports();
    for (const e of ENTRIES)
      expect(found.get(e.subpath), e.source).toEqual({ values: sorted(e.values), types: sorted(e.types) });
  });

  it('the compiled entries export exactly the pinned values at run time', async () => {
    assertBuilt();
    for (const e of ENTRIES) {
      const mod = (await import(pathToFileURL(join(REPO, e.dist)).href)) as Record<string, unknown>;
      expect(sorted(Object.keys(mod)), e.dist).toEqual(sorted(e.values));
    }
  });

  it('the root export stays small: at most 40 names', () => {
    const root = ENTRIES[0]!;
    expect(root.values.length + root.types.length).toBeLessThanOrEqual(40);
  });

  it('docs/api.md lists every export of each entry once, under its heading, and nothing else', () => {
    for (const e of ENTRIES)
      expect(sorted(documented(e.heading)), e.heading).toEqual(sorted([...e.values, ...e.types]));
  });
});
