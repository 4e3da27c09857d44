/**
 * Every val sample the run has of every skill it validated, by skill hash and item: what the paired gate
 * compares and what racing reuses (a candidate seen before costs nothing for the items it was already
 * evaluated on). Samples are numbered like trials: the standard samples are 0 … env.trials − 1 (`null`
 * for the one unseeded request of a single-trial run); the gate's extra samples follow them. Persisted
 * as `val_ledger.json` after every evaluation, so a resumed run has them back. A partial evaluation
 * lives here only; the selection cache (complete scores) is the run state's.
 */
import type { CaseRecord } from '../types.ts';
import type { RunStore } from './run-store.ts';

export interface ValSample {
  /** Trial index (null: the single unseeded sample). */
  t: number | null;
  hard: number;
  soft: number;
  pass: boolean;
}

type Skills = Record<string, Record<string, ValSample[]>>;

const FILE = 'val_ledger.json';

export class ValLedger {
  private readonly skills: Skills;

  constructor(private readonly store: RunStore) {
    this.skills = store.readJson<{ skills: Skills }>(FILE)?.skills ?? {};
  }

  /** Add the scored rows of an evaluation of the skill `hash` (errored rows carry no score). */
  add(hash: string, records: readonly CaseRecord[]): void {
    const items = (this.skills[hash] ??= {});
    for (const r of records) {
      if (r.error_kind !== null) continue;
      const t = r.trial ?? null;
      const list = (items[r.id] ??= []);
      if (list.some((s) => s.t === t)) continue;
      list.push({ t, hard: r.hard, soft: r.soft, pass: r.pass });
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

  /** The samples of two skills on an item whose indices both have. */
  matched(a: string, b: string, id: string): Array<[ValSample, ValSample]> {
    const other = new Map(this.samples(b, id).map((s) => [s.t, s]));
    return this.samples(a, id).flatMap((s) => (other.has(s.t) ? [[s, other.get(s.t)!] as [ValSample, ValSample]] : []));
  }

  save(): void {
    this.store.writeJson(FILE, { skills: this.skills });
  }
}
