/**
 * The trajectory scorers and reports end to end (docs/agents.md): a tool suite scored by `weighted` over
 * `toolCalls`, `finalState` and `exactMatch`, run by `skillopt test` through the real openai SDK against a
 * scripted loopback server. The feedback names the missing and wrong calls one per line, `skillopt show
 * --case` prints the case's timeline, report.html embeds it, and `skillopt compare` of a run that calls
 * differently names each regressed case's first divergent step.
 */
import { readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseCallFindings } from '../../src/protocol/tool-feedback.ts';
import { startToolServer, type ScriptedReply } from '../helpers/tool-server.ts';
import {
  assertBuilt,
  miniProject,
  readJson,
  readJsonl,
  REPO,
  skillopt,
  tempDirs,
  writeConfig,
  writeFile,
} from './helpers.ts';

const tmp = tempDirs('traj-scorers');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const KEY_ENV = { OPENAI_COMPATIBLE_API_KEY: 'e2e-dummy-key' };

const SUITE = `import { defineSkillSuite, tool, toolCalls, finalState, exactMatch, weighted } from 'skillopt';
import { z } from 'zod';

defineSkillSuite({
  name: 'proc',
  tasks: 'benchmarks/proc/tasks.json',
  skill: 'skills/proc.md',
  tools: {
    run_command: tool({ description: 'Run a shell command', input: z.object({ cmd: z.string() }), handler: ({ cmd }, ctx) => { ctx.state.ran.push(cmd); return 'ran ' + cmd; } }),
    read_file: tool({ description: 'Read a file', input: z.object({ path: z.string() }), handler: ({ path }) => 'contents of ' + path }),
  },
  state: () => ({ ran: [] }),
  scorer: weighted([
    { scorer: toolCalls({ expected: (task) => [{ name: 'run_command', args: { cmd: 'train --smoke' } }, { name: 'read_file', args: { path: task.id + '/metrics.json' } }] }), weight: 2 },
    { scorer: finalState((s) => s.ran.includes('train --smoke')), weight: 1 },
    { scorer: exactMatch(), weight: 1 },
  ]),
});
`;

const IDS = ['p-1', 'p-2', 'p-3', 'p-4'];
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });

/** The procedure: smoke run, then read the metrics, then answer. `wrong`: those cases run the full training instead and never read. */
function procedure(wrong: Set<string>) {
  return (body: any): ScriptedReply => {
    const id: string = body.messages.find((m: any) => m.role === 'user').content;
    const turn = body.messages.filter((m: any) => m.role === 'assistant').length + 1;
    if (wrong.has(id))
      return turn === 1
        ? { content: 'training', tool_calls: [call('c1', 'run_command', { cmd: 'train' })] }
        : { content: 'done' };
    if (turn === 1)
      return { content: 'smoke test first', tool_calls: [call('c1', 'run_command', { cmd: 'train --smoke' })] };
    if (turn === 2) return { tool_calls: [call('c2', 'read_file', { path: `${id}/metrics.json` })] };
    return { content: 'done' };
  };
}

function project(dir: string, baseURL: string): string {
  miniProject(dir);
  rmSync(join(dir, 'benchmarks', 'mini'), { recursive: true });
  symlinkSync(join(REPO, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'), 'dir');
  writeFile(join(dir, 'benchmarks', 'proc', 'proc.skill.test.ts'), SUITE);
  writeFile(
    join(dir, 'benchmarks', 'proc', 'tasks.json'),
    JSON.stringify(IDS.map((id) => ({ id, input: id, expected: 'done', split: 'test' }))),
  );
  writeFile(join(dir, 'skills', 'proc.md'), '# Operator\n\nRun the smoke test, read the metrics, then answer.\n');
  return writeConfig(
    dir,
    'proc.yaml',
    `model:\n  backend: openai_compat\n  base_url: ${baseURL}\n  optimizer: m\n  target: m\n  retries: 0\n  timeout_s: 20\nenv:\n  name: proc\n  workers: 2\n`,
  );
}

describe('trajectory scorers and reports through the CLI', () => {
  test('partial credit and findings per line, show --case, report.html, compare names the divergent step', async () => {
    const good = await startToolServer(procedure(new Set()));
    const bad = await startToolServer(procedure(new Set(['p-2', 'p-3'])));
    try {
      const dir = tmp.make('proc');
      const base = join(dir, 'base');
      const cand = join(dir, 'cand');
      const r1 = await skillopt(
        ['test', '--config', project(dir, good.baseURL), '--split', 'all', '--cfg-options', `env.out_root=${base}`],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r1.code, r1.all).toBe(0);
      const r2 = await skillopt(
        [
          'test',
          '--config',
          writeConfig(
            dir,
            'bad.yaml',
            `model:\n  backend: openai_compat\n  base_url: ${bad.baseURL}\n  optimizer: m\n  target: m\n  retries: 0\n  timeout_s: 20\nenv:\n  name: proc\n  workers: 2\n`,
          ),
          '--split',
          'all',
          '--cfg-options',
          `env.out_root=${cand}`,
        ],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r2.code, r2.all).toBe(1);

      const rows = new Map(readJsonl(join(cand, 'results.jsonl')).map((r: any) => [r.id, r]));
      expect(rows.get('p-1')).toMatchObject({ pass: true, soft: 1 });
      const p2 = rows.get('p-2');
      // tool calls: the smoke run has wrong arguments (½), the read is missing: ¼ of weight 2; the state check fails; the answer is right
      expect(p2).toMatchObject({ pass: false, hard: 0, turns: 2, tool_calls: 1 });
      expect(p2.soft).toBeCloseTo((2 * 0.25 + 0 + 1) / 4);
      expect(parseCallFindings(p2.feedback)).toEqual([
        { kind: 'wrong', name: 'run_command', args: { cmd: 'train' }, expected: { cmd: 'train --smoke' } },
        { kind: 'missing', name: 'read_file', args: { path: 'p-2/metrics.json' } },
      ]);
      expect(p2.feedback).toContain('final_state: failed');

      const shown = await skillopt(['show', cand, '--case', 'p-2'], { cwd: dir });
      expect(shown.code, shown.all).toBe(0);
      expect(shown.stdout).toMatch(/trajectory: +2 turns · 1 tool call/);
      expect(shown.stdout).toContain('→ call run_command {"cmd":"train"}');
      expect(shown.stdout).toMatch(/← result run_command ok \d+ ms/);
      expect(shown.stdout).toContain('wrong arguments: run_command {"cmd":"train"} (expected {"cmd":"train --smoke"})');

      // report.html embeds every case's timeline
      const html = readFileSync(join(cand, 'report.html'), 'utf8');
      const data = JSON.parse(
        /<script type="application\/json" id="skillopt-data">([\s\S]*?)<\/script>/.exec(html)![1]!,
      );
      const cases = data.scores.cases;
      const at = cases.rows.findIndex((r: unknown[]) => r[cases.columns.indexOf('id')] === 'p-2');
      expect(cases.trajectories.rows[at]).toEqual([
        { t: 1, k: 'assistant', c: 'training', calls: [['c1', 'run_command', '{"cmd":"train"}']] },
        { t: 1, k: 'tool', r: ['run_command', true, 'ran train', expect.any(Number), 0] },
        { t: 2, k: 'assistant', c: 'done' },
      ]);

      const cmp = await skillopt(['compare', base, cand], { cwd: dir });
      expect([0, 1], cmp.all).toContain(cmp.code);
      const compare = readJson(join(cand, 'compare.json'));
      expect(compare.regressed.map((x: any) => x.id)).toEqual(['p-2', 'p-3']);
      for (const x of compare.regressed) {
        expect(x.divergence).toEqual({
          event: 1,
          baseline: { turn: 1, kind: 'call', name: 'run_command', args: { cmd: 'train --smoke' } },
          candidate: { turn: 1, kind: 'call', name: 'run_command', args: { cmd: 'train' } },
        });
      }
      expect(cmp.stdout).toContain('trajectories part at step 1:');
    } finally {
      await good.close();
      await bad.close();
    }
  });
});
