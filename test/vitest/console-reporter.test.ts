/**
 * Vitest's default console reporter, compact past LARGE_RUN cases: the pruning of the error summary, and
 * a `skillopt test` of 600 cases whose skill answers only one label in seven, end to end.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { errorsOfFirstFailures, LARGE_RUN, SHOWN_FAILURES } from '../../src/vitest/console-reporter.ts';
import { assertBuilt, readJson, readJsonl, REPO, skillopt, userVitestConfig } from '../e2e/helpers.ts';

// inside the repository, where `vitest` and `skillopt/vitest` resolve as they do for test/fixtures
mkdirSync(join(REPO, '.skillopt'), { recursive: true });
const dir = mkdtempSync(join(REPO, '.skillopt', 'console-reporter-'));
beforeAll(assertBuilt);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the error summary of a large run keeps the errors of the first failed tests and of the suites that failed themselves', () => {
  type Node = { type: string; result?: { state?: string; errors?: unknown[] }; tasks?: Node[] };
  const t = (state: string, errors: string[] = []): Node => ({ type: 'test', result: { state, errors } });
  const failedSuite: Node = {
    type: 'suite',
    result: { state: 'fail', errors: ['beforeAll failed'] },
    tasks: [t('pass')],
  };
  const file: Node = {
    type: 'suite',
    tasks: [
      { type: 'suite', tasks: [t('pass'), t('fail', ['a']), t('fail', ['b']), t('skip'), t('fail', ['c'])] },
      failedSuite,
    ],
  };
  const { files, hidden } = errorsOfFirstFailures<Node>([file, { type: 'suite', tasks: [t('fail', ['d'])] }], 2);
  expect(hidden).toBe(2);
  // every test is still there, with its state (the summary counts them); the later failures lose their errors
  expect(files[0]!.tasks![0]!.tasks!.map((x) => [x.result!.state, x.result!.errors])).toEqual([
    ['pass', []],
    ['fail', ['a']],
    ['fail', ['b']],
    ['skip', []],
    ['fail', []],
  ]);
  expect(files[0]!.tasks![1]).toBe(failedSuite);
  expect(files[1]!.tasks![0]!.result).toEqual({ state: 'fail', errors: [] });
  expect(file.tasks![0]!.tasks![4]!.result!.errors).toEqual(['c']); // the run's own tree is untouched
});

test(`a run of more than ${LARGE_RUN} failing cases lists the first ${SHOWN_FAILURES}, says how many more, and keeps every case in results.jsonl`, async () => {
  mkdirSync(join(dir, 'suite'));
  const n = LARGE_RUN + 100;
  const tasks = Array.from({ length: n }, (_, i) => ({
    id: `c${String(i).padStart(4, '0')}`,
    input: `The job failed with Code${i % 7}.`,
    expected: `label${i % 7}`,
  }));
  writeFileSync(join(dir, 'suite', 'tasks.json'), JSON.stringify(tasks));
  writeFileSync(join(dir, 'suite', 'skill.md'), '- When the input mentions `Code0`, answer `label0`.\n');
  writeFileSync(
    join(dir, 'suite', 'large.skill.test.ts'),
    `import { defineSkillSuite, exactMatch } from 'skillopt';
defineSkillSuite({ name: 'large', tasks: 'suite/tasks.json', skill: 'suite/skill.md', scorer: exactMatch() });
`,
  );
  writeFileSync(join(dir, 'vitest.config.ts'), userVitestConfig('suite/*.skill.test.ts'));
  writeFileSync(join(dir, 'skillopt.yaml'), 'model: { backend: simulated }\nenv: { name: large, workers: 64 }\n');
  const out = join(dir, 'out');
  const r = await skillopt(['test', '--cfg-options', `env.out_root=${out}`], { cwd: dir });
  expect(r.code, r.all.slice(-3000)).toBe(1);
  const failed = readJson(join(out, 'summary.json')).overall.failed as number;
  expect(failed).toBeGreaterThan(SHOWN_FAILURES * 2);
  expect(readJsonl(join(out, 'results.jsonl'))).toHaveLength(n);
  // one line per listed case under the file's line, then the count of the rest; the same for the error blocks
  expect(r.stdout.match(/^\s+× c\d{4}/gm)).toHaveLength(SHOWN_FAILURES);
  expect(r.stdout).toContain(`… and ${failed - SHOWN_FAILURES} more failed cases\n`);
  expect(r.stderr.match(/ FAIL .*large\.skill\.test\.ts > large > c\d{4}/g)).toHaveLength(SHOWN_FAILURES);
  expect(r.stderr).toContain(`Failed Tests ${failed}`);
  expect(r.stderr).toContain(
    `… and ${failed - SHOWN_FAILURES} more failed cases: the worst are in the skillopt table below, every case in results.jsonl`,
  );
  expect(r.all).toMatch(new RegExp(`Tests\\s+${failed} failed \\| ${n - failed} passed \\(${n}\\)`));
});
