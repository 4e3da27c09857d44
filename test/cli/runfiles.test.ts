/**
 * Run files across versions, through the CLI run in process (test/helpers/cli.ts): the run folders the previous release wrote
 * (test/fixtures/runs-v1, no `schema_version`) still show, report and compare; hand-written results rows
 * with only the fields `compare` needs compare; a summary.json with a renamed field is one line naming the
 * file and the field in `show`, `report` and `compare` (exit 2).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { expectOneLineError, REPO, tempDirs } from '../e2e/helpers.ts';
import { cli } from '../helpers/cli.ts';

const tmp = tempDirs('runfiles');
afterAll(() => tmp.cleanup());

const V1 = join(REPO, 'test', 'fixtures', 'runs-v1');

/** A copy of a fixture run folder (report writes report.html into the folder it reads). */
function copyOf(name: string): string {
  const dir = join(tmp.make(name), name);
  cpSync(join(V1, name), dir, { recursive: true });
  return dir;
}

describe('run folders of the previous release', () => {
  test('an eval and an optimize run folder show and report', async () => {
    for (const name of ['eval', 'optimize']) {
      const dir = copyOf(name);
      const shown = await cli(['show', dir]);
      expect(shown.stderr).toBe('');
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`skillopt show · ${name === 'eval' ? 'eval' : 'optimize'}`);
      const report = await cli(['report', dir]);
      expect(report.stderr).toBe('');
      expect(report.code).toBe(0);
    }
  });

  test('the previous release eval compares with itself, and its compare.json folder shows', async () => {
    const r = await cli(['compare', copyOf('eval'), copyOf('eval'), '--fail-on-regression', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { schema_version: number; n_paired: number; verdict: string };
    expect(json).toMatchObject({ schema_version: 1, n_paired: 3, verdict: 'no significant change' });
    const shown = await cli(['show', copyOf('compare')]);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
  });

  test("the optimize run's test evaluation compares against its baseline", async () => {
    const opt = copyOf('optimize');
    const r = await cli(['compare', join(opt, 'test_eval_baseline'), opt, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      n_paired: 5,
      baseline: { split: 'test' },
      candidate: { split: 'test' },
    });
  });
});

describe('hand-written results rows', () => {
  test('rows with only suite, id, split, pass, hard, soft, trial, error_kind and usage compare', async () => {
    const row = (id: string, pass: boolean, trial: number) =>
      JSON.stringify({
        suite: 'hand',
        id,
        split: 'test',
        pass,
        hard: pass ? 1 : 0,
        soft: pass ? 1 : 0,
        trial,
        error_kind: null,
        usage: { calls: 1, attempts: 1, prompt_tokens: 10, completion_tokens: 1 },
      });
    const ids = Array.from({ length: 12 }, (_, i) => `case-${i}`);
    const dir = tmp.make('hand');
    const base = join(dir, 'base.jsonl');
    const cand = join(dir, 'cand.jsonl');
    writeFileSync(base, ids.flatMap((id) => [row(id, true, 0), row(id, true, 1)]).join('\n') + '\n');
    writeFileSync(cand, ids.flatMap((id, i) => [row(id, i >= 10, 0), row(id, i >= 10, 1)]).join('\n') + '\n');
    const r = await cli(['compare', base, cand, '--fail-on-regression', '--json', '--out', dir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout) as {
      verdict: string;
      n_paired: number;
      counts: { regressed: number };
      baseline: { trials: number };
    };
    expect(json).toMatchObject({
      verdict: 'regressed',
      n_paired: 12,
      counts: { regressed: 10 },
      baseline: { trials: 2 },
    });
  });
});

describe('a summary.json with a renamed field', () => {
  /** The eval fixture with summary.json's `overall` renamed to `totals`. */
  function renamed(): string {
    const dir = copyOf('eval');
    const file = join(dir, 'summary.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"overall":', '"totals":'));
    return dir;
  }
  const field = 'summary.json: field overall: expected object, received undefined';

  test('show', async () => expectOneLineError(await cli(['show', renamed()]), field));
  test('report', async () => expectOneLineError(await cli(['report', renamed()]), field));
  test('compare', async () => expectOneLineError(await cli(['compare', copyOf('eval'), renamed()]), field));
});
