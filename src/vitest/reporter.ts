/**
 * The skillopt reporter: collects every case's record from task meta (so it also works on merged blob
 * reports), shows progress, writes results.jsonl and summary.json, prints a compact table with the worst
 * cases and their feedback, hands the run to whoever listens (CLI, optimizer), and sets the exit code
 * of the run's verdict (src/suite/verdict.ts: 0 pass, 1 fail, 2 usage error, 3 inconclusive).
 */
import { join } from 'node:path';
import pc from 'picocolors';
import type { Reporter, TestCase, TestModule, TestRunEndReason, TestSpecification, Vitest } from 'vitest/node';
import { displayPath } from '../util/paths.ts';
import { currentHost, type SessionHost } from './host.ts';
import { takeOverFileShard } from '../vitest-internals.ts';
import { caseOutcomes } from '../suite/summary.ts';
import {
  casesSpanS,
  GATE_TEST_NAME,
  rowsOf,
  RunCollector,
  suiteLoaded,
  type SerializedError,
} from './reporter-collector.ts';
import { renderTable } from './reporter-table.ts';
import { reportModule, summarize, writeRunFiles } from './reporter-run-files.ts';
import { printable } from '../util/print.ts';

export { casesSpanS, collectRun, RunCollector } from './reporter-collector.ts';
export { renderTable } from './reporter-table.ts';
export { summarize, writeRunFiles } from './reporter-run-files.ts';

const isSkillFile = (moduleId: string) => /\.skill\.test\.[cm]?[jt]s$/.test(moduleId);

export class SkillReporter implements Reporter {
  /**
   * The session host of this reporter's Vitest instance (the plugin's); without one, the process's current
   * host. Several Vitest instances of one process (a matrix run's lanes) each report to their own.
   */
  constructor(private readonly boundHost?: SessionHost) {}

  private get host(): SessionHost | undefined {
    return this.boundHost ?? currentHost();
  }

  private vitest: Vitest | undefined;
  private started = 0;
  private expected = 0;
  private done = 0;
  private passed = 0;
  private failed = 0;
  private errored = 0;
  private nextProgress = 0;
  private collector = new RunCollector();

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification> = []): void {
    this.takeOverShard(specifications);
    this.started = performance.now();
    this.expected = this.done = this.passed = this.failed = this.errored = 0;
    this.nextProgress = 0;
    this.collector = new RunCollector();
  }

  onTestModuleCollected(mod: TestModule): void {
    if (isSkillFile(mod.moduleId) && suiteLoaded(mod)) this.host?.suiteLoaded?.();
    // Cases that will run: not the suite gate (it records no case), not those `-t` or `.skip` left out.
    for (const t of mod.children.allTests()) {
      if (t.name !== GATE_TEST_NAME && t.options.mode !== 'skip' && t.options.mode !== 'todo') this.expected++;
    }
  }

  onTestCaseResult(test: TestCase): void {
    if (this.done === 0) void reportModule().catch(() => {}); // a failure surfaces where the report is written
    this.collector.add(test);
    const rows = rowsOf(test.meta());
    if (rows.length === 0) return;
    const host = this.host;
    if (host?.caseSink) for (const row of rows) host.caseSink(row);
    this.done++;
    const outcome = caseOutcomes(rows)[0]!;
    if (outcome.errored) this.errored++;
    else if (outcome.passed) this.passed++;
    else this.failed++;
    if (host?.quiet || this.expected < 20) return;
    const step = Math.max(10, Math.ceil(this.expected / 10));
    if (this.done >= this.nextProgress + step) {
      this.nextProgress = this.done - (this.done % step);
      this.log(
        pc.dim(
          `[skillopt] ${this.done}/${this.expected} cases · ${this.passed} pass · ${this.failed} fail · ${this.errored} errored`,
        ),
      );
    }
  }

  async onTestRunEnd(
    modules: ReadonlyArray<TestModule>,
    unhandled: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason,
  ): Promise<void> {
    // Loaded (it started loading with the run) before the run is handed on: from here on nothing waits for I/O,
    // so the listeners' own output (the watch report) still follows the table.
    await reportModule();
    const host = this.host;
    // A merged blob report replays in milliseconds: then the cases' own time span is the better figure.
    const wall = Math.max((performance.now() - this.started) / 1000, casesSpanS(modules));
    const pattern = this.vitest?.config?.testNamePattern;
    const result = this.collector.result(modules, unhandled, wall, {
      nameFilter: pattern ? pattern.source : null,
      cancelled: reason === 'interrupted',
      host,
    });
    host?.sink?.(result);
    if (host?.quiet || !result.skillRun) return;
    // The verdict decides the exit code of a run of skill suites (3 = inconclusive, 2 = our input is wrong).
    process.exitCode = result.verdict.exit_code;
    if (result.records.length === 0 && result.gates.length === 0) return;
    const outDir = host ? host.outDir : join('outputs', 'vitest-skills');
    const summary = outDir ? await writeRunFiles(outDir, result) : summarize(result);
    result.summary = summary;
    this.log(`\n${renderTable(summary, result.records)}`);
    if (outDir) this.log(pc.dim(`  results: ${displayPath(join(outDir, 'results.jsonl'))}, summary.json, report.html`));
  }

  /**
   * Plain `vitest run --shard=i/n` of skill suites only: Vitest shards whole files (and refuses more shards
   * than files), so one large suite could not be split. The suites split their tasks instead: the shard
   * moves into the session before Vitest reads it. A run that mixes other test files keeps Vitest's sharding.
   */
  private takeOverShard(specifications: ReadonlyArray<TestSpecification>): void {
    const host = this.host;
    if (!this.vitest || !host || specifications.length === 0 || !specifications.every((s) => isSkillFile(s.moduleId)))
      return;
    const shard = takeOverFileShard(this.vitest);
    if (!shard) return;
    host.session = { ...host.session, shard };
    for (const project of this.vitest.projects) project.provide('skillopt', host.session);
  }

  private log(raw: string): void {
    const line = printable(raw);
    if (this.vitest) this.vitest.logger.log(line);
    else console.log(line);
  }
}
