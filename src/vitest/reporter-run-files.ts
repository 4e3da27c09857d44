/** A run's files: results.jsonl, summary.json and report.html. */
import { join } from 'node:path';
import { runSummary, type RunSummary } from '../suite/summary.ts';
import type { CaseRecord } from '../types.ts';
import { writeJsonAtomic, writeLinesAtomic } from '../util/atomic.ts';
// the two schemas it writes, not every run file's (src/runfiles/index.ts builds them all: CPU before the first request)
import { buildRunFile } from '../runfiles/parse.ts';
import { RunSummarySchema } from '../runfiles/summary.ts';
import type { RunResult } from './host.ts';

/** The run's summary: scores with their counts, gates, what was selected, and the verdict. */
export function summarize(result: RunResult): RunSummary {
  return runSummary(result.records, {
    wallTimeS: result.wallTimeS,
    gates: result.gates,
    selections: result.selections,
    verdict: result.verdict,
  });
}

function* jsonLines(records: readonly CaseRecord[]): Generator<string> {
  for (const r of records) yield JSON.stringify(r);
}

/** The HTML report's modules: loaded once the first case is back, not before the first model call. */
export const reportModule = () => import('../report/index.ts');

/** Write results.jsonl, summary.json and report.html into `outDir`; returns the summary. */
export async function writeRunFiles(outDir: string, result: RunResult): Promise<RunSummary> {
  const { writeRunReport } = await reportModule();
  const summary = summarize(result);
  writeLinesAtomic(join(outDir, 'results.jsonl'), jsonLines(result.records));
  writeJsonAtomic(
    join(outDir, 'summary.json'),
    buildRunFile(RunSummarySchema, { ...summary, errors: result.errors }, 'summary.json'),
  );
  writeRunReport(outDir, { kind: 'test', records: result.records, summary });
  return summary;
}
