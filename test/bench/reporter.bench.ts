/**
 * Reporter cost per case (target: well under 1 ms). One iteration = the reporter handling a run of
 * 1,000 finished cases: onTestCaseResult for each, then onTestRunEnd (collect, summarise, write
 * results.jsonl + summary.json). Divide the mean by 1,000 for the per-case figure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { benchmark } from './benchmark.ts';
import { fakeRun, reportRun } from './reporter-run.ts';

const N = 1000;
const run = fakeRun(N);
const outDir = mkdtempSync(join(tmpdir(), 'skillopt-bench-'));

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

benchmark(
  'reporter',
  (bench) => {
    bench.add(`handle a run of ${N} cases (per case = mean / ${N})`, async () => void (await reportRun(run, outDir)));
  },
  { time: 2000 },
);
