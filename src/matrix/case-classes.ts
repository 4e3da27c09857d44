/**
 * Every case of a matrix across its cells (docs/matrix.md#cases): its pass fraction in each cell and its
 * classes.
 * - `fails_everywhere`: it fails in every cell that has a skill (the bare model's cells, `none`, left out;
 *   all cells when every skill is `none`): the skill or the task is the problem, not one model.
 * - `model_specific`: with some skill, it fails on exactly one model and passes on every other (two models
 *   or more): that model's problem.
 * - `helped` / `hurt`: on some model a skill flipped it against the first skill (fail → pass, pass → fail),
 *   as that model's lift comparison lists it.
 * A case passes in a cell when its pass fraction is at least one half (suite/summary.ts).
 */
import { caseKey, type CaseRef } from '../compare/index.ts';
import type { MatrixCase } from '../runfiles/index.ts';
import { caseOutcomes } from '../suite/summary.ts';
import { round6 } from '../util/format.ts';
import type { MatrixCellData } from './cell-data.ts';
import type { Lift } from './lifts.ts';

export interface ClassInput {
  cells: readonly MatrixCellData[];
  models: readonly string[];
  /** Skill labels whose cells have no skill (`none`). */
  noSkill: ReadonlySet<string>;
  lifts: readonly Lift[];
}

const passes = (f: number | null | undefined) => f !== null && f !== undefined && f >= 0.5;

export function matrixCases(input: ClassInput): MatrixCase[] {
  const fractions = input.cells.map((c) => new Map(caseOutcomes(c.rows).map((o) => [caseKey(o), o.fraction] as const)));
  const refs = new Map<string, CaseRef>();
  for (const c of input.cells)
    for (const r of c.rows) if (!refs.has(caseKey(r))) refs.set(caseKey(r), { suite: r.suite, id: r.id });
  const keys = [...refs.keys()].sort((a, b) => {
    const x = refs.get(a)!;
    const y = refs.get(b)!;
    return x.suite < y.suite ? -1 : x.suite > y.suite ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
  });
  const withSkill = input.cells.some((c) => !input.noSkill.has(c.entry.skill))
    ? input.cells.filter((c) => !input.noSkill.has(c.entry.skill))
    : input.cells;
  const skills = [...new Set(withSkill.map((c) => c.entry.skill))];
  const flips = (which: 'fixed' | 'regressed') => {
    const by = new Map<string, Array<{ model: string; skill: string }>>();
    for (const l of input.lifts)
      for (const x of l.comparison[which])
        by.set(caseKey(x), [...(by.get(caseKey(x)) ?? []), { model: l.json.model, skill: l.json.skill }]);
    return by;
  };
  const helped = flips('fixed');
  const hurt = flips('regressed');
  const at = (c: MatrixCellData, key: string) => fractions[input.cells.indexOf(c)]!.get(key);

  return keys.map((key) => {
    const outcomes = input.cells.map((c) => round6(at(c, key) ?? null));
    const seen = withSkill.map((c) => at(c, key)).filter((f): f is number => f !== null && f !== undefined);
    const failsEverywhere = seen.length > 0 && seen.every((f) => !passes(f));
    const modelSpecific = skills.flatMap((skill) => {
      const bySkill = withSkill.filter(
        (c) => c.entry.skill === skill && at(c, key) !== null && at(c, key) !== undefined,
      );
      if (bySkill.length < 2) return [];
      const failing = bySkill.filter((c) => !passes(at(c, key)));
      return failing.length === 1 ? [{ model: failing[0]!.entry.model, skill }] : [];
    });
    const h = helped.get(key) ?? [];
    const u = hurt.get(key) ?? [];
    const known = outcomes.filter((f): f is number => f !== null);
    const classes: MatrixCase['classes'] = [];
    if (failsEverywhere) classes.push('fails_everywhere');
    if (modelSpecific.length) classes.push('model_specific');
    if (h.length) classes.push('helped');
    if (u.length) classes.push('hurt');
    const ref = refs.get(key)!;
    return {
      suite: ref.suite,
      id: ref.id,
      outcomes,
      classes,
      model_specific: modelSpecific,
      helped: h,
      hurt: u,
      differs: known.some(passes) && known.some((f) => !passes(f)),
    };
  });
}
