/**
 * Rollouts of a skill on a list of task ids, through the suites (SuiteRunner). Each finished case is
 * appended to `<dir>/results.jsonl` as it arrives, so a killed run resumes with only the missing ids.
 * Errored cases are written too, with their `error_kind` (a results file has one row per case × trial,
 * docs/output-files.md), never scored and never reused: a rerun runs them again, and its row replaces
 * the errored one when the rollout ends.
 */
import { skillTokens } from '../cost/run-cost.ts';
import { existsSync, mkdirSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import type { Accounting } from '../model/index.ts';
import { skillHash } from '../skill/hash.ts';
import { caseOutcomes, suiteSummary, type SuiteSummary } from '../suite/summary.ts';
import { erroredShare, erroredShown, isComplete } from '../suite/verdict.ts';
import type { CaseRecord } from '../types.ts';
import { rolloutStage, rowCost, type KeptCosts } from './kept-cost.ts';
import { appendLine, writeJsonAtomic, writeLinesAtomic } from '../util/atomic.ts';
import { buildRunFile, runFileProblem } from '../runfiles/parse.ts';
import { ResultRowSchema } from '../runfiles/results-row.ts';
import { displayPath } from '../util/paths.ts';
import { EvaluationSummarySchema } from '../runfiles/summary.ts';
import { parseJsonLines } from '../util/jsonl.ts';
import { oneLine, SkillOptError } from '../util/errors.ts';
import type { SessionHost } from '../vitest/host.ts';
import type { SuiteRunner } from '../vitest/runner.ts';
import type { Budget } from './budget.ts';
import { ReplayStop, replayMissLine } from '../model/cache/cache.ts';

/** An endpoint that stayed down: the run stops unfinished (resumable), its verdict inconclusive (exit 3). */
export class InfrastructureStop extends SkillOptError {
  constructor(message: string) {
    super(message, { exitCode: 3 });
  }
}

/** Extra runs of an evaluation's errored cases before the run stops (the model client already retried each call). */
const RETRY_ROUNDS = 2;

/**
 * A train rollout (a step's batch, an epoch's comparison): its errored cases are run again as a
 * validation's are, and the cases still errored are returned for the caller to record, not a stop
 * (docs/optimizer.md#train-cases-that-error).
 */
export const TRAIN_ROLLOUT = { maxErrored: 0, keepErrored: true } as const;

export interface RolloutOutcome {
  records: CaseRecord[];
  summary: SuiteSummary;
  /** Cases reused from an earlier (interrupted) run of the same rollout. */
  reused: number;
}

/**
 * Rows of a results.jsonl, read once. A killed run can leave half a line at the end: it is cut from
 * the file, so the next append starts on a fresh line and that case simply runs again.
 */
export function readResults(path: string): CaseRecord[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  if (complete.length < text.length) truncateSync(path, Buffer.byteLength(complete));
  // a line that is not JSON (torn or damaged): that case runs again; a row of another format stops the run
  return parseJsonLines<CaseRecord>(complete).map((r) => {
    const problem = runFileProblem(ResultRowSchema, r.value);
    if (problem)
      throw new SkillOptError(
        `${displayPath(path)}: line ${r.line}: ${problem} — not the format this skillopt reads (written by another skillopt version?)`,
      );
    return r.value;
  });
}

/** A row's place in a results file: one row per skill, case and trial. */
const trialKey = (r: Pick<CaseRecord, 'skill_hash' | 'id' | 'trial'>) =>
  `${r.skill_hash}\u0000${r.id}\u0000${r.trial ?? ''}`;

/**
 * Drop every row of a results file that a later row of the same skill, case and trial replaced (an
 * errored case run again), atomically; the file is left as it is when nothing was replaced.
 */
export function dropReplacedRows(path: string): void {
  if (!existsSync(path)) return;
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  const last = new Map<string, number>();
  const keys = lines.map((line, i) => {
    try {
      const key = trialKey(JSON.parse(line) as CaseRecord);
      last.set(key, i);
      return key;
    } catch {
      return null; // a damaged line stays where it is (readResults skips it)
    }
  });
  const kept = lines.filter((_, i) => keys[i] === null || last.get(keys[i]!) === i);
  if (kept.length < lines.length) writeLinesAtomic(path, kept);
}

export class Rollouts {
  /** Whether any case was answered by the simulated model (in-process or a standalone sim-server). */
  sawSimulated = false;
  /** Counts the calls of rows an interrupted run kept, when they are reused (set by the run's start). */
  kept: KeptCosts | null = null;

  /**
   * `model`: a run over several target models (docs/optimizer.md#several-models) has one Rollouts per
   * model, each on a host whose target is that model; its rows carry the model's name, and their calls
   * count under the stage `rollout:<model>`.
   */
  constructor(
    private readonly runner: SuiteRunner,
    private readonly host: SessionHost,
    private readonly accounting: Accounting,
    private readonly budget: Budget,
    private readonly log: (line: string) => void,
    readonly model?: string,
  ) {}

  /**
   * `allErroredIsFatal: false` returns the errored records instead of stopping (eval reports them);
   * `writeSummary: false` leaves `summary.json` to the caller (the test evaluation writes its own layout);
   * `maxErrored` makes it an evaluation whose score is gated or reported on: errored cases beyond it are
   * run again (RETRY_ROUNDS more times), and if they still error the run stops, resumable, naming the
   * first failure. A partial score is never returned. `keepErrored` (the train batches) retries the same
   * way but returns the cases still errored instead of stopping: the caller records them as lost.
   * `samples` runs these trial indices of every task instead of env.trials' (the paired gate's extra
   * samples of uncertain items).
   */
  async run(
    skill: string,
    ids: string[],
    dir: string,
    label: string,
    opts: {
      allErroredIsFatal?: boolean;
      writeSummary?: boolean;
      maxErrored?: number;
      keepErrored?: boolean;
      samples?: number[];
    } = {},
  ): Promise<RolloutOutcome> {
    const hash = skillHash(skill);
    const file = join(dir, 'results.jsonl');
    const samples = opts.samples?.length ? opts.samples : null;
    // With env.trials = k a task is k rows (its trials); it is finished when all k scored.
    const k = samples ? samples.length : this.host.session.config.env.trials;
    const wanted = (r: CaseRecord) =>
      samples ? r.trial !== undefined && samples.includes(r.trial) : k > 1 === (r.trial !== undefined);
    const finished = new Map<string, Map<number, CaseRecord>>();
    let replaced = false;
    for (const r of readResults(file)) {
      if (r.error_kind !== null) replaced = true; // run again below; its new row replaces it
      if (r.skill_hash !== hash || r.error_kind !== null || !wanted(r)) continue;
      let rows = finished.get(r.id);
      if (!rows) finished.set(r.id, (rows = new Map()));
      rows.set(r.trial ?? 0, r); // reused from this run's own results, not from the model-call cache: `cached` stays as recorded
      if (r.simulated) this.sawSimulated = true;
    }
    const done = new Map<string, CaseRecord[]>();
    for (const [id, rows] of finished)
      if (rows.size === k)
        done.set(
          id,
          [...rows.values()].sort((a, b) => (a.trial ?? 0) - (b.trial ?? 0)),
        );
    for (const rows of done.values()) for (const r of rows) this.kept?.reusedRow(rowKey(file, r), r);
    const reused = done.size;
    // env.max_cost (test / eval): what the reused cases spent counts against it
    this.host.caseBudget?.keep([...done.values()].flat(), done.size);
    const fresh = new Map<string, CaseRecord[]>();
    const erroredIds = () => ids.filter((id) => fresh.get(id)?.some((r) => r.error_kind !== null));
    let missing = ids.filter((id) => !done.has(id));
    if (missing.length > 0) {
      this.budget.ensure(`the ${label} rollout (${missing.length * k} calls)`, missing.length * k);
      await this.runCases(skill, hash, label, missing, dir, file, fresh, samples);
      const rows = [...fresh.values()].flat();
      const errored = rows.filter((r) => r.error_kind === 'infra');
      if (errored.length > 0 && errored.length === rows.length && opts.allErroredIsFatal !== false) {
        throw new InfrastructureStop(`every call of the ${label} rollout failed: ${oneLine(errored[0]!.error)}`);
      }
      // an evaluation with a limit says so below, with its retries
      if (errored.length > 0 && opts.maxErrored === undefined)
        this.log(
          `warning: ${errored.length} ${k > 1 ? 'trial(s)' : 'case(s)'} of the ${label} rollout errored and are not scored (first: ${errored[0]!.id}: ${oneLine(errored[0]!.error)})`,
        );
    }
    if (opts.maxErrored !== undefined) {
      const maxErrored = opts.maxErrored;
      const rows = () => ids.flatMap((id) => done.get(id) ?? fresh.get(id) ?? []);
      const complete = () => isComplete(rows(), maxErrored);
      for (let round = 1; round <= RETRY_ROUNDS && !complete(); round++) {
        missing = erroredIds();
        this.log(
          `${missing.length} of ${ids.length} cases of the ${label} errored (evaluation.max_errored ${maxErrored}); running them again (${round}/${RETRY_ROUNDS})`,
        );
        this.budget.ensure(`the ${label} retry (${missing.length * k} calls)`, missing.length * k);
        await this.runCases(skill, hash, label, missing, dir, file, fresh, samples);
      }
      if (!complete()) {
        const first = rows().find((r) => r.error_kind !== null)!;
        const lost = `${erroredShown(erroredShare(caseOutcomes(rows())), ids.length)} in the ${label} even after ${RETRY_ROUNDS} retries (evaluation.max_errored ${maxErrored})`;
        if (!opts.keepErrored)
          throw new InfrastructureStop(`${lost}, so it is not scored; first: ${first.id}: ${oneLine(first.error)}`);
        this.log(`warning: ${lost}: left out (first: ${first.id}: ${oneLine(first.error)})`);
      }
    }
    const records = ids.flatMap((id) => done.get(id) ?? fresh.get(id) ?? []);
    if (replaced || [...fresh.values()].some((rows) => rows.some((r) => r.error_kind !== null))) dropReplacedRows(file);
    const summary = {
      ...suiteSummary(records, this.host.session.config.model.currency),
      skill_tokens: skillTokens(skill),
    };
    if (opts.writeSummary !== false)
      writeJsonAtomic(
        join(dir, 'summary.json'),
        buildRunFile(EvaluationSummarySchema, { label, skill_hash: hash, ...summary }, 'summary.json'),
      );
    return { records, summary, reused };
  }

  /**
   * Rows of `skill` kept in `dir` for `ids` that are used without a rollout (the val ledger holds their
   * scores): their calls count when an interrupted run kept them.
   */
  claimKept(skill: string, ids: readonly string[], dir: string, samples?: readonly number[]): void {
    if (!this.kept || ids.length === 0) return;
    const file = join(dir, 'results.jsonl');
    const hash = skillHash(skill);
    const wanted = new Set(ids);
    for (const r of readResults(file)) {
      if (r.skill_hash !== hash || r.error_kind !== null || !wanted.has(r.id)) continue;
      if (samples && (r.trial === undefined || !samples.includes(r.trial))) continue;
      this.kept.reusedRow(rowKey(file, r), r);
    }
  }

  /** Run `ids` through the suites; each case (errored ones too) is appended to `file` as it arrives and lands in `into`. */
  private async runCases(
    skill: string,
    hash: string,
    label: string,
    ids: string[],
    dir: string,
    file: string,
    into: Map<string, CaseRecord[]>,
    samples: number[] | null,
  ): Promise<void> {
    const wanted = new Set(ids);
    mkdirSync(dir, { recursive: true });
    // --model-cache replay: rows are held until every case had its reply (nothing is worth resuming there)
    const held: string[] | null = this.host.cache?.mode === 'replay' ? [] : null;
    this.host.caseSink = (rec) => {
      if (rec.skill_hash !== hash || !wanted.has(rec.id)) return;
      // an optimizer run stamps its rows with the commits before them (kept-cost.ts); eval rows stay as they are
      this.kept?.wroteRow(rowKey(file, rec));
      const row = this.model === undefined ? rec : { ...rec, model: this.model };
      const line = JSON.stringify(this.kept ? { ...row, after_commit: this.kept.stamp() } : row);
      if (held) held.push(line);
      else appendLine(file, line);
    };
    let result;
    try {
      result = await this.runner.run({ mode: 'rollout', ids, skills: { '*': { text: skill, path: label } }, samples });
    } finally {
      this.host.caseSink = null;
    }
    if (result.errors.length > 0 && result.records.length === 0) throw new SkillOptError(result.errors[0]!);
    // --model-cache replay: a case the cache cannot answer stops the run before anything is scored
    const replayMisses = result.records.filter((r) => r.error_kind === 'cache_miss');
    if (replayMisses.length > 0) {
      throw new ReplayStop(
        replayMissLine(
          replayMisses[0]!,
          { misses: new Set(replayMisses.map((r) => r.id)).size, of: ids.length },
          { next: true },
        ),
      );
    }
    for (const line of held ?? []) appendLine(file, line);
    for (const id of ids) into.delete(id);
    for (const rec of result.records) {
      const r = this.model === undefined ? rec : { ...rec, model: this.model };
      into.set(r.id, [...(into.get(r.id) ?? []), r]);
      if (r.simulated) this.sawSimulated = true;
      this.accounting.merge(rowCost(r));
      this.accounting.add(rolloutStage(this.model), { latency_ms: r.latency_ms });
    }
  }
}

/** A row's identity among the kept rows of a run: its file, case, trial and skill. */
function rowKey(file: string, r: Pick<CaseRecord, 'id' | 'trial' | 'skill_hash'>): string {
  return `${file}\u0000${trialKey(r)}`;
}
