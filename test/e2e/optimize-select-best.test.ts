/**
 * Choosing the best skill by cost (optimizer.select_best) against the simulated model: every gated
 * candidate's mean tokens per val case and estimated size are in its step record. On dotnetdebug `highest`
 * keeps the step-6 skill (the highest val pass rate); `cheapest_within` with a tolerance of 0.25 the step-5
 * one (fewer tokens per case, and 2 of 29 val cases lost bound its loss at 0.20), with the same steps and
 * gate decisions; summary.json says which rule chose it, against which reference, and lists the candidates
 * with their losses; a run killed mid-step resumes to the same choice. On ticket-triage (seed 44, the
 * default rule and tolerance) three candidates tie at the top of 16 val items: the tie bounds nothing, so
 * the later, longer skill `highest` chooses is kept (docs/optimizer.md#choosing-the-best-skill).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { lossBound, type BestSelection } from '../../src/optimizer/best.ts';
import { assertBuilt, history, readJson, readText, REPO, tempDirs, train } from './optimize-helpers.ts';

const tmp = tempDirs('select-best');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/dotnetdebug/sim.yaml';
const ARGS = ['evaluation.eval_test=false'];

type Selection = BestSelection;

describe('select_best', () => {
  test('highest vs cheapest_within: per-candidate tokens recorded, the same steps, the cheaper skill whose val loss is bounded within the tolerance chosen; a killed run resumes to the same choice', async () => {
    const [outH, outC, outK, outP] = [
      tmp.make('highest'),
      tmp.make('cheapest'),
      tmp.make('killed'),
      tmp.make('priced'),
    ];
    const cheap = [...ARGS, 'optimizer.select_best=cheapest_within', 'optimizer.cost_tolerance=0.25'];
    const priced = [
      ...cheap,
      'model.pricing.mitko.input_per_mtok=2',
      'model.pricing.mitko.cached_input_per_mtok=0.5',
      'model.pricing.mitko.output_per_mtok=8',
    ];
    const [h, c, k, p] = await Promise.all([
      train(outH, [...ARGS, 'optimizer.select_best=highest'], { config: CONFIG, cwd: REPO }),
      train(outC, cheap, { config: CONFIG, cwd: REPO }),
      train(outK, cheap, { config: CONFIG, cwd: REPO, killWhen: /^\[skillopt\] step 5\/6 /m }),
      train(outP, priced, { config: CONFIG, cwd: REPO }),
    ]);
    expect(p.code, p.stdout + p.stderr).toBe(0);
    expect(h.code, h.stdout + h.stderr).toBe(0);
    expect(c.code, c.stdout + c.stderr).toBe(0);

    // every gated candidate: its mean tokens per val case (no prices: no cost) and its size estimate
    for (const out of [outH, outC]) {
      const steps = history(out);
      expect(steps.length).toBe(6);
      for (const r of steps) {
        expect(r.skill_tokens).toBeGreaterThan(0);
        if (r.candidate_hash === undefined) continue;
        // an accepted candidate is the current skill at the step's end (no ungated notes in this config)
        if (String(r.action).startsWith('accept')) expect(r.skill_tokens).toBe(r.candidate_skill_tokens);
        expect(r.candidate_mean_tokens).toBeGreaterThan(0);
        expect(r.candidate_mean_cost).toBeNull();
        expect(r.candidate_skill_tokens).toBe(
          Math.ceil(
            readText(join(out, 'steps', `step_${String(r.step).padStart(4, '0')}`, 'candidate_skill.md')).length / 4,
          ),
        );
      }
    }
    // the rule changes which skill is best, never what the gate decided
    const view = (out: string) =>
      history(out).map((r) => [r.step, r.action, r.current_score, r.candidate_mean_tokens ?? null]);
    expect(view(outC)).toEqual(view(outH));

    const sh = readJson(join(outH, 'summary.json'));
    const sc = readJson(join(outC, 'summary.json'));
    const selH = sh.best_selection as Selection;
    const selC = sc.best_selection as Selection;
    expect(selH.rule).toBe('highest');
    expect(selC).toMatchObject({ rule: 'cheapest_within', tolerance: 0.25, confidence: 0.95 });
    // the same candidates, with the same usage, under both rules: the initial skill and the six adopted ones
    const usage = (s: Selection) =>
      s.candidates.map((x) => [x.step, x.origin, x.pass_rate, x.mean_tokens, x.mean_cost]);
    expect(usage(selC)).toEqual(usage(selH));
    expect(selC.candidates.map((x) => x.step)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const x of selC.candidates) expect(x.mean_tokens).toBeGreaterThan(0);

    // highest: the best val pass rate (step 6); it is cheapest_within's reference
    const top = Math.max(...selH.candidates.map((x) => x.pass_rate));
    expect(sh.best_step).toBe(6);
    const reference = selH.candidates.find((x) => x.chosen)!;
    expect(reference.pass_rate).toBe(top);
    expect(selH.reference).toBe(reference.hash);
    expect(selC.reference).toBe(reference.hash);
    // cheapest_within 0.25: each candidate's val cases lost against the reference, bounded at 95%; eligible
    // when it has fewer tokens per case and the bound is within the tolerance
    const cases = 29;
    for (const x of selC.candidates) {
      if (x.hash === reference.hash) {
        expect(x).toMatchObject({ cases_lost: null, loss_bound: null, eligible: true });
        continue;
      }
      expect(x.cases_lost).toBeGreaterThanOrEqual(Math.round((top - x.pass_rate) * cases));
      expect(x.loss_bound).toBeCloseTo(lossBound({ lost: x.cases_lost!, cases })!, 12);
      expect(x.eligible).toBe(x.mean_tokens! < reference.mean_tokens! && x.loss_bound! <= 0.25);
    }
    const eligible = selC.candidates.filter((x) => x.eligible);
    expect(eligible.map((x) => x.step)).toEqual([5, 6]);
    const cheapest = eligible.reduce((a, b) => (b.mean_tokens! < a.mean_tokens! ? b : a));
    expect(cheapest).toMatchObject({ step: 5, cases_lost: 2 });
    expect(cheapest.pass_rate).toBeLessThan(top);
    expect(selC.chosen).toBe(cheapest.hash);
    expect(selC.candidates.filter((x) => x.chosen)).toEqual([cheapest]);
    expect(sc).toMatchObject({
      best_step: 5,
      best_origin: 'step_0005',
      best_score: cheapest.score,
      best_selection_pass_rate: cheapest.pass_rate,
    });
    expect(readText(join(outC, 'best_skill.md'))).toBe(
      readText(join(outC, 'steps', 'step_0005', 'candidate_skill.md')),
    );
    expect(readText(join(outH, 'best_skill.md'))).toBe(
      readText(join(outH, 'steps', 'step_0006', 'candidate_skill.md')),
    );
    expect(sc.skill_tokens).toBeLessThan(sh.skill_tokens);
    expect(sc.skill_tokens_by_skill.best).toBe(sc.skill_tokens);
    // the step records follow the rule: step 6 was accepted as the highest yet, but the best stayed at step 5
    const last = history(outC).at(-1)!;
    expect(last).toMatchObject({
      action: 'accept_new_best',
      best_step: 5,
      best_skill_tokens: sc.skill_tokens,
      best_mean_tokens: cheapest.mean_tokens,
    });

    // with prices: every candidate has a mean cost per case, and tokens still decide (the same choice)
    const selP = readJson(join(outP, 'summary.json')).best_selection as Selection;
    for (const x of selP.candidates) expect(x.mean_cost).toBeGreaterThan(0);
    expect(selP.candidates.map((x) => [x.hash, x.mean_tokens])).toEqual(
      selC.candidates.map((x) => [x.hash, x.mean_tokens]),
    );
    expect(selP.chosen).toBe(selC.chosen);
    for (const r of history(outP)) if (r.candidate_hash !== undefined) expect(r.candidate_mean_cost).toBeGreaterThan(0);

    // killed after step 5, resumed: the same candidates, the same choice (the state keeps them)
    expect(k.killed).toBe(true);
    const resumed = await train(outK, cheap, { config: CONFIG, cwd: REPO });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/resuming after step 5 /);
    expect(readJson(join(outK, 'summary.json')).best_selection).toEqual(selC);
    expect(readText(join(outK, 'best_skill.md'))).toBe(readText(join(outC, 'best_skill.md')));
  });

  test('the default rule on a small val split: an exact tie at the top keeps the later, longer skill highest chooses', async () => {
    const out = tmp.make('triage');
    const r = await train(out, [...ARGS, 'train.seed=44'], { config: 'configs/ticket-triage/sim.yaml', cwd: REPO });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    const sel = s.best_selection as Selection;
    expect(sel).toMatchObject({ rule: 'cheapest_within', tolerance: 0.01 });
    const top = Math.max(...sel.candidates.map((x) => x.pass_rate));
    const tied = sel.candidates.filter((x) => x.pass_rate === top);
    // steps 6, 7 and 8 pass the same 15 of 16 val items; the rule before chose step 6, the cheapest
    expect(tied.map((x) => x.step)).toEqual([6, 7, 8]);
    expect(tied.map((x) => x.cases_lost)).toEqual([0, 0, null]);
    expect(tied[0]!.mean_tokens).toBeLessThan(tied[2]!.mean_tokens!);
    // 0 of 16 cases lost bounds the loss at 0.171, not within 0.01: the reference stays
    for (const x of tied.slice(0, 2))
      expect(x).toMatchObject({ loss_bound: expect.closeTo(1 - 0.05 ** (1 / 16), 12), eligible: false });
    expect(sel.reference).toBe(tied[2]!.hash);
    expect(sel.chosen).toBe(tied[2]!.hash);
    expect(s).toMatchObject({ best_step: 8, best_origin: 'step_0008' });
    expect(readText(join(out, 'best_skill.md'))).toBe(readText(join(out, 'steps', 'step_0008', 'candidate_skill.md')));
  });
});
