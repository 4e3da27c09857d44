/**
 * The collector: gathers every case's record from task meta (so it also works on merged blob reports)
 * and builds the run (records, gates, selections, load errors and the verdict of src/suite/verdict.ts).
 */
import type { TestCase, TestModule } from 'vitest/node';
import type { CaseRecord } from '../types.ts';
import { oneLine } from '../util/errors.ts';
import { currentHost, type RunResult, type SessionHost } from './host.ts';
import type { GateVerdict, SuiteManifest, SuiteSelection, UnmatchedPattern } from '../contract/session.ts';
import { scoreStats } from '../suite/summary.ts';
import { decideVerdict, evaluateGate, type LoadError } from '../suite/verdict.ts';
import { TextPool } from './reporter-text-pool.ts';

export type SerializedError = { message?: string; name?: string };

/** The name of the synthetic gate case `defineSkillSuite` adds (not a task id: ids have no spaces). */
export const GATE_TEST_NAME = 'suite gate';

/** Errors that are a mistake in the user's input (dataset, config, scorer options): exit 2, not a crash. */
const USAGE_ERRORS = new Set([
  'SkillOptError',
  'ConfigError',
  'DatasetError',
  'ScorerError',
  'SkillFormatError',
  'McpStartError',
]);

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
  /** Cases `env.max_cost` did not let start: why, by suite and id. */
  private readonly notRun = new Map<string, string>();

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
    if (meta.skilloptNotRun && selection) this.notRun.set(`${selection.suite}\u0000${test.name}`, meta.skilloptNotRun);
    if (
      selKey &&
      !meta.skillopt &&
      test.name !== GATE_TEST_NAME &&
      (test.options.mode === 'skip' || test.options.mode === 'todo')
    ) {
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
    opts: { nameFilter?: string | null; cancelled?: boolean; host?: SessionHost | undefined } = {},
  ): RunResult {
    const host = opts.host ?? currentHost();
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
          for (const err of result.errors ?? [])
            loadErrors.push(loadError(`${mod.relativeModuleId} > ${test.name}`, err));
        }
      }
    }
    for (const err of unhandled)
      loadErrors.push({ message: `unhandled error: ${oneLine(err.message ?? '')}`, usage: false });
    const records = this.orderedRecords();
    const selections = this.suiteSelections();
    if (opts.nameFilter) {
      for (const s of selections)
        if (!s.filters.some((f) => f.startsWith('-t '))) s.filters = [...s.filters, `-t ${opts.nameFilter}`];
    }
    // The gate is decided here, on the cases that ran, even when a filter left the `suite gate` case out.
    const gates = selections
      .filter((s) => s.gate !== null)
      .map((s) => {
        const rows = records.filter((r) => r.suite === s.suite);
        return evaluateGate(s.suite, scoreStats(rows), s.gate!, rows);
      });
    for (const g of this.gates.values()) if (!gates.some((x) => x.suite === g.suite)) gates.push(g);
    const skillRun =
      records.length > 0 ||
      selections.length > 0 ||
      this.manifests.size > 0 ||
      this.otherSuites.size > 0 ||
      this.unmatched.size > 0;
    if (this.unmatched.size > 0 && selections.length === 0 && records.length === 0 && loadErrors.length === 0) {
      loadErrors.push({ message: unmatchedLine([...this.unmatched.values()]), usage: true });
    }
    if (
      skillRun &&
      selections.length === 0 &&
      records.length === 0 &&
      this.manifests.size === 0 &&
      loadErrors.length === 0
    ) {
      const wanted = host?.session.config.env.name;
      loadErrors.push({
        message: `no skill suite ran${wanted ? `: env.name '${wanted}' names none of the suites found (${[...this.otherSuites].sort().join(', ')})` : ''}`,
        usage: true,
      });
    }
    const verdict = decideVerdict({
      records,
      selected: selections.length ? selections.reduce((n, s) => n + s.selected, 0) : records.length,
      maxErrored: selections[0]?.max_errored ?? host?.session.config.evaluation.max_errored ?? 0,
      gates,
      loadErrors,
      missesFail: selections.some((s) => s.misses_fail),
      filters: [...new Set(selections.flatMap((s) => s.filters))],
      cancelled: opts.cancelled ?? false,
      notRun: this.notRun.size ? { count: this.notRun.size, reason: [...this.notRun.values()][0]! } : null,
      sites: Object.fromEntries(selections.map((s) => [s.suite, s.site ?? null])),
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
export function rowsOf(meta: ReturnType<TestCase['meta']>): CaseRecord[] {
  return meta.skilloptTrials ?? (meta.skillopt ? [meta.skillopt] : []);
}

/**
 * Whether a collected skill file has cases to run, or failed for a reason other than the user's input
 * (a bug, shown in full): not when its only tests are markers of a suite with nothing selected.
 */
export function suiteLoaded(mod: TestModule): boolean {
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
  const suites = missed
    .map((m) => `'${m.suite}'`)
    .sort()
    .join(', ');
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
