/**
 * `skillopt compare` as a process: its exit codes and which stream gets what. The comparison itself (its
 * verdicts, figures, files and errors) is tested in process in test/cli/compare.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { assertBuilt, expectOneLineError, readJson, skillopt, tempDirs } from './helpers.ts';
import { ids, row, writeResults } from '../compare/rows.ts';

const tmp = tempDirs('compare');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

function outRoot(name: string, fail: (i: number) => boolean): string {
  const dir = tmp.make(name);
  writeResults(
    join(dir, 'results.jsonl'),
    ids(59).map((id, i) => row(id, !fail(i))),
  );
  return dir;
}

test('a regression under --fail-on-regression: exit 1, the report on stdout, nothing on stderr, the files written', async () => {
  const allPass = outRoot('all-pass', () => false);
  const tenRegressions = outRoot('ten-regressions', (i) => i < 10);
  const r = await skillopt(['compare', allPass, tenRegressions, '--fail-on-regression'], { cwd: tmp.make('cwd') });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(/^\s+verdict\s+REGRESSED/m);
  expect(readJson(join(tenRegressions, 'compare.json'))).toMatchObject({ verdict: 'regressed', exit_code: 1 });
  expect(readFileSync(join(tenRegressions, 'compare.md'), 'utf8')).toContain('**regressed**');
  const swapped = await skillopt(['compare', tenRegressions, allPass, '--fail-on-regression', '--json'], {
    cwd: tmp.make('cwd'),
  });
  expect(swapped.code).toBe(0);
  expect(JSON.parse(swapped.stdout)).toMatchObject({ verdict: 'improved' });
});

test('a usage error: exit 2, one line on stderr, nothing on stdout', async () => {
  const r = await skillopt(['compare', outRoot('one', () => false)], { cwd: tmp.make('cwd') });
  expectOneLineError(r, 'compare needs two runs');
  expect(r.stdout).toBe('');
});
