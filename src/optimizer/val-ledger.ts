/**
 * Every val sample the run has of every skill it validated, by skill hash and item: what the paired gate
 * compares and what racing reuses (a candidate seen before costs nothing for the items it was already
 * evaluated on). Samples are numbered like trials: the standard samples are 0 … env.trials − 1 (`null`
 * for the one unseeded request of a single-trial run); the gate's extra samples follow them. Persisted
 * as `val_ledger.json` after every evaluation, so a resumed run has them back. A partial evaluation
 * lives here only; the selection cache (complete scores) is the run state's.
 */
import { rowTokens } from '../suite/cost-gate.ts';
import type { CaseRecord } from '../types.ts';
import { ValLedgerFileSchema, type ValSample } from '../runfiles/index.ts';

export type { ValSample };
import type { RunStore } from './run-store.ts';

/** A skill's mean target-role usage per val case (docs/optimizer.md#choosing-the-best-skill). */
export interface MeanUsage {
  /** Mean prompt + completion tokens per case (each case the mean over its samples); null when no sample reported usage. */
  mean_tokens: number | null;
  /** Mean cost per case over the cases with a known cost; null without prices. */
  mean_cost: number | null;
  /** Cases with a sample but no known tokens. */
  cases_without_usage: number;
}

type Skills = Record<string, Record<string, ValSample[]>>;

const FILE = 'val_ledger.json';

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export class ValLedger {
  private readonly skills: Skills;

  constructor(private readonly store: RunStore) {
    this.skills = store.readChecked(ValLedgerFileSchema, FILE)?.skills ?? {};
  }

  /** Add the scored rows of an evaluation of the skill `hash` (errored rows carry no score). */
  add(hash: string, records: readonly CaseRecord[]): void {
    const items = (this.skills[hash] ??= {});
    for (const r of records) {
      if (r.error_kind !== null) continue;
      const t = r.trial ?? null;
      const list = (items[r.id] ??= []);
      if (list.some((s) => s.t === t)) continue;
      list.push({
        t,
        hard: r.hard,
        soft: r.soft,
        pass: r.pass,
        tokens: rowTokens({ usage: r.usage }),
        cost: r.usage.cost ?? null,
      });
      list.sort((a, b) => (a.t ?? -1) - (b.t ?? -1));
    }
  }

  samples(hash: string, id: string): readonly ValSample[] {
    return this.skills[hash]?.[id] ?? [];
  }

  /** The standard samples (trials below `k`) of an item. */
  standard(hash: string, id: string, k: number): ValSample[] {
    return this.samples(hash, id).filter((s) => s.t === null || s.t < k);
  }

  /** The share of an item's standard samples that passed (0 when it has none: every sample errored). */
  passFraction(hash: string, id: string, k: number): number {
    const s = this.standard(hash, id, k);
    return s.length ? s.filter((x) => x.pass).length / s.length : 0;
  }

  /**
   * The mean usage per case of the skill `hash` over the items `ids`, from their standard samples (trials
   * below `k`): a case's tokens are the mean over its samples that reported usage.
   */
  meanUsage(hash: string, ids: readonly string[], k: number): MeanUsage {
    const tokens: number[] = [];
    const costs: number[] = [];
    let without = 0;
    for (const id of ids) {
      const s = this.standard(hash, id, k);
      if (s.length === 0) continue;
      const t = s.flatMap((x) => (typeof x.tokens === 'number' ? [x.tokens] : []));
      const c = s.flatMap((x) => (typeof x.cost === 'number' ? [x.cost] : []));
      if (t.length) tokens.push(mean(t));
      else without++;
      if (c.length) costs.push(mean(c));
    }
    return {
      mean_tokens: tokens.length ? mean(tokens) : null,
      mean_cost: costs.length ? mean(costs) : null,
      cases_without_usage: without,
    };
  }

  /** The samples of two skills on an item whose indices both have. */
  matched(a: string, b: string, id: string): Array<[ValSample, ValSample]> {
    const other = new Map(this.samples(b, id).map((s) => [s.t, s]));
    return this.samples(a, id).flatMap((s) => (other.has(s.t) ? [[s, other.get(s.t)!] as [ValSample, ValSample]] : []));
  }

  save(): void {
    this.store.writeJson(FILE, { skills: this.skills });
  }
}
