/**
 * The re-runs of an attribution (docs/attribution.md#fresh-samples): every question about a case (n
 * samples of it under one variant of the skill) is answered with fresh sample indices, never with the
 * runs' own trials or another question's, so a reply of either run or of an earlier question is never
 * evidence twice (the model-call cache keys on the request's seed). The questions of all the cases'
 * searches waiting at one moment go out as one batch: one rollout per variant, a fresh range of sample
 * indices each, and the answers are handed out together once the batch ran, so the searches advance in
 * lockstep and a budget of calls cuts off the same questions on every run.
 */
import { BudgetExhausted, type RestoreCount } from './explain.ts';
import type { CaseRef } from './compare.ts';

/** A case to explain: which way it moved, and the model calls one sample of it takes (its rows' mean, at least 1). */
export interface ChangedCase extends CaseRef {
  direction: 'regressed' | 'fixed';
  callsPerSample: number;
}

/** A text the case is re-run with: the candidate with `reverted` units taken back, or the baseline's own text (`reverted` null). */
export interface Variant {
  reverted: readonly string[] | null;
  text: string;
}

/**
 * Run `variant` on `cases`, each with the trial indices `samples` (the requests' seeds): per case its
 * passes of the scored samples (errored ones are not scored), and the model calls the run made.
 */
export type VariantEvaluator = (
  variant: Variant,
  cases: readonly ChangedCase[],
  samples: readonly number[],
) => Promise<{ counts: Map<string, { passes: number; scored: number }>; calls: number }>;

export const caseKeyOf = (c: CaseRef) => `${c.suite}\u0000${c.id}`;

const variantKey = (v: Variant) => (v.reverted === null ? '\u0001baseline' : v.reverted.join(','));

interface Question {
  variant: Variant;
  item: ChangedCase;
  n: number;
  resolve: (v: RestoreCount) => void;
  reject: (e: unknown) => void;
}

export class Reruns {
  /** Model calls the re-runs made. */
  calls = 0;
  /** Rollouts run (one per variant and sample range). */
  runs = 0;
  private committed = 0;
  private next: number;
  private queue: Question[] = [];
  private scheduled = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly evaluate: VariantEvaluator,
    private readonly o: { budget: number; firstSample: number },
  ) {
    this.next = o.firstSample;
  }

  /**
   * `n` fresh samples of `item` under `variant`: how many showed the case's baseline outcome (passed, for
   * a regressed case; failed, for a fixed one). Rejects with BudgetExhausted when the calls they would take
   * do not fit the budget.
   */
  ask(variant: Variant, item: ChangedCase, n: number): Promise<RestoreCount> {
    const cost = n * item.callsPerSample;
    if (this.committed + cost > this.o.budget) return Promise.reject(new BudgetExhausted());
    this.committed += cost;
    return new Promise((resolve, reject) => {
      this.queue.push({ variant, item, n, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => (this.running = this.running.then(() => this.flush())));
      }
    });
  }

  /** One batch: per variant and sample count, rollouts in which every case appears once, each with a fresh range of sample indices. */
  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    const groups: Question[][] = [];
    const open = new Map<string, Question[][]>();
    for (const q of batch) {
      const key = `${variantKey(q.variant)}\u0002${q.n}`;
      const list = open.get(key) ?? [];
      open.set(key, list);
      let group = list.find((g) => !g.some((x) => caseKeyOf(x.item) === caseKeyOf(q.item)));
      if (!group) {
        list.push((group = []));
        groups.push(group);
      }
      group.push(q);
    }
    const answers: Array<() => void> = [];
    for (const group of groups) {
      const n = group[0]!.n;
      const samples = Array.from({ length: n }, (_, i) => this.next + i);
      this.next += n;
      try {
        this.runs++;
        const got = await this.evaluate(
          group[0]!.variant,
          group.map((g) => g.item),
          samples,
        );
        this.calls += got.calls;
        for (const g of group) {
          const c = got.counts.get(caseKeyOf(g.item)) ?? { passes: 0, scored: 0 };
          const restored = g.item.direction === 'regressed' ? c.passes : c.scored - c.passes;
          answers.push(() => g.resolve({ restored, scored: c.scored }));
        }
      } catch (e) {
        for (const g of group) answers.push(() => g.reject(e));
      }
    }
    for (const answer of answers) answer();
  }
}
