/**
 * The skillopt reporter: collects every case's record from task meta (so it also works on merged blob
 * reports), shows progress, writes results.jsonl and summary.json, prints a compact table with the worst
 * cases and their feedback, hands the run to whoever listens (CLI, optimizer), and turns failed suite
 * gates into exit code 1.
 */
import { join } from 'node:path';
import pc from 'picocolors';
import type { Reporter, TestCase, TestModule, TestRunEndReason, Vitest } from 'vitest/node';
import { oneLineClip } from '../model/errors.ts';
import { runSummary, type RunSummary } from '../suite/summary.ts';
import type { CaseRecord } from '../types.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import { oneLine } from '../util/errors.ts';
import { score3 } from '../util/format.ts';
import { displayPath } from '../util/paths.ts';
import { currentHost, type RunResult } from './host.ts';
import type { GateVerdict, SuiteManifest } from './session.ts';

type SerializedError = { message?: string; name?: string };

/** The name of the synthetic gate case `defineSkillSuite` adds (not a task id: ids have no spaces). */
const GATE_TEST_NAME = 'suite gate';


/** Walk a finished run: records, gate verdicts, manifests, and the first concrete failure points. */
export function collectRun(
  modules: ReadonlyArray<TestModule>,
  unhandled: ReadonlyArray<SerializedError>,
  wallTimeS: number,
): RunResult {
  const records: CaseRecord[] = [];
  const gates: GateVerdict[] = [];
  const manifests: SuiteManifest[] = [];
  const errors: string[] = [];
  const files: string[] = [];
  for (const mod of modules) {
    files.push(mod.moduleId);
    for (const err of mod.errors()) errors.push(`${mod.relativeModuleId}: ${oneLine(err.message ?? '')}`);
    for (const test of mod.children.allTests()) {
      const meta = test.meta();
      if (meta.skillopt) records.push(meta.skillopt);
      if (meta.skilloptGate) gates.push(meta.skilloptGate);
      if (meta.skilloptManifest) manifests.push(meta.skilloptManifest);
      const result = test.result();
      if (result.state === 'failed' && !meta.skillopt && !meta.skilloptGate) {
        // A test that failed before recording anything (a bug in a custom scorer or message builder).
        for (const err of result.errors ?? []) errors.push(`${mod.relativeModuleId} > ${test.name}: ${oneLine(err.message ?? '')}`);
      }
    }
  }
  for (const err of unhandled) errors.push(`unhandled error: ${oneLine(err.message ?? '')}`);
  return { records, gates, manifests, errors, files, wallTimeS };
}

/** Sum over modules of the time from their first case's start to their last case's end, in seconds. */
export function casesSpanS(modules: ReadonlyArray<TestModule>): number {
  let total = 0;
  for (const mod of modules) {
    let first = Infinity;
    let last = -Infinity;
    for (const test of mod.children.allTests()) {
      const d = test.diagnostic();
      if (!d) continue;
      first = Math.min(first, d.startTime);
      last = Math.max(last, d.startTime + d.duration);
    }
    if (last > first) total += last - first;
  }
  return total / 1000;
}

function kTokens(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** The compact table printed after a run. */
export function renderTable(summary: RunSummary, records: CaseRecord[], opts: { worst?: number } = {}): string {
  const lines: string[] = [];
  const sim = summary.simulated ? pc.yellow(' (simulated model)') : '';
  for (const [name, s] of Object.entries(summary.suites)) {
    lines.push(`${pc.bold(`skillopt · ${name}`)}${sim}`);
    lines.push(pc.dim('  split        n   pass   fail    err   pass-rate   hard    soft'));
    const row = (label: string, st: { n: number; passed: number; failed: number; errored: number; pass_rate: number | null; mean_hard: number | null; mean_soft: number | null }) =>
      `  ${label.padEnd(9)} ${String(st.n).padStart(4)} ${String(st.passed).padStart(6)} ${String(st.failed).padStart(6)} ${String(st.errored).padStart(6)}   ${score3(st.pass_rate).padStart(9)}  ${score3(st.mean_hard).padStart(5)}  ${score3(st.mean_soft).padStart(6)}`;
    for (const [split, st] of Object.entries(s.by_split)) lines.push(row(split, st));
    if (Object.keys(s.by_split).length > 1) lines.push(pc.bold(row('all', s)));
    const u = s.usage;
    lines.push(
      pc.dim(
        `  tokens: target ${kTokens(u.target.prompt_tokens)} in / ${kTokens(u.target.completion_tokens)} out in ${u.target.calls} calls` +
          (u.judge.calls ? `; judge ${kTokens(u.judge.prompt_tokens)} in / ${kTokens(u.judge.completion_tokens)} out in ${u.judge.calls} calls` : '') +
          (s.mean_latency_ms !== null ? `; mean latency ${s.mean_latency_ms} ms` : ''),
      ),
    );
    const worst = records
      .filter((r) => r.suite === name && (!r.pass || r.error_kind))
      .sort((a, b) => Number(b.error_kind !== null) - Number(a.error_kind !== null) || a.soft - b.soft || a.id.localeCompare(b.id))
      .slice(0, opts.worst ?? 5);
    if (worst.length) {
      lines.push('  worst cases:');
      for (const r of worst) {
        const mark = r.error_kind ? pc.magenta('!') : pc.red('✗');
        lines.push(`   ${mark} ${r.id.padEnd(12)} ${pc.dim(`[${r.split ?? '-'}]`)} ${oneLineClip(r.feedback, 110)}`);
      }
    }
    if (s.gate) {
      const g = s.gate;
      const what = [
        g.thresholds.minPassRate > 0 ? `pass rate ≥ ${g.thresholds.minPassRate}` : '',
        g.thresholds.minMeanHard > 0 ? `mean hard ≥ ${g.thresholds.minMeanHard}` : '',
        g.thresholds.minMeanSoft > 0 ? `mean soft ≥ ${g.thresholds.minMeanSoft}` : '',
      ].filter(Boolean).join(', ');
      lines.push(
        g.ok ? `  suite gate (${what}): ${pc.green('held')}` : `  suite gate (${what}): ${pc.red('FAILED')} — ${g.reasons.join('; ')}`,
      );
    }
  }
  return lines.join('\n');
}


/** Write results.jsonl and summary.json into `outDir`; returns the summary. */
export function writeRunFiles(outDir: string, result: RunResult): RunSummary {
  const summary = runSummary(result.records, { wallTimeS: result.wallTimeS, gates: result.gates });
  writeFileAtomic(join(outDir, 'results.jsonl'), result.records.map((r) => JSON.stringify(r)).join('\n') + (result.records.length ? '\n' : ''));
  writeJsonAtomic(join(outDir, 'summary.json'), { ...summary, errors: result.errors });
  return summary;
}


export class SkillReporter implements Reporter {
  private vitest: Vitest | undefined;
  private started = 0;
  private expected = 0;
  private done = 0;
  private passed = 0;
  private failed = 0;
  private errored = 0;
  private nextProgress = 0;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunStart(): void {
    this.started = performance.now();
    this.expected = this.done = this.passed = this.failed = this.errored = 0;
    this.nextProgress = 0;
  }

  onTestModuleCollected(mod: TestModule): void {
    // Cases that will run: not the suite gate (it records no case), not those `-t` or `.skip` left out.
    for (const t of mod.children.allTests()) {
      if (t.name !== GATE_TEST_NAME && t.options.mode !== 'skip' && t.options.mode !== 'todo') this.expected++;
    }
  }

  onTestCaseResult(test: TestCase): void {
    const rec = test.meta().skillopt;
    if (!rec) return;
    const host = currentHost();
    host?.caseSink?.(rec);
    this.done++;
    if (rec.error_kind) this.errored++;
    else if (rec.pass) this.passed++;
    else this.failed++;
    if (host?.quiet || this.expected < 20) return;
    const step = Math.max(10, Math.ceil(this.expected / 10));
    if (this.done >= this.nextProgress + step) {
      this.nextProgress = this.done - (this.done % step);
      this.log(
        pc.dim(`[skillopt] ${this.done}/${this.expected} cases · ${this.passed} pass · ${this.failed} fail · ${this.errored} errored`),
      );
    }
  }

  onTestRunEnd(
    modules: ReadonlyArray<TestModule>,
    unhandled: ReadonlyArray<SerializedError>,
    _reason: TestRunEndReason,
  ): void {
    const host = currentHost();
    // A merged blob report replays in milliseconds: then the cases' own time span is the better figure.
    const wall = Math.max((performance.now() - this.started) / 1000, casesSpanS(modules));
    const result = collectRun(modules, unhandled, wall);
    host?.sink?.(result);
    if (host?.quiet) return;
    if (result.records.length === 0 && result.gates.length === 0) return;
    const outDir = host ? host.outDir : join('outputs', 'vitest-skills');
    const summary = outDir
      ? writeRunFiles(outDir, result)
      : runSummary(result.records, { wallTimeS: result.wallTimeS, gates: result.gates });
    result.summary = summary;
    this.log(`\n${renderTable(summary, result.records)}`);
    if (outDir) this.log(pc.dim(`  results: ${displayPath(join(outDir, 'results.jsonl'))}, summary.json`));
    if (result.gates.some((g) => !g.ok)) process.exitCode = 1;
  }

  private log(line: string): void {
    if (this.vitest) this.vitest.logger.log(line);
    else console.log(line);
  }
}
