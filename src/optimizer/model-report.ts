/**
 * What a run over several target models reports per model (summary.json `models`, the end report, report.html;
 * docs/optimizer.md#several-models): the seed and the best skill's val and test pass rates, each with its
 * interval, the paired comparison of the best skill with the seed on the same cases (compare's machinery:
 * Δ, its interval, the one-sided p-values, the verdict), and the model's calls and cost by phase (train
 * rollouts, validation, test). Transfer models have no val and no train.
 */
import { modelRowCosts, type PhaseCosts } from './model-costs.ts';
import { suiteSummary } from '../suite/summary.ts';
import { skillHash } from '../skill/hash.ts';
import type { CaseRecord } from '../types.ts';
import type { RunContext } from './context.ts';
import type { FinishResult, ModelTestEvals } from './finish.ts';
import { modelKey } from './models.ts';
import { readResults } from './rollout.ts';
import type { ValSample } from './val-ledger.ts';

/** One skill's pass rate on one model and split, with its 95% interval. */
export interface SideFigure {
  pass_rate: number | null;
  ci: [number, number] | null;
  n: number;
  errored: number;
}

/**
 * The best skill against the seed on one model, paired on the same cases: the lift of the run's matrix
 * (src/matrix/optimize-run.ts), its p-values adjusted over the models; set by the command once the run ends.
 */
export interface PairedFigure {
  n: number;
  delta: number | null;
  interval: [number, number] | null;
  p: number | null;
  p_adjusted: number | null;
  fixed: number;
  regressed: number;
  verdict: string;
  reason: string;
}

export interface ModelReport {
  name: string;
  role: 'train' | 'transfer';
  val: { seed: SideFigure; best: SideFigure; paired: PairedFigure | null } | null;
  test: {
    seed: SideFigure | null;
    best: SideFigure | null;
    final: SideFigure | null;
    paired: PairedFigure | null;
  } | null;
  calls: PhaseCosts['calls'];
  cost: PhaseCosts['cost'];
}

function figure(rows: CaseRecord[]): SideFigure {
  const s = suiteSummary(rows);
  return { pass_rate: s.pass_rate, ci: s.pass_rate_ci, n: s.n, errored: s.errored };
}

/** A skill's val samples on one model as rows (the ledger's standard samples), for the paired comparison. */
function valRows(ctx: RunContext, suite: string, key: string): CaseRecord[] {
  const k = ctx.cfg.env.trials;
  return ctx.valIds.flatMap((id) =>
    ctx.ledger.standard(key, id, k).map((s: ValSample) => ({
      suite,
      id,
      split: 'val',
      task_type: null,
      skill_hash: key,
      messages: [],
      output: '',
      expected: null,
      hard: s.hard,
      soft: s.soft,
      pass: s.pass,
      feedback: '',
      usage: {
        calls: 1,
        attempts: 1,
        prompt_tokens: null,
        completion_tokens: null,
        cached_prompt_tokens: null,
        reasoning_tokens: null,
        cost: s.cost ?? null,
        call_ms: 0,
      },
      latency_ms: 0,
      cached: false,
      error_kind: null,
      error: null,
      simulated: false,
      ...(s.t === null ? {} : { trial: s.t }),
    })),
  );
}

/** Every model's report; the test figures come from the test evaluations' rows (`<folder>/<model label>/results.jsonl`). */
export function modelReports(ctx: RunContext, t: FinishResult): ModelReport[] {
  const costs = modelRowCosts(ctx.store.root, [...ctx.models, ...(ctx.o.transfer ?? [])]);
  const suite = ctx.o.manifest.suite;
  const seedHash = skillHash(ctx.o.initialSkill.text);
  const bestHash = skillHash(ctx.best);
  const testRows = (folder: string, label: string, has: boolean) =>
    has ? readResults(ctx.store.path(folder, label, 'results.jsonl')) : null;
  const all = [
    ...ctx.models.map((m) => ({ m, role: 'train' as const })),
    ...(ctx.o.transfer ?? []).map((m) => ({ m, role: 'transfer' as const })),
  ];
  return all.map(({ m, role }) => {
    const evals: ModelTestEvals | undefined = t.models?.find((x) => x.model === m.name);
    const seedTest = testRows('test_eval_baseline', m.label, evals?.baseline != null);
    const bestTest = testRows('test_eval', m.label, evals?.best != null);
    const finalTest =
      role === 'train' && ctx.current !== ctx.best
        ? testRows('test_eval_final', m.label, evals?.final != null)
        : bestTest;
    const test = evals
      ? {
          seed: seedTest ? figure(seedTest) : null,
          best: bestTest ? figure(bestTest) : null,
          final: role === 'train' && finalTest ? figure(finalTest) : null,
          paired: null,
        }
      : null;
    let val: ModelReport['val'] = null;
    if (role === 'train') {
      const seedRows = valRows(ctx, suite, modelKey(seedHash, m.name));
      const bestRows = valRows(ctx, suite, modelKey(bestHash, m.name));
      if (seedRows.length && bestRows.length) val = { seed: figure(seedRows), best: figure(bestRows), paired: null };
    }
    const c = costs.get(m.name)!;
    return { name: m.name, role, val, test, calls: c.calls, cost: c.cost };
  });
}

/** Each training model's val samples of the seed and the best skill, as rows (the paired verdict on val reads them). */
export function modelValRows(ctx: RunContext): Array<{ name: string; seed: CaseRecord[]; best: CaseRecord[] }> {
  const suite = ctx.o.manifest.suite;
  const seedHash = skillHash(ctx.o.initialSkill.text);
  const bestHash = skillHash(ctx.best);
  return ctx.models.map((m) => ({
    name: m.name,
    seed: valRows(ctx, suite, modelKey(seedHash, m.name)),
    best: valRows(ctx, suite, modelKey(bestHash, m.name)),
  }));
}
