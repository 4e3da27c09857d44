/**
 * What each case carries to the main thread (and into Vitest's own reporters and blob reports): its record
 * in `meta.skillopt`; the suite's selection once, on the suite, not copied into every case.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { assertBuilt, readJson, readJsonl, skillopt, tempDirs } from '../e2e/helpers.ts';

const tmp = tempDirs('case-meta');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

test('--reporter=json beside ours: every case has its record, only the suite has the selection', async () => {
  const out = tmp.make('json');
  const json = join(out, 'vitest.json');
  const r = await skillopt([
    'test',
    '--config',
    'configs/mini/sim.yaml',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${json}`,
    '--cfg-options',
    'evaluation.min_pass_rate=0.05',
    `env.out_root=${out}`,
  ]);
  expect(r.code).toBe(0);
  const report = readJson(json);
  const cases = report.testResults.flatMap(
    (f: { assertionResults: Array<{ title: string; meta: Record<string, unknown> }> }) => f.assertionResults,
  );
  expect(cases).toHaveLength(31); // 30 tasks and the suite gate
  const rows = readJsonl(join(out, 'results.jsonl'));
  for (const c of cases) {
    expect(c.meta).not.toHaveProperty('skilloptSuite');
    if (c.title === 'suite gate') expect(c.meta.skilloptGate).toMatchObject({ suite: 'mini', ok: true });
    else expect(c.meta.skillopt).toEqual(rows.find((row) => row.id === c.title));
  }
  // the selection still reached our reporter through the suite
  expect(readJson(join(out, 'summary.json')).suites.mini.selection).toMatchObject({
    suite: 'mini',
    total: 30,
    selected: 30,
  });
});
