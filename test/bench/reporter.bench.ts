/**
 * Reporter cost per case (target: well under 1 ms). One iteration = the reporter handling a run of
 * 1,000 finished cases: onTestCaseResult for each, then onTestRunEnd (collect, summarise, write
 * results.jsonl + summary.json). Divide the mean by 1,000 for the per-case figure.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bench, describe } from 'vitest';
import { fakeRun, reportRun } from './reporter-run.ts';

const N = 1000;
const run = fakeRun(N);
const outDir = mkdtempSync(join(tmpdir(), 'skillopt-bench-'));

describe('reporter', () => {
  bench(`handle a run of ${N} cases (per case = mean / ${N})`, async () => void (await reportRun(run, outDir)), { time: 2000 });
});
