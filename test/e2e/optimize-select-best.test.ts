/**
 * Choosing the best skill by cost (optimizer.select_best) on dotnetdebug against the simulated model: every
 * gated candidate's mean tokens per val case and estimated size are in its step record; `highest` keeps the
 * step-6 skill (the highest val pass rate), `cheapest_within` with a tolerance of 0.1 the step-5 one (within
 * 0.1 of it, and fewer tokens per case), with the same steps and gate decisions; summary.json says which rule
 * chose it and lists the candidates; a run killed mid-step resumes to the same choice.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BestSelection } from '../../src/optimizer/best.ts';
import { assertBuilt, history, readJson, readText, REPO, tempDirs, train } from './optimize-helpers.ts';

const tmp = tempDirs('select-best');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/dotnetdebug/sim.yaml';
const ARGS = ['evaluation.eval_test=false'];

type Selection = BestSelection;

describe.concurrent('select_best', () => {
  test('highest vs cheapest_within: per-candidate tokens recorded, the same steps, the cheaper skill within the tolerance chosen; a killed run resumes to the same choice', async () => {
    const [outH, outC, outK, outP] = [tmp.make('highest'), tmp.make('cheapest'), tmp.make('killed'), tmp.make('priced')];
    const cheap = [...ARGS, 'optimizer.select_best=cheapest_within', 'optimizer.cost_tolerance=0.1'];
    const priced = [...cheap, 'model.pricing.mitko.input_per_mtok=2', 'model.pricing.mitko.cached_input_per_mtok=0.5', 'model.pricing.mitko.output_per_mtok=8'];
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
        expect(r.candidate_skill_tokens).toBe(Math.ceil(readText(join(out, 'steps', `step_${String(r.step).padStart(4, '0')}`, 'candidate_skill.md')).length / 4));
      }
    }
    // the rule changes which skill is best, never what the gate decided
    const view = (out: string) => history(out).map((r) => [r.step, r.action, r.current_score, r.candidate_mean_tokens ?? null]);
    expect(view(outC)).toEqual(view(outH));

    const sh = readJson(join(outH, 'summary.json'));
    const sc = readJson(join(outC, 'summary.json'));
    const selH = sh.best_selection as Selection;
    const selC = sc.best_selection as Selection;
    expect(selH.rule).toBe('highest');
    expect(selC).toMatchObject({ rule: 'cheapest_within', tolerance: 0.1 });
    // the same candidates, with the same usage, under both rules: the initial skill and the six adopted ones
    const usage = (s: Selection) => s.candidates.map((x) => [x.step, x.origin, x.pass_rate, x.mean_tokens, x.mean_cost]);
    expect(usage(selC)).toEqual(usage(selH));
    expect(selC.candidates.map((x) => x.step)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const x of selC.candidates) expect(x.mean_tokens).toBeGreaterThan(0);

    // highest: the best val pass rate (step 6)
    const top = Math.max(...selH.candidates.map((x) => x.pass_rate));
    expect(sh.best_step).toBe(6);
    expect(selH.candidates.find((x) => x.chosen)?.pass_rate).toBe(top);
    // cheapest_within 0.1: among the candidates within 0.1 of the highest, the fewest tokens per case (step 5)
    const eligible = selC.candidates.filter((x) => x.pass_rate >= top - 0.1 - 1e-9);
    expect(selC.candidates.filter((x) => x.eligible)).toEqual(eligible);
    expect(eligible.length).toBeGreaterThan(1);
    const cheapest = eligible.reduce((a, b) => (b.mean_tokens! < a.mean_tokens! ? b : a));
    expect(cheapest.step).toBe(5);
    expect(cheapest.pass_rate).toBeLessThan(top);
    expect(selC.chosen).toBe(cheapest.hash);
    expect(selC.candidates.filter((x) => x.chosen)).toEqual([cheapest]);
    expect(sc).toMatchObject({ best_step: 5, best_origin: 'step_0005', best_score: cheapest.score, best_selection_pass_rate: cheapest.pass_rate });
    expect(readText(join(outC, 'best_skill.md'))).toBe(readText(join(outC, 'steps', 'step_0005', 'candidate_skill.md')));
    expect(readText(join(outH, 'best_skill.md'))).toBe(readText(join(outH, 'steps', 'step_0006', 'candidate_skill.md')));
    expect(sc.skill_tokens).toBeLessThan(sh.skill_tokens);
    expect(sc.skill_tokens_by_skill.best).toBe(sc.skill_tokens);
    // the step records follow the rule: step 6 was accepted as the highest yet, but the best stayed at step 5
    const last = history(outC).at(-1)!;
    expect(last).toMatchObject({ action: 'accept_new_best', best_step: 5, best_skill_tokens: sc.skill_tokens, best_mean_tokens: cheapest.mean_tokens });

    // with prices: every candidate has a mean cost per case, and tokens still decide (the same choice)
    const selP = readJson(join(outP, 'summary.json')).best_selection as Selection;
    for (const x of selP.candidates) expect(x.mean_cost).toBeGreaterThan(0);
    expect(selP.candidates.map((x) => [x.hash, x.mean_tokens])).toEqual(selC.candidates.map((x) => [x.hash, x.mean_tokens]));
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
});
