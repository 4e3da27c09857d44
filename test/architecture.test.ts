/**
 * The layering of src/, read from the import lines themselves (static, type-only and dynamic imports,
 * via TypeScript's own pre-processor so comments and strings do not count): the model layer, the skill
 * library and the suite never import the optimizer or the CLI, the wire contract they share with the
 * optimizer (src/protocol) imports nothing of the project, and the CLI's modules import each other
 * without a cycle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** Layers that sit below the optimizer and the CLI (the issue names model, skill and suite; the rest hold too), and what they must not import. */
const LOW = ['model', 'skill', 'suite', 'sim', 'config', 'rundir', 'stats', 'compare', 'util'];
const HIGH = ['optimizer', 'cli'];

type Graph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const posix = (p: string): string => p.split(sep).join('/');

/** Module (path under src/, `/`-separated) → the src/ modules it imports. */
function importGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(SRC)) {
    const found = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
    const targets = found
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => posix(relative(SRC, resolve(dirname(file), spec))))
      .filter((t) => !t.startsWith('..'));
    graph.set(posix(relative(SRC, file)), [...new Set(targets)]);
  }
  return graph;
}

const layerOf = (module: string): string => module.split('/')[0]!;

/** "from → to" for every import of a low layer's module from a high layer's. */
function layeringViolations(graph: Graph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    if (!LOW.includes(layerOf(from))) continue;
    for (const to of targets) if (HIGH.includes(layerOf(to))) out.push(`${from} → ${to}`);
  }
  return out.sort();
}

/** Every import cycle among the modules `keep` selects: strongly connected components (Tarjan) of two or more, or a self-import. */
function cycles(graph: Graph, keep: (module: string) => boolean): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const edges = (m: string): string[] => (graph.get(m) ?? []).filter(keep);
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
  for (const m of [...graph.keys()].filter(keep).sort()) if (!index.has(m)) visit(m);
  return out;
}

describe('architecture', () => {
  const graph = importGraph();

  it('reads the import lines of src/ (static, type-only and dynamic)', () => {
    expect(graph.size).toBeGreaterThan(50);
    // a type-only import and a dynamic import, both of which the layering must see
    expect(graph.get('cli/commands/train.ts')).toContain('cli/command.ts');
    expect(graph.get('suite/runtime.ts')).toContain('model/index.ts');
  });

  it('finds a layering violation and a cycle when there is one', () => {
    const bad: Graph = new Map([
      ['model/client.ts', ['optimizer/schemas.ts']],
      ['cli/main.ts', ['cli/commands/show.ts']],
      ['cli/commands/show.ts', ['cli/main.ts']],
    ]);
    expect(layeringViolations(bad)).toEqual(['model/client.ts → optimizer/schemas.ts']);
    expect(cycles(bad, (m) => layerOf(m) === 'cli')).toEqual([['cli/commands/show.ts', 'cli/main.ts']]);
  });

  it('no module under src/model, src/skill or src/suite imports from src/optimizer or src/cli', () => {
    expect(layeringViolations(graph)).toEqual([]);
  });

  it('src/protocol, the wire contract both sides share, imports nothing of src/', () => {
    const protocol = [...graph].filter(([m]) => layerOf(m) === 'protocol');
    expect(protocol.length).toBeGreaterThan(0);
    expect(protocol.filter(([, targets]) => targets.length > 0)).toEqual([]);
  });

  it('src/cli has no import cycle', () => {
    expect(cycles(graph, (m) => layerOf(m) === 'cli')).toEqual([]);
  });
});
