/**
 * The layering of src/, read from the import lines of its source files (static `import`, `import type`,
 * `export … from` and `import()` with a literal, via TypeScript's own pre-processor so comments and
 * strings do not count).
 *
 * LAYERS lists the top-level folders of src/ (and its top-level files) from the bottom up: a module may
 * import its own folder and the folders below it, never one above. There is no exceptions list. On top of
 * the order, no two folders import each other and no two files do (no import cycle of any length), and
 * src/protocol, the wire contract the suite and the optimizer share, imports nothing of src/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** Bottom first. A top-level file of src/ is a layer of its own, named by its file name. */
const LAYERS = [
  'util', // helpers that know nothing of skills or models
  'vitest-internals.ts', // every use of Vitest beyond its public API (imports nothing of src/)
  'protocol', // the optimizer's wire contract: imports nothing
  'types.ts', // the record types every layer shares
  'version.ts',
  'runfiles', // the schemas of the files a run writes (docs/schemas/)
  'stats',
  'skill', // the skill document: regions, edits, diffs
  'model', // model clients, the gateway, the model-call cache
  'config', // the config schema, its loading and roles
  'cost', // prices, a case's cost, a run's cost and latency totals
  'contract', // what the host hands to the suites in Vitest's workers, and what they report back
  'agent', // tools and the tool loop: the model's function calls answered over a case's state
  'mcp', // MCP servers as a suite's tools: the SDK client, lifecycle, record and replay, skills from resources
  'rundir', // a run directory's fingerprint and snapshot
  'suite', // defineSuite, scorers, summaries and verdicts
  'compare', // comparing two runs
  'sim', // the simulated model server
  'report', // the HTML reports
  'vitest', // the plugin, the host, the reporter, the warm pool
  'optimizer',
  'matrix', // model × skill runs: cells, lanes, the matrix manifest
  'cli',
  'index.ts', // the package's public entry
];

type Graph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const posix = (p: string): string => p.split(sep).join('/');

/** The src/ modules (paths under src/, `/`-separated) that `text`, the source of module `from`, imports. */
function importsOf(from: string, text: string): string[] {
  const found = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  const targets = found
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => posix(relative(SRC, resolve(SRC, dirname(from), spec))).replace(/\.js$/, '.ts'))
    .filter((t) => !t.startsWith('..'));
  return [...new Set(targets)];
}

/** Module → the src/ modules it imports. */
function importGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(SRC)) {
    const module = posix(relative(SRC, file));
    graph.set(module, importsOf(module, readFileSync(file, 'utf8')));
  }
  return graph;
}

const layerOf = (module: string): string => module.split('/')[0]!;

/** "from → to (layer → layer)" for every import of a layer above the importer's, or of a layer LAYERS does not declare. */
function layeringViolations(graph: Graph): string[] {
  const out: string[] = [];
  const rank = (m: string): number => LAYERS.indexOf(layerOf(m));
  for (const [from, targets] of graph) {
    for (const to of targets) {
      if (layerOf(from) === layerOf(to)) continue;
      if (rank(from) < 0 || rank(to) < 0 || rank(to) > rank(from))
        out.push(`${from} → ${to} (${layerOf(from)} → ${layerOf(to)})`);
    }
  }
  return out.sort();
}

/** Every import cycle of `graph`: strongly connected components (Tarjan) of two or more, or a self-import. */
function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const edges = (m: string): string[] => (graph.get(m) ?? []).filter((t) => graph.has(t));
  const visit = (m: string): void => {
    index.set(m, next);
    low.set(m, next);
    next++;
    stack.push(m);
    onStack.add(m);
    for (const t of edges(m)) {
      if (!index.has(t)) {
        visit(t);
        low.set(m, Math.min(low.get(m)!, low.get(t)!));
      } else if (onStack.has(t)) {
        low.set(m, Math.min(low.get(m)!, index.get(t)!));
      }
    }
    if (low.get(m) !== index.get(m)) return;
    const component: string[] = [];
    let t: string;
    do {
      t = stack.pop()!;
      onStack.delete(t);
      component.push(t);
    } while (t !== m);
    if (component.length > 1 || edges(m).includes(m)) out.push(component.sort());
  };
  for (const m of [...graph.keys()].sort()) if (!index.has(m)) visit(m);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The graph between layers: layer → the other layers its modules import. */
function layerGraph(graph: Graph): Graph {
  const out: Graph = new Map();
  for (const [from, targets] of graph) {
    const edges = out.get(layerOf(from)) ?? [];
    for (const to of targets)
      if (layerOf(to) !== layerOf(from) && !edges.includes(layerOf(to))) edges.push(layerOf(to));
    out.set(layerOf(from), edges);
  }
  return out;
}

describe('architecture', () => {
  const graph = importGraph();

  it('reads the import lines of src/ (static, type-only, re-exports and dynamic imports)', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('cli/commands/train.ts')).toContain('cli/command.ts'); // import type
    expect(graph.get('suite/runtime.ts')).toContain('model/index.ts'); // import()
    expect(graph.get('index.ts')).toContain('suite/agent.ts'); // export type … from
    const planted = importsOf(
      'model/planted.ts',
      [
        `// import { no } from '../cli/main.ts';`,
        `const s = "import('../cli/main.ts')";`,
        `import type { A } from '../optimizer/a.ts';`,
        `export { b } from './b.ts';`,
        `const c = await import('../report/c.ts');`,
      ].join('\n'),
    );
    expect(planted.sort()).toEqual(['model/b.ts', 'optimizer/a.ts', 'report/c.ts']);
  });

  it('LAYERS declares every top-level folder and file of src/, once', () => {
    const present = [...new Set([...graph.keys()].map(layerOf))].sort();
    expect([...LAYERS].sort()).toEqual(present);
    expect(new Set(LAYERS).size).toBe(LAYERS.length);
  });

  it('finds an upward import, an undeclared layer and a cycle when there is one', () => {
    const planted: Graph = new Map([
      ['model/client.ts', importsOf('model/client.ts', `import { run } from '../optimizer/engine.ts';`)],
      ['optimizer/engine.ts', ['model/client.ts']],
      ['extra/thing.ts', ['util/format.ts']],
      ['util/format.ts', []],
    ]);
    expect(layeringViolations(planted)).toEqual([
      'extra/thing.ts → util/format.ts (extra → util)',
      'model/client.ts → optimizer/engine.ts (model → optimizer)',
    ]);
    expect(cycles(planted)).toEqual([['model/client.ts', 'optimizer/engine.ts']]);
    expect(cycles(layerGraph(planted))).toEqual([['model', 'optimizer']]);
    expect(
      cycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', ['a.ts']],
          ['d.ts', ['d.ts']],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  });

  it('no module imports a layer above its own', () => {
    expect(layeringViolations(graph)).toEqual([]);
  });

  it('no two layers import each other, directly or through others', () => {
    expect(cycles(layerGraph(graph))).toEqual([]);
  });

  it('no two files import each other, directly or through others', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('src/protocol, the wire contract both sides share, imports nothing of src/', () => {
    const protocol = [...graph].filter(([m]) => layerOf(m) === 'protocol');
    expect(protocol.length).toBeGreaterThan(0);
    expect(protocol.filter(([, targets]) => targets.length > 0)).toEqual([]);
  });
});
