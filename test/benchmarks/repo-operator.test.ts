/**
 * The repo-operator benchmark's world (benchmarks/repo-operator): the simulated shell recognizes the
 * training and eval-only commands, checks configs and knobs, refuses a long run before a smoke test and
 * writes a run's output folder; read_file / list_dir over the same tree; the dataset loads with its splits
 * and every expected call succeeds in a fresh repository, so a perfect procedure scores 1.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  createRepoState,
  listDir,
  readFile,
  runCommand,
  ShellError,
  SMOKE_KNOBS,
} from '../../benchmarks/repo-operator/shell.ts';
import { loadTasks } from '../../src/suite/dataset.ts';

const REPO = join(import.meta.dirname, '..', '..');
const DD = 'configs/dotnetdebug/local_mitko.yaml';
const shellError = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ShellError);
    return (e as Error).message;
  }
  throw new Error('expected a ShellError');
};

describe('run_command', () => {
  test('a smoke training writes the output folder and reports the best skill and metrics', () => {
    const s = createRepoState();
    const out = runCommand(
      s,
      `python3 scripts/train.py --config ${DD} --cfg-options ${SMOKE_KNOBS} env.out_root=outputs/dd_smoke`,
    );
    expect(out.split('\n')).toEqual([
      'best skill: outputs/dd_smoke/best_skill.md',
      'val hard 0.500 (baseline 0.000, best at step 1), smoke test on 2 tasks',
      'output folder: outputs/dd_smoke (best_skill.md, metrics.json, history.jsonl)',
      `config: ${DD} (optimizer openai_compat/mitko, target openai_compat/mitko)`,
    ]);
    expect(listDir(s, 'outputs/dd_smoke')).toBe('best_skill.md\nhistory.jsonl\nmetrics.json');
    expect(JSON.parse(readFile(s, 'outputs/dd_smoke/metrics.json')).best_val_hard).toBe(0.5);
    expect(s.commands).toEqual([
      expect.objectContaining({
        kind: 'train',
        ok: true,
        smoke: true,
        config: DD,
        out: 'outputs/dd_smoke',
        optimizerBackend: 'openai_compat',
        targetBackend: 'openai_compat',
      }),
    ]);
  });

  test('a full run before a smoke test is refused; after one it runs', () => {
    const s = createRepoState();
    const full = `python3 scripts/train.py --config ${DD} --cfg-options env.out_root=outputs/dd_full`;
    expect(shellError(() => runCommand(s, full))).toMatch(
      /^refused: a full training run of configs\/dotnetdebug\/local_mitko\.yaml \(train\.num_epochs=4, env\.limit=all\) takes hours; run a smoke test of this config first/,
    );
    expect(s.commands[0]).toMatchObject({ kind: 'train', ok: false, refused: true });
    expect(s.files.has('outputs/dd_full/best_skill.md')).toBe(false);
    // a smoke test of another config does not count
    runCommand(
      s,
      `python3 scripts/train.py --config configs/ticket-triage/local_mitko.yaml --cfg-options ${SMOKE_KNOBS}`,
    );
    expect(() => runCommand(s, full)).toThrow(/^refused/);
    runCommand(
      s,
      `source .venv/bin/activate && python3 scripts/train.py \\\n  --config ${DD} --cfg-options ${SMOKE_KNOBS}`,
    );
    expect(runCommand(s, full)).toMatch(/^best skill: outputs\/dd_full\/best_skill\.md\nval hard 0\.812/);
    // a smoke test given by the task counts too
    expect(runCommand(createRepoState([DD]), full)).toMatch(/^best skill: /);
  });

  test('concrete errors: unknown knob, missing config, missing skill, bad split, unknown command', () => {
    const s = createRepoState();
    expect(
      shellError(() => runCommand(s, `python3 scripts/train.py --config ${DD} --cfg-options train.epochs=1`)),
    ).toBe('scripts/train.py: error: unknown key in --cfg-options: train.epochs (did you mean train.num_epochs?)');
    expect(
      shellError(() => runCommand(s, 'python3 scripts/train.py --config configs/sql-tuning/local_mitko.yaml')),
    ).toBe(
      'scripts/train.py: error: config not found: configs/sql-tuning/local_mitko.yaml (configs/sql-tuning has: default.yaml)',
    );
    expect(shellError(() => runCommand(s, 'python3 scripts/train.py --cfg-options env.limit=2'))).toBe(
      'scripts/train.py: error: the following arguments are required: --config',
    );
    expect(
      shellError(() =>
        runCommand(s, `python3 scripts/eval_only.py --config ${DD} --skill outputs/nope/best_skill.md --split test`),
      ),
    ).toBe('scripts/eval_only.py: error: skill file not found: outputs/nope/best_skill.md');
    expect(
      shellError(() =>
        runCommand(
          s,
          `python3 scripts/eval_only.py --config ${DD} --skill outputs/dotnetdebug_0412/best_skill.md --split dev`,
        ),
      ),
    ).toMatch(/invalid choice: dev/);
    expect(shellError(() => runCommand(s, 'make train'))).toMatch(/^bash: make: command not found/);
    expect(shellError(() => runCommand(s, 'python3 scripts/finetune.py'))).toMatch(
      /can't open file 'scripts\/finetune\.py'/,
    );
    expect(s.commands.every((c) => !c.ok && c.error)).toBe(true);
  });

  test('an openai_compat backend without a base URL is an error; one backend alone is a mixed setup, reported', () => {
    const s = createRepoState();
    const sql = 'python3 scripts/train.py --config configs/sql-tuning/default.yaml --cfg-options';
    expect(shellError(() => runCommand(s, `${sql} model.target_backend=openai_compat ${SMOKE_KNOBS}`))).toMatch(
      /openai_compat needs model\.base_url/,
    );
    const out = runCommand(
      s,
      `${sql} model.target_backend=openai_compat model.base_url=http://localhost:8000/v1 ${SMOKE_KNOBS}`,
    );
    expect(out.split('\n')[0]).toBe(
      'warning: mixed backends: optimizer azure_openai, target openai_compat (model.backend azure_openai does not set them)',
    );
    expect(s.commands[1]).toMatchObject({ ok: true, optimizerBackend: 'azure_openai', targetBackend: 'openai_compat' });
  });

  test('eval-only reports the summary and the test score of the run the skill came from', () => {
    const s = createRepoState();
    const out = runCommand(
      s,
      `python3 scripts/eval_only.py --config ${DD} --skill outputs/dotnetdebug_0412/best_skill.md --split test --cfg-options env.out_root=outputs/e`,
    );
    expect(out.split('\n').slice(0, 3)).toEqual([
      'eval summary: outputs/e/eval_summary.json',
      'test hard 0.641 over 32 tasks',
      'skill: outputs/dotnetdebug_0412/best_skill.md',
    ]);
    expect(JSON.parse(readFile(s, 'outputs/e/eval_summary.json'))).toEqual({
      skill: 'outputs/dotnetdebug_0412/best_skill.md',
      split: 'test',
      n: 32,
      hard: 0.641,
    });
  });
});

describe('read_file and list_dir', () => {
  test('read the tree, record what was inspected, and say what is wrong with a bad path', () => {
    const s = createRepoState();
    expect(listDir(s, '.')).toBe('README.md\nconfigs/\ndata/\noutputs/\nscripts/\nskillopt/');
    expect(listDir(s, 'skillopt/envs/')).toBe('dotnetdebug/\nsql-tuning/\nticket-triage/');
    expect(readFile(s, './outputs/dotnetdebug_0601/train.log')).toContain(
      '"Connection refused: http://localhost:8000/v1"',
    );
    expect(shellError(() => readFile(s, 'outputs'))).toBe('read_file: outputs is a directory (use list_dir)');
    expect(shellError(() => readFile(s, 'outputs/x.md'))).toBe('read_file: no such file: outputs/x.md');
    expect(shellError(() => listDir(s, 'README.md'))).toBe('list_dir: README.md is a file (use read_file)');
    expect(s.lists).toEqual(['', 'skillopt/envs', 'README.md']);
    expect(s.reads).toEqual(['outputs/dotnetdebug_0601/train.log', 'outputs', 'outputs/x.md']);
    expect(runCommand(s, 'cat README.md')).toContain('never changes model weights');
  });
});

describe('the dataset', () => {
  const file = join(REPO, 'benchmarks', 'repo-operator', 'tasks.json');
  const tasks = loadTasks(file, { suite: 'repo-operator' }) as unknown as Array<{
    id: string;
    split?: string;
    input: string;
    smoked?: string[];
    expected: string;
    procedure: string;
    calls: Array<{ name: string; args: Record<string, string> }>;
    local: boolean;
    report: string[];
  }>;

  test('84 tasks with their own splits, 28 each; every procedure in every split', () => {
    expect(tasks.length).toBe(84);
    // the reference report holds every keyword the report is scored on
    for (const t of tasks) for (const k of t.report) expect(t.expected, t.id).toContain(k);
    expect(JSON.parse(readFileSync(file, 'utf8')).length).toBe(84);
    const bySplit = (s: string) => tasks.filter((t) => t.split === s);
    for (const s of ['train', 'val', 'test']) {
      expect(bySplit(s).length).toBe(28);
      expect(new Set(bySplit(s).map((t) => t.procedure)).size).toBe(14);
    }
  });

  test('every expected call succeeds in a fresh repository, in order, and leaves a followed procedure', () => {
    for (const t of tasks) {
      const s = createRepoState(t.smoked ?? []);
      for (const c of t.calls) {
        if (c.name === 'run_command') runCommand(s, c.args.cmd!);
        else if (c.name === 'read_file') readFile(s, c.args.path!);
        else listDir(s, c.args.path!);
      }
      expect(
        s.commands.every((c) => c.ok),
        t.id,
      ).toBe(true);
      if (t.local)
        expect(
          s.commands.every((c) => c.optimizerBackend === 'openai_compat' && c.targetBackend === 'openai_compat'),
          t.id,
        ).toBe(true);
      expect(t.report.length, t.id).toBeGreaterThan(0);
    }
  });
});
