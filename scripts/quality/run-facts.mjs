/**
 * The facts of one finished optimize run, read from its run directory (docs/output-files.md):
 * summary.json, history.json, skills/skill_vNNNN.md (the current skill after each step, so version N-1
 * is what step N's candidate was compared with), steps/step_NNNN/candidate_skill.md (and salvaged_skill.md)
 * and best_skill.md.
 * With `optimizer.candidate_selection: pareto` a step edits a parent drawn from the front instead
 * (steps/step_NNNN/parent.json names it in pareto_pool.json): that parent is its candidate's reference.
 * Skills are identified by a hash of their text, so identical skills are evaluated once.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const textHash = (text) => createHash('sha256').update(text).digest('hex').slice(0, 20);

const pad4 = (n) => String(n).padStart(4, '0');
const readJson = (path) => (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : null);

/** accept | reject | skip, from a step's recorded action (accept_new_best, force_accept, reject, skip_…). */
export function actionKind(action) {
  const a = String(action ?? '');
  if (a.includes('accept')) return 'accept';
  if (a.includes('reject')) return 'reject';
  return 'skip';
}

/** Requests sent before the end-of-run test evaluations: `optimization_calls`, else usage.json's total. */
export function optimizationCalls(summary, usage) {
  if (typeof summary.optimization_calls === 'number')
    return { calls: summary.optimization_calls, source: 'optimization_calls' };
  const total = usage?._total?.calls;
  if (typeof total === 'number') return { calls: total, source: 'usage.json' };
  return { calls: summary.token_summary?._total?.calls ?? null, source: 'total calls' };
}

export function readRunFacts(dir) {
  const summary = readJson(join(dir, 'summary.json'));
  if (!summary) throw new Error(`${dir}: no summary.json (the run did not finish)`);
  const history = readJson(join(dir, 'history.json')) ?? [];
  const skills = new Map(); // hash → text
  const add = (text) => {
    const hash = textHash(text);
    skills.set(hash, text);
    return hash;
  };
  const skill = (path) => (existsSync(path) ? add(readFileSync(path, 'utf8')) : null);
  const pool = readJson(join(dir, 'pareto_pool.json'));
  const parentOf = (step) => {
    const id = readJson(join(dir, 'steps', `step_${pad4(step)}`, 'parent.json'))?.id;
    const text = id === undefined ? undefined : pool?.candidates?.find((c) => c.id === id)?.skill;
    return typeof text === 'string' ? add(text) : null;
  };
  const versions = readdirSync(join(dir, 'skills'))
    .map((f) => /^skill_v(\d+)\.md$/.exec(f))
    .filter(Boolean)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const version = (n) => skill(join(dir, 'skills', `skill_v${pad4(n)}.md`));
  const initial = version(0);
  // a step whose rejected candidate was salvaged (evaluation.salvage) gated two candidates: the rejected one,
  // then steps/step_NNNN/salvaged_skill.md, accepted when the record says `salvaged`
  const steps = history.flatMap((h) => {
    const folder = join(dir, 'steps', `step_${pad4(h.step)}`);
    const step = { step: h.step, current: parentOf(h.step) ?? version(h.step - 1), val: h.selection_pass_rate ?? null };
    const candidate = skill(join(folder, 'candidate_skill.md'));
    const salvaged = skill(join(folder, 'salvaged_skill.md'));
    if (salvaged === null) return [{ ...step, action: h.action, kind: actionKind(h.action), candidate }];
    const second = h.salvaged === true ? h.action : 'reject';
    return [
      { ...step, action: 'reject', kind: 'reject', candidate },
      { ...step, action: second, kind: actionKind(second), candidate: salvaged },
    ];
  });
  // a compress stage (optimizer.compress: on) gated steps/step_NNNN/compressed_skill.md against compress_source.md
  const compressions = history.flatMap((h) => {
    const folder = join(dir, 'steps', `step_${pad4(h.step)}`);
    const candidate = skill(join(folder, 'compressed_skill.md'));
    const current = skill(join(folder, 'compress_source.md'));
    if (candidate === null || current === null) return [];
    return [
      {
        step: h.step,
        action: h.compress?.action ?? 'reject',
        kind: actionKind(h.compress?.action),
        candidate,
        current,
      },
    ];
  });
  const best = skill(join(dir, 'best_skill.md'));
  const final = version(versions.at(-1) ?? 0);
  const { calls, source } = optimizationCalls(summary, readJson(join(dir, 'usage.json')));
  const len = (h) => skills.get(h)?.length ?? null;
  return {
    skills,
    initial,
    best,
    final,
    steps,
    lengths: { initial: len(initial), best: len(best), final: len(final) },
    // the compress stage's records (optimizer.compress: on), one per step it ran in
    compressions,
    compress: history
      .filter((h) => h.compress && typeof h.compress === 'object')
      .map((h) => ({ step: h.step, ...h.compress })),
    calls,
    callsSource: source,
    val: { baseline: summary.baseline_selection_pass_rate ?? null, best: summary.best_selection_pass_rate ?? null },
    test: {
      baseline: summary.baseline_test_pass_rate ?? null,
      best: summary.test_pass_rate ?? null,
      final: summary.final_test_pass_rate ?? summary.final_test_hard ?? null,
    },
    targetReached: summary.target_reached ?? null,
    stopped: summary.stopped?.reason ?? null,
  };
}
