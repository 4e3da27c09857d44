/**
 * Candidate selection, the overfit guard and the ablation switches through the CLI, on dotnetdebug
 * against the built-in simulated model (59 train / 29 val, 6 steps; a few seconds a run):
 * - `optimizer.candidate_selection=pareto` with merges: every step names its parent from the pool, the
 *   summary lists the front (ids of the pool, each best on ≥ 1 val item), merges name two pool lineages
 *   and keep their candidate in the step folder;
 * - a run SIGKILLed in the middle of a step (while its merge is validated) and rerun ends like the
 *   uninterrupted run: same history actions and parents, same pool, same best_skill.md;
 * - `optimizer.overfit_guard=reject` keeps every flagged edit out of the ranked edits and lists it in the
 *   trajectory digest; `flag` (the default) records flags and changes nothing;
 * - `optimizer.clip_edits=false` applies every merged edit, with no ranking call.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { describeItem, type Item } from '../../src/optimizer/patch.ts';
import {
  assertBuilt,
  history,
  readJson,
  readText,
  REPO,
  skillopt,
  tempDirs,
  type StepRecord,
} from './optimize-helpers.ts';

const tmp = tempDirs('pareto');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/dotnetdebug/sim.yaml';
const run = (out: string, options: string[], killWhen?: RegExp) =>
  skillopt(
    [
      'train',
      '--config',
      CONFIG,
      '--cfg-options',
      `env.out_root=${out}`,
      'cache.mode=off',
      'evaluation.eval_test=false',
      ...options,
    ],
    { cwd: REPO, killWhen },
  );

interface Pool {
  candidates: Array<{ id: string; parents: string[]; skill: string; scores: Record<string, number> }>;
  merges_tried: string[];
}
type Flag = { index: number; kind: string; action: string; edit: string };
const steps = (out: string) =>
  history(out) as Array<
    StepRecord & {
      parent_id?: string;
      pool_id?: string;
      merge?: { parents: string[]; action: string; id?: string };
      overfit_flags?: Flag[];
    }
  >;

describe('candidate selection and the overfit guard', () => {
  const PARETO = ['optimizer.candidate_selection=pareto', 'optimizer.max_merges=3'];
  const outA = tmp.make('pareto');
  const uninterrupted = run(outA, PARETO);

  test('pareto: parents from the pool, the front in the summary, merges of two lineages', async () => {
    const r = await uninterrupted;
    expect(r.code).toBe(0);
    const pool = readJson<Pool>(join(outA, 'pareto_pool.json'));
    const ids = new Set(pool.candidates.map((c) => c.id));
    expect(pool.candidates[0]).toMatchObject({ id: 'c000', parents: [] });
    const h = steps(outA);
    expect(h).toHaveLength(6);
    for (const s of h) {
      expect(ids.has(s.parent_id!)).toBe(true);
      expect(existsSync(join(outA, 'steps', `step_000${s.step}`, 'parent.json'))).toBe(true);
      if (String(s.action).startsWith('accept')) expect(ids.has(s.pool_id!)).toBe(true);
    }
    const summary = readJson(join(outA, 'summary.json'));
    expect(summary.candidate_selection).toBe('pareto');
    expect(summary.pareto.candidates).toBe(pool.candidates.length);
    expect(summary.pareto.front.length).toBeGreaterThan(0);
    for (const f of summary.pareto.front) {
      expect(ids.has(f.id)).toBe(true);
      expect(f.wins).toBeGreaterThan(0);
    }
    const merges = h.filter((s) => s.merge);
    expect(merges.length).toBeGreaterThan(0);
    for (const s of merges) {
      const [a, b] = s.merge!.parents;
      expect(ids.has(a!) && ids.has(b!) && a !== b).toBe(true);
      expect(existsSync(join(outA, 'steps', `step_000${s.step}`, 'merge_candidate.md'))).toBe(true);
      if (s.merge!.id) expect(pool.candidates.find((c) => c.id === s.merge!.id)!.parents).toEqual([a, b]);
    }
    expect(r.stdout).toMatch(
      /merge: validating c\d+ \+ c\d+ \(changes since c\d+, \d+ conflict\(s\)\)\n.*merge of c\d+ and c\d+: \w+/,
    );
  });

  test('pareto: SIGKILL while a merge is validated, rerun → the same run as an uninterrupted one', async () => {
    const out = tmp.make('pareto-killed');
    // the sim's latency keeps the merge's validation running while the kill arrives
    const slow = [...PARETO, 'model.simulated.latency_ms=40'];
    const killed = await run(out, slow, /merge: validating c\d+ \+ c\d+/);
    expect(killed.killed).toBe(true);
    // killed inside the step: its candidate is in the pool, its merge undecided, its record not written
    const open = readdirSync(join(out, 'steps')).filter(
      (d) =>
        existsSync(join(out, 'steps', d, 'merge_candidate.md')) && !existsSync(join(out, 'steps', d, 'merge.json')),
    );
    expect(open).toHaveLength(1);
    expect(existsSync(join(out, 'steps', open[0]!, 'step_record.json'))).toBe(false);
    const resumed = await run(out, slow);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/resuming after step \d/);
    await uninterrupted;
    const pick = (o: string) =>
      steps(o).map((s) => [s.step, s.action, s.parent_id, s.pool_id ?? null, s.merge?.action ?? null]);
    expect(pick(out)).toEqual(pick(outA));
    expect(readJson<Pool>(join(out, 'pareto_pool.json')).candidates.map((c) => c.skill)).toEqual(
      readJson<Pool>(join(outA, 'pareto_pool.json')).candidates.map((c) => c.skill),
    );
    expect(readText(join(out, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));
  });

  test('overfit guard: reject keeps flagged edits out of the ranked edits; flag only records them', async () => {
    const outR = tmp.make('guard-reject');
    // flag is the default: the uninterrupted pareto run above is a run with it
    const outF = outA;
    const [rej, flg] = await Promise.all([run(outR, ['optimizer.overfit_guard=reject']), uninterrupted]);
    expect(rej.code).toBe(0);
    expect(flg.code).toBe(0);
    const flagged = steps(outF).filter((s) => s.overfit_flags?.length);
    expect(flagged.length).toBeGreaterThan(0);
    for (const s of flagged) {
      expect(s.overfit_flags!.every((f) => f.action === 'flagged')).toBe(true);
      expect(s.n_overfit_rejected).toBeUndefined();
    }
    expect(readJson(join(outF, 'summary.json')).overfit_guard).toMatchObject({ mode: 'flag', rejected_edits: 0 });
    const rejected = steps(outR).filter((s) => s.overfit_flags?.length);
    expect(rejected.length).toBeGreaterThan(0);
    let total = 0;
    for (const s of rejected) {
      const dir = join(outR, 'steps', `step_000${s.step}`);
      const digest = readJson<{ guard_rejected?: string[] }>(join(dir, 'trajectory_digest.json'));
      const bad = new Set(s.overfit_flags!.map((f) => f.edit));
      expect(digest.guard_rejected).toEqual([...bad]);
      expect(s.n_overfit_rejected).toBe(bad.size);
      total += bad.size;
      if (existsSync(join(dir, 'ranked_edits.json'))) {
        const ranked = new Set(readJson<{ items: Item[] }>(join(dir, 'ranked_edits.json')).items.map(describeItem));
        for (const e of bad) expect(ranked.has(e)).toBe(false);
      }
    }
    expect(readJson(join(outR, 'summary.json')).overfit_guard).toMatchObject({ mode: 'reject', rejected_edits: total });
  });

  test('clip_edits=false: every merged edit is applied and no ranking call is made', async () => {
    const out = tmp.make('no-clip');
    const r = await run(out, ['optimizer.clip_edits=false', 'optimizer.overfit_guard=off']);
    expect(r.code).toBe(0);
    for (const s of steps(out).filter((x) => x.n_edits_merged !== undefined)) {
      expect(s.edit_budget).toBe(999);
      expect(s.n_edits_ranked).toBe(s.n_edits_merged);
    }
    expect(readJson(join(out, 'summary.json')).token_summary.ranking).toBeUndefined();
  });
});
