/**
 * Kept work carries its cost. A run reuses what an interrupted run of the same folder kept (rollout rows,
 * analyst patches, stage outputs), and the calls that produced it count once, whether the run was
 * killed or not:
 *
 * - every kept result is stamped with the number of state commits (`saveState`) made before it was
 *   written; a commit's `token_summary` counts every result kept before it;
 * - a resumed run starts from the committed `token_summary`, and adds the cost of a reused result only
 *   when it was kept after that commit (and not by this process, whose calls are counted as they are made);
 * - what an earlier process sent but kept nothing of (a step killed after some of its calls) is not in
 *   those totals: `lost()` is the part the resumed run knows of, from the calls earlier processes
 *   recorded in `usage.json` (`sent`), reported apart.
 *
 * Rows carry their cost in their own `usage`; other results have theirs in `kept_costs.json`, written
 * before the result, so a result on disk always has its cost on record.
 */
import { isAbsolute, relative } from 'node:path';
import { Accounting, diffSummaries, emptyStats, STAT_FIELDS, sumSummaries, TOTAL_KEY } from '../model/accounting.ts';
import { spentTokens } from '../model/call-usage.ts';
import type { CallUsage, CaseRecord, StageStats, TokenSummary } from '../types.ts';
import type { RunStore } from './run-store.ts';
import { KeptCostLedgerSchema, type KeptCost } from '../runfiles/index.ts';

export type { KeptCost };

const LEDGER = 'kept_costs.json';

/**
 * The accounting stage of a rollout row's target calls: `rollout`, or `rollout:<model>` for a row of a run
 * over several models, so calls and cost are counted per model (docs/accounting.md).
 */
export function rolloutStage(model: string | undefined): string {
  return model === undefined ? 'rollout' : `rollout:${model}`;
}

/** What a rollout row's calls count as, by stage (every attempt beyond a call's first is a retry). */
export function rowCost(
  r: Pick<CaseRecord, 'usage' | 'judge_usage' | 'error_kind' | 'model'>,
): Record<string, Partial<StageStats>> {
  const stage = (u: CallUsage): Partial<StageStats> => ({
    calls: u.calls,
    attempts: u.attempts,
    retries: Math.max(0, u.attempts - u.calls),
    ...spentTokens(u),
  });
  return {
    [rolloutStage(r.model)]: { ...stage(r.usage), errors: r.error_kind === 'infra' && r.usage.attempts > 0 ? 1 : 0 },
    ...(r.judge_usage ? { judge: stage(r.judge_usage) } : {}),
  };
}

/** Field-wise `max(0, a - b)` per stage, with `_total`; stages left with nothing are dropped. */
function positiveDiff(a: TokenSummary, b: TokenSummary): TokenSummary {
  const d = diffSummaries(b, a);
  const out: TokenSummary = {};
  for (const [stage, s] of Object.entries(d)) {
    if (stage === TOTAL_KEY) continue;
    const pos = emptyStats();
    for (const k of STAT_FIELDS) pos[k] = Math.max(0, s[k]);
    if (Object.values(pos).some((v) => v > 0)) out[stage] = pos;
  }
  return sumSummaries(out);
}

export class KeptCosts {
  private readonly ledger: Record<string, KeptCost>;
  /** Results this process wrote or already counted. */
  private readonly seen = new Set<string>();
  /** The cost of reused results added to the accounting by this process. */
  private readonly injected = new Accounting();

  /**
   * `resumedAt`: the commits of the state this process resumed (0 for a fresh run); `commits()`: the
   * commits so far. `prior.sent`: what earlier processes recorded as sent (usage.json); `prior.committed`:
   * the resumed state's `token_summary`, where the accounting starts (both empty for a fresh run).
   */
  constructor(
    private readonly store: RunStore,
    private readonly accounting: Accounting,
    private readonly resumedAt: number,
    private readonly commits: () => number,
    private readonly prior: { sent: TokenSummary; committed: TokenSummary } = { sent: {}, committed: {} },
  ) {
    this.ledger = store.readChecked(KeptCostLedgerSchema, LEDGER) ?? {};
  }

  /** The commit stamp of a result written now. */
  stamp(): number {
    return this.commits();
  }

  /** Record the cost of the result at `rel` (before writing it): reused later, it brings this cost. */
  record(path: string, cost: TokenSummary): void {
    const rel = this.rel(path);
    this.seen.add(rel);
    const { [TOTAL_KEY]: _total, ...stages } = cost;
    this.ledger[rel] = { cost: stages, after_commit: this.commits() };
    this.store.writeJson(LEDGER, this.ledger);
  }

  /** The result at `rel` was read instead of redone: count its cost if no commit or earlier reuse has. */
  reused(path: string): void {
    const rel = this.rel(path);
    if (this.seen.has(rel)) return;
    this.seen.add(rel);
    const kept = this.ledger[rel];
    if (kept && kept.after_commit >= this.resumedAt) this.inject(kept.cost);
  }

  /** Ledger keys are paths relative to the run directory. */
  private rel(path: string): string {
    return isAbsolute(path) ? relative(this.store.root, path) : path;
  }

  /** A row this process appended (its cost is counted with the rollout's). */
  wroteRow(key: string): void {
    this.seen.add(key);
  }

  /** A row read back instead of rerun: count its calls if no commit or earlier reuse has. */
  reusedRow(key: string, row: CaseRecord & { after_commit?: number }): void {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    if ((row.after_commit ?? 0) >= this.resumedAt) this.inject(rowCost(row));
  }

  private inject(cost: Record<string, Partial<StageStats>>): void {
    this.accounting.merge(cost);
    this.injected.merge(cost);
  }

  /**
   * What was sent, as far as any process recorded it: the earlier processes' record plus what this
   * process sent itself, and never less than what is counted.
   */
  sent(): TokenSummary {
    const now = this.accounting.snapshot();
    // this process's own requests: the accounting less where it started and the reused results' cost
    const own = positiveDiff(now, sumSummaries(this.prior.committed, this.injected.snapshot()));
    const recorded = sumSummaries(this.prior.sent, own);
    return sumSummaries(recorded, positiveDiff(now, recorded));
  }

  /** Calls an interrupted process sent whose results were not kept: not in the totals, reported apart. */
  lost(): TokenSummary {
    return positiveDiff(this.sent(), this.accounting.snapshot());
  }
}
