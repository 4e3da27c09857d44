/**
 * The skillopt reporter: collects every case's record from task meta (so it also works on merged blob
 * reports), shows progress, writes results.jsonl and summary.json, prints a compact table with the worst
 * cases and their feedback, hands the run to whoever listens (CLI, optimizer), and sets the exit code
 * of the run's verdict (src/suite/verdict.ts: 0 pass, 1 fail, 2 usage error, 3 inconclusive).
 */
import { join } from 'node:path';
import pc from 'picocolors';
import type { Reporter, TestCase, TestModule, TestRunEndReason, TestSpecification, Vitest } from 'vitest/node';
import { oneLineClip } from '../util/clip.ts';
import { runSummary, type RunSummary } from '../suite/summary.ts';
import type { CaseRecord, SplitName } from '../types.ts';
import { writeJsonAtomic, writeLinesAtomic } from '../util/atomic.ts';
import { buildRunFile, RunSummarySchema } from '../runfiles/index.ts';
import { oneLine } from '../util/errors.ts';
import { kTok, score3 } from '../util/format.ts';
import { escapeControls } from '../util/control-chars.ts';
import { displayPath } from '../util/paths.ts';
import { redactText } from '../util/redact.ts';
import { currentHost, type RunResult } from './host.ts';
import type { GateVerdict, SuiteManifest, SuiteSelection, UnmatchedPattern } from '../contract/session.ts';
import { withShardBlob } from './shard-blob.ts';
import { caseOutcomes, scoreStats, type ScoreStats } from '../suite/summary.ts';
import { decideVerdict, evaluateGate, selectionNote, type LoadError } from '../suite/verdict.ts';
import { renderSkillLoaded, renderTriggerTable } from '../suite/trigger-metrics.ts';

type SerializedError = { message?: string; name?: string };

/** The name of the synthetic gate case `defineSkillSuite` adds (not a task id: ids have no spaces). */
const GATE_TEST_NAME = 'suite gate';

/** Errors that are a mistake in the user's input (dataset, config, scorer options): exit 2, not a crash. */
const USAGE_ERRORS = new Set(['SkillOptError', 'ConfigError', 'DatasetError', 'ScorerError', 'SkillFormatError']);

const isSkillFile = (moduleId: string) => /\.skill\.test\.[cm]?[jt]s$/.test(moduleId);

/**
 * One copy of each long message text. A worker's records share their skill text (every case's system
 * message), but each record crosses to this thread as a copy of its own: 10,000 cases of a 10 kB skill
 * would hold 100 MB of the same text.
 */
class TextPool {
  private readonly texts = new Map<string, string>();

  intern(text: string): string {
    if (text.length < 200) return text;
    const pooled = this.texts.get(text);
    if (pooled !== undefined) return pooled;
    this.texts.set(text, text);
    return text;
  }

  /** A short text most records repeat (a role, the suite, a split, the skill hash, a label). */
  private word(text: string): string {
    const pooled = this.words.get(text);
    if (pooled !== undefined) return pooled;
    if (this.words.size < MAX_WORDS) this.words.set(text, text);
    return text;
  }

  private readonly words = new Map<string, string>();

  /**
   * Make a record's long message texts and its repeated short fields the pooled copies (the same strings:
   * nothing a reader sees changes). Each record crosses from the worker with copies of its own.
   */
  internRecord(record: CaseRecord): void {
    for (const m of record.messages) {
      m.role = this.word(m.role) as typeof m.role;
      if (typeof m.content === 'string') m.content = this.intern(m.content);
    }
    record.suite = this.word(record.suite);
    record.skill_hash = this.word(record.skill_hash);
    if (record.split !== null) record.split = this.word(record.split) as SplitName;
    if (record.task_type !== null) record.task_type = this.word(record.task_type);
    if (typeof record.expected === 'string' && record.expected.length <= 80) record.expected = this.word(record.expected);
  }
}

/** Distinct short texts pooled per run at most (labels and splits are few; past this they are not pooled). */
const MAX_WORDS = 10_000;

/**
 * What a run's skill tests told the reporter, gathered case by case as results arrive. A merged blob
 * report replays every shard's cases through here, although its final module list keeps one shard per
 * file, so the run is built from these events: one record per (suite, task id), none lost, none twice.
 */
export class RunCollector {
  private readonly records = new Map<string, CaseRecord>();
  private readonly texts = new TextPool();
  /** Each record's Vitest test id and shard, which give its definition order when the run is written. */
  private readonly origin = new Map<string, { testId: string; shard: number }>();
  private readonly gates = new Map<string, GateVerdict>();
  private readonly selections = new Map<string, SuiteSelection>();
  /** Task cases a Vitest filter (`-t` under plain Vitest, `.skip`) left out, per selection key. */
  private readonly skipped = new Map<string, Set<string>>();
  private readonly manifests = new Map<string, SuiteManifest>();
  private readonly otherSuites = new Set<string>();
  private readonly unmatched = new Map<string, UnmatchedPattern>();

  add(test: TestCase): void {
    const meta = test.meta();
    const selection = test.parent?.type === 'suite' ? test.parent.meta().skilloptSuite : undefined;
    const selKey = selection ? `${selection.suite}\u0000${selection.shard?.index ?? 0}` : null;
    if (selection && selKey) this.selections.set(selKey, selection);
    for (const row of rowsOf(meta)) {
      const key = `${row.suite}\u0000${row.id}\u0000${row.trial ?? 0}`;
      if (this.records.get(key) === row) continue;
      this.texts.internRecord(row);
      this.records.set(key, row);
      this.origin.set(key, { testId: test.id, shard: selection?.shard?.index ?? 0 });
    }
    if (meta.skilloptGate) this.gates.set(meta.skilloptGate.suite, meta.skilloptGate);
    if (meta.skilloptManifest) this.manifests.set(meta.skilloptManifest.suite, meta.skilloptManifest);
    if (meta.skilloptOtherSuite) this.otherSuites.add(meta.skilloptOtherSuite);
    if (meta.skilloptUnmatched) this.unmatched.set(meta.skilloptUnmatched.suite, meta.skilloptUnmatched);
    if (selKey && !meta.skillopt && test.name !== GATE_TEST_NAME && (test.options.mode === 'skip' || test.options.mode === 'todo')) {
      let set = this.skipped.get(selKey);
      if (!set) this.skipped.set(selKey, (set = new Set()));
      set.add(test.name);
    }
  }

  /** Records by suite, then shard, then where the suite defined them. */
  private orderedRecords(): CaseRecord[] {
    // definition order (Vitest ids are `<file>_<i>_<j>`), then trial, so files and reports do not follow arrival order
    const order = new Map<string, number[]>();
    for (const [key, { testId, shard }] of this.origin) {
      order.set(key, [shard, ...testId.split('_').slice(1).map(Number), this.records.get(key)!.trial ?? 0]);
    }
    const position = (key: string) => order.get(key) ?? [];
    const keys = [...this.records.keys()].sort((a, b) => {
      const sa = this.records.get(a)!.suite;
      const sb = this.records.get(b)!.suite;
      if (sa !== sb) return sa < sb ? -1 : 1;
      const pa = position(a);
      const pb = position(b);
      for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
        const d = (pa[i] ?? -1) - (pb[i] ?? -1);
        if (d !== 0) return d;
      }
      return 0;
    });
    return keys.map((k) => this.records.get(k)!);
  }

  /** Every suite's selection, shards of one suite added up, Vitest-skipped cases taken out. */
  suiteSelections(): SuiteSelection[] {
    const bySuite = new Map<string, SuiteSelection>();
    for (const [key, sel] of this.selections) {
      const ran = { ...sel, selected: sel.selected - (this.skipped.get(key)?.size ?? 0) };
      const prev = bySuite.get(sel.suite);
      if (!prev) {
        bySuite.set(sel.suite, ran);
        continue;
      }
      bySuite.set(sel.suite, {
        ...prev,
        selected: prev.selected + ran.selected,
        shard: null,
        filters: prev.filters.filter((f) => !f.startsWith('shard ')),
      });
    }
    return [...bySuite.values()].sort((a, b) => a.suite.localeCompare(b.suite));
  }

  result(
    modules: ReadonlyArray<TestModule>,
    unhandled: ReadonlyArray<SerializedError>,
    wallTimeS: number,
    opts: { nameFilter?: string | null; cancelled?: boolean } = {},
  ): RunResult {
    const loadErrors: LoadError[] = [];
    const files: string[] = [];
    for (const mod of modules) {
      files.push(mod.moduleId);
      for (const err of mod.errors()) loadErrors.push(loadError(mod.relativeModuleId, err));
      for (const test of mod.children.allTests()) {
        this.add(test); // a case whose result event never came (idempotent for the others)
        const meta = test.meta();
        const result = test.result();
        if (result.state === 'failed' && !meta.skillopt && !meta.skilloptGate) {
          // A test that failed before recording anything (a bug in a custom scorer or message builder).
          for (const err of result.errors ?? []) loadErrors.push(loadError(`${mod.relativeModuleId} > ${test.name}`, err));
        }
      }
    }
    for (const err of unhandled) loadErrors.push({ message: `unhandled error: ${oneLine(err.message ?? '')}`, usage: false });
    const records = this.orderedRecords();
    const selections = this.suiteSelections();
    if (opts.nameFilter) {
      for (const s of selections) if (!s.filters.some((f) => f.startsWith('-t '))) s.filters = [...s.filters, `-t ${opts.nameFilter}`];
    }
    // The gate is decided here, on the cases that ran, even when a filter left the `suite gate` case out.
    const gates = selections
      .filter((s) => s.gate !== null)
      .map((s) => evaluateGate(s.suite, scoreStats(records.filter((r) => r.suite === s.suite)), s.gate!));
    for (const g of this.gates.values()) if (!gates.some((x) => x.suite === g.suite)) gates.push(g);
    const skillRun = records.length > 0 || selections.length > 0 || this.manifests.size > 0 || this.otherSuites.size > 0 || this.unmatched.size > 0;
    if (this.unmatched.size > 0 && selections.length === 0 && records.length === 0 && loadErrors.length === 0) {
      loadErrors.push({ message: unmatchedLine([...this.unmatched.values()]), usage: true });
    }
    if (skillRun && selections.length === 0 && records.length === 0 && this.manifests.size === 0 && loadErrors.length === 0) {
      const wanted = currentHost()?.session.config.env.name;
      loadErrors.push({
        message: `no skill suite ran${wanted ? `: env.name '${wanted}' names none of the suites found (${[...this.otherSuites].sort().join(', ')})` : ''}`,
        usage: true,
      });
    }
    const verdict = decideVerdict({
      records,
      selected: selections.length ? selections.reduce((n, s) => n + s.selected, 0) : records.length,
      maxErrored: selections[0]?.max_errored ?? currentHost()?.session.config.evaluation.max_errored ?? 0,
      gates,
      loadErrors,
      missesFail: selections.some((s) => s.misses_fail),
      filters: [...new Set(selections.flatMap((s) => s.filters))],
      cancelled: opts.cancelled ?? false,
    });
    return {
      records,
      gates,
      selections,
      manifests: [...this.manifests.values()],
      errors: loadErrors.map((e) => e.message),
      loadErrors,
      verdict,
      skillRun: skillRun || loadErrors.length > 0,
      files,
      wallTimeS,
    };
  }
}

/** A case's rows: one per trial (trial 0 alone is `skillopt`). */
function rowsOf(meta: ReturnType<TestCase['meta']>): CaseRecord[] {
  return meta.skilloptTrials ?? (meta.skillopt ? [meta.skillopt] : []);
}

/**
 * Whether a collected skill file has cases to run, or failed for a reason other than the user's input
 * (a bug, shown in full): not when its only tests are markers of a suite with nothing selected.
 */
function suiteLoaded(mod: TestModule): boolean {
  const errors = mod.errors();
  if (errors.length > 0) return !errors.some((e) => USAGE_ERRORS.has(e.name ?? ''));
  for (const t of mod.children.allTests()) {
    const meta = t.meta();
    if (!meta.skilloptUnmatched && !meta.skilloptOtherSuite) return true;
  }
  return false;
}

/** `-t x: the pattern matched none of the 30 tasks of suite 'mini' (…)`: one line for every suite it missed. */
function unmatchedLine(missed: UnmatchedPattern[]): string {
  const tasks = missed.reduce((n, m) => n + m.tasks, 0);
  const suites = missed.map((m) => `'${m.suite}'`).sort().join(', ');
  const within = [...new Set(missed.flatMap((m) => m.filters))];
  const example = missed.find((m) => m.example)?.example;
  return (
    `-t ${missed[0]!.pattern}: the pattern matched none of the ${tasks} task${tasks === 1 ? '' : 's'} of suite${missed.length === 1 ? '' : 's'} ${suites}` +
    (within.length ? ` (${within.join(', ')})` : '') +
    ` — it is a regular expression matched against '<suite> <task id>'${example ? `, e.g. '${example}'` : ''}`
  );
}

function loadError(where: string, err: SerializedError): LoadError {
  return { message: `${where}: ${oneLine(err.message ?? '')}`, usage: USAGE_ERRORS.has(err.name ?? '') };
}

/** Walk a finished run: records, gate verdicts, manifests, the verdict and the first concrete failure points. */
export function collectRun(
  modules: ReadonlyArray<TestModule>,
  unhandled: ReadonlyArray<SerializedError>,
  wallTimeS: number,
): RunResult {
  return new RunCollector().result(modules, unhandled, wallTimeS);
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

/** The compact table printed after a run. */
export function renderTable(summary: RunSummary, records: CaseRecord[], opts: { worst?: number } = {}): string {
  const lines: string[] = [];
  const sim = summary.simulated ? pc.yellow(' (simulated model)') : '';
  for (const [name, s] of Object.entries(summary.suites)) {
    lines.push(`${pc.bold(`skillopt · ${name}`)}${sim}`);
    const k = s.trials ?? 1;
    lines.push(pc.dim(`  split        n   pass   fail    err   pass-rate   hard    soft        95% CI${k > 1 ? '   flaky  pass@k  pass^k' : ''}`));
    const row = (label: string, st: ScoreStats) =>
      `  ${label.padEnd(9)} ${String(st.n).padStart(4)} ${String(st.passed).padStart(6)} ${String(st.failed).padStart(6)} ${String(st.errored).padStart(6)}   ${score3(st.pass_rate).padStart(9)}  ${score3(st.mean_hard).padStart(5)}  ${score3(st.mean_soft).padStart(6)}  ${(st.pass_rate_ci ? `${score3(st.pass_rate_ci[0])}–${score3(st.pass_rate_ci[1])}` : '—').padStart(12)}` +
      (st.trials ? `  ${String(st.flaky).padStart(6)}  ${score3(st.pass_at_k ?? null).padStart(6)}  ${score3(st.pass_all_k ?? null).padStart(6)}` : '');
    for (const [split, st] of Object.entries(s.by_split)) lines.push(row(split, st));
    if (Object.keys(s.by_split).length > 1) lines.push(pc.bold(row('all', s)));
    const note = s.selection ? selectionNote([s.selection]) : null;
    if (note) lines.push(pc.dim(`  ${note}`));
    if (k > 1) lines.push(pc.dim(`  ${k} trials per task: a case passes with a pass fraction of at least 0.5; pass@k: any trial passed, pass^k: all did`));
    const u = s.usage;
    lines.push(
      pc.dim(
        `  tokens: target ${kTok(u.target.prompt_tokens)} in / ${kTok(u.target.completion_tokens)} out over ${u.target.calls} calls` +
          (u.judge.calls ? `; judge ${kTok(u.judge.prompt_tokens)} in / ${kTok(u.judge.completion_tokens)} out over ${u.judge.calls} calls` : '') +
          (s.mean_latency_ms !== null ? `; mean latency ${s.mean_latency_ms} ms` : ''),
      ),
    );
    if (s.trigger) lines.push(...renderTriggerTable(s.trigger));
    if (s.skill_loaded) lines.push(renderSkillLoaded(s.skill_loaded));
    const worst = caseOutcomes(records.filter((r) => r.suite === name))
      .filter((c) => c.errored || !c.passed || c.flaky)
      .sort((a, b) => Number(b.errored) - Number(a.errored) || (a.fraction ?? 0) - (b.fraction ?? 0) || (a.soft ?? 0) - (b.soft ?? 0) || a.id.localeCompare(b.id))
      .slice(0, opts.worst ?? 5);
    if (worst.length) {
      lines.push('  worst cases:');
      for (const c of worst) {
        const mark = c.errored ? pc.magenta('!') : c.passed ? pc.yellow('~') : pc.red('✗');
        const shown = c.rows.find((r) => !r.pass) ?? c.rows[0]!;
        const trials = c.rows.length > 1 ? pc.dim(`${c.passes}/${c.scored} `) : '';
        lines.push(`   ${mark} ${c.id.padEnd(12)} ${pc.dim(`[${shown.split ?? '-'}]`)} ${trials}${oneLineClip(shown.feedback, 110)}`);
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
  if (summary.verdict?.verdict === 'inconclusive') lines.push(pc.magenta(`  ${escapeControls(summary.verdict.reason ?? '', { layout: false })}`));
  return lines.join('\n');
}


/** The run's summary: scores with their counts, gates, what was selected, and the verdict. */
export function summarize(result: RunResult): RunSummary {
  return runSummary(result.records, { wallTimeS: result.wallTimeS, gates: result.gates, selections: result.selections, verdict: result.verdict });
}

function* jsonLines(records: readonly CaseRecord[]): Generator<string> {
  for (const r of records) yield JSON.stringify(r);
}

/** The HTML report's modules: loaded once the first case is back, not before the first model call. */
const reportModule = () => import('../report/index.ts');

/** Write results.jsonl, summary.json and report.html into `outDir`; returns the summary. */
export async function writeRunFiles(outDir: string, result: RunResult): Promise<RunSummary> {
  const { writeRunReport } = await reportModule();
  const summary = summarize(result);
  writeLinesAtomic(join(outDir, 'results.jsonl'), jsonLines(result.records));
  writeJsonAtomic(join(outDir, 'summary.json'), buildRunFile(RunSummarySchema, { ...summary, errors: result.errors }, 'summary.json'));
  writeRunReport(outDir, { kind: 'test', records: result.records, summary });
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
    if (isSkillFile(mod.moduleId) && suiteLoaded(mod)) currentHost()?.suiteLoaded?.();
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
    const host = currentHost();
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
        pc.dim(`[skillopt] ${this.done}/${this.expected} cases · ${this.passed} pass · ${this.failed} fail · ${this.errored} errored`),
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
    const host = currentHost();
    // A merged blob report replays in milliseconds: then the cases' own time span is the better figure.
    const wall = Math.max((performance.now() - this.started) / 1000, casesSpanS(modules));
    const pattern = this.vitest?.config?.testNamePattern;
    const result = this.collector.result(modules, unhandled, wall, { nameFilter: pattern ? pattern.source : null, cancelled: reason === 'interrupted' });
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
    const config = this.vitest?.config as (Vitest['config'] & { shard?: { index: number; count: number } }) | undefined;
    const host = currentHost();
    if (!config?.shard || !host || specifications.length === 0 || !specifications.every((s) => isSkillFile(s.moduleId))) return;
    const { index, count } = config.shard;
    host.session = { ...host.session, shard: { index, count } };
    for (const project of this.vitest!.projects) project.provide('skillopt', host.session);
    config.outputFile = withShardBlob(config.outputFile, { index, count }) as typeof config.outputFile;
    config.shard = undefined;
  }

  private log(raw: string): void {
    const line = redactText(raw);
    if (this.vitest) this.vitest.logger.log(line);
    else console.log(line);
  }
}
