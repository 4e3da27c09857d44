/**
 * Salvage in the gate (evaluation.salvage) on dotnetdebug against the simulated model, in the plain world
 * with train seed 42, where step 5's candidate is rejected with a broken val item: the edits that fix items
 * and are blamed for no break (confirmed on fresh samples) are gated again and accepted. A run SIGKILLed
 * while it attributes the broken items to the edits resumes with the same steps, the same salvage record
 * and the same best skill, counting the same calls.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, history, readJson, readText, REPO, tempDirs, train } from './optimize-helpers.ts';

const tmp = tempDirs('salvage');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/dotnetdebug/sim.yaml';
const ARGS = [
  'model.simulated.noise=0',
  'model.simulated.analyst_error_rate=0',
  'evaluation.salvage=true',
  'train.seed=42',
  'evaluation.eval_test=false',
];

interface Salvage {
  broken: string[];
  fixed: string[];
  noise: string[];
  kept: number[];
  dropped: number[];
  edits: Array<{
    index: number;
    breaks: string[];
    fixes: string[];
    tests: Array<{ item: string; p: number | null; p_adjusted: number | null }>;
  }>;
  action: string;
}

describe('salvage', () => {
  test('a rejected candidate keeps the edits that fix and break nothing; a kill mid-salvage resumes to the same run', async () => {
    const outA = tmp.make('full');
    const outB = tmp.make('killed');
    const [full, killed] = await Promise.all([
      train(outA, ARGS, { config: CONFIG, cwd: REPO }),
      train(outB, ARGS, { config: CONFIG, cwd: REPO, killWhen: /^\[skillopt\] {3}salvage: \d+ edits, /m }),
    ]);
    expect(full.code, full.stdout + full.stderr).toBe(0);
    const steps = history(outA);
    const salvaged = steps.filter((r) => r.salvaged === true);
    expect(salvaged.length).toBeGreaterThan(0);
    for (const r of salvaged) {
      const s = r.salvage as Salvage;
      expect(s.kept.length).toBeGreaterThan(0);
      expect(s.dropped.length).toBeGreaterThan(0);
      // never an edit blamed for a broken val item; a blame is a confirmation whose adjusted p is below α
      for (const e of s.edits) if (s.kept.includes(e.index)) expect(e.breaks).toEqual([]);
      for (const e of s.edits) {
        expect(e.tests.map((t) => t.item).sort()).toEqual(s.broken.filter((id) => !s.noise.includes(id)).sort());
        for (const t of e.tests) expect(e.breaks.includes(t.item)).toBe(t.p_adjusted! < 0.05);
      }
      // the re-runs that decided were fresh samples: past the standard and the gate's extra samples, a range per step
      const fresh = join(outA, 'steps', `step_${String(r.step).padStart(4, '0')}`, 'salvage', 'fresh');
      for (const dir of readdirSync(fresh)) {
        const trials = readFileSync(join(fresh, dir, 'results.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { trial: number }).trial);
        expect(Math.min(...trials)).toBeGreaterThanOrEqual(100_000 * r.step);
      }
      expect(s.action).toMatch(/^accept/);
      expect(String(r.action)).toMatch(/^accept/);
    }
    const summary = readJson(join(outA, 'summary.json'));
    expect(summary.gate.salvaged).toBe(salvaged.length);
    expect(summary.gate.salvage_calls).toBeGreaterThan(0);
    expect(full.stdout).toMatch(
      /^\[skillopt\] {3}salvage: kept edit\(s\) [\d, ]+ of \d+, dropped [\d, ]+ \(they broke /m,
    );

    expect(killed.killed).toBe(true);
    const resumed = await train(outB, ARGS, { config: CONFIG, cwd: REPO });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/resuming after step \d+ /);
    const view = (out: string) =>
      history(out).map((r) => [r.step, r.action, r.current_score, r.best_score, r.salvage ?? null]);
    expect(view(outB)).toEqual(view(outA));
    expect(readText(join(outB, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));
    expect(readJson(join(outB, 'summary.json')).token_summary._total.calls).toBe(summary.token_summary._total.calls);
  });
});
