/**
 * The compress stage (optimizer.compress: on) in optimize runs against the simulated model:
 * - dotnetdebug, train seed 42: compress steps happen once the skill has grown past its seed, each is
 *   gated on val (its own selection_eval folder, a gate rule on the record) and the accepted ones shrink
 *   the current skill; a run SIGKILLed while a compression is being validated resumes to the same steps,
 *   the same compress records and the same best skill, counting the same calls;
 * - the opt fixture with an optimizer whose compress reply deletes the seed's rule (every other stage is
 *   answered as the simulated model answers it): the compression loses val and the gate rejects it.
 */
import type { CompressRecord } from '../../src/optimizer/stage-compress.ts';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readStageHeader } from '../../src/protocol/prompt.ts';
import { regionTexts } from '../../src/skill/regions.ts';
import { resolveSimConfig, simulateChatCompletion } from '../../src/sim/dispatch.ts';
import { PLAIN_SIM_KNOBS } from '../../src/sim/knobs.ts';
import { startSimServer } from '../../src/sim/server.ts';
import { startFaultServer } from '../helpers/fault-server.ts';
import { assertBuilt, history, OPT_SEED_SKILL, readJson, readText, REPO, tempDirs, train } from './optimize-helpers.ts';

const tmp = tempDirs('compress');
const closers: Array<() => Promise<void>> = [];
beforeAll(assertBuilt);
afterAll(async () => {
  for (const c of closers) await c();
  tmp.cleanup();
});

const CONFIG = 'configs/dotnetdebug/sim.yaml';
const ARGS = ['optimizer.compress=on', 'train.seed=42', 'evaluation.eval_test=false'];

type Compress = CompressRecord;

const pad4 = (n: number) => String(n).padStart(4, '0');

describe('compress stage', () => {
  test('compressions are gated and shrink the skill; a kill mid-compress resumes to the same run', async () => {
    const outA = tmp.make('full');
    const outB = tmp.make('killed');
    const [full, killed] = await Promise.all([
      train(outA, ARGS, { config: CONFIG, cwd: REPO }),
      train(outB, ARGS, {
        config: CONFIG,
        cwd: REPO,
        killWhen: /^\[skillopt\] {3}compress \(growth\): .*; validating$/m,
      }),
    ]);
    expect(full.code, full.stdout + full.stderr).toBe(0);
    const steps = history(outA);
    const compressed = steps.filter((r) => r.compress);
    expect(compressed.length).toBeGreaterThan(0);
    const accepted = compressed.filter((r) => String((r.compress as Compress).action).startsWith('accept'));
    expect(accepted.length).toBeGreaterThan(0);
    for (const r of compressed) {
      const c = r.compress as Compress;
      expect(['growth', 'epoch_end']).toContain(c.trigger);
      const folder = join(outA, 'steps', `step_${pad4(r.step)}`);
      expect(existsSync(join(folder, 'compress_result.json'))).toBe(true);
      if (c.action.startsWith('skip')) continue;
      // gated: validated on val in its own folder, with the gate's rule on record
      expect(existsSync(join(folder, 'compress_eval', 'results.jsonl'))).toBe(true);
      expect(typeof c.rule).toBe('string');
      const candidate = readFileSync(join(folder, 'compressed_skill.md'), 'utf8');
      expect(candidate.length).toBeLessThan(c.chars_before);
      expect(readFileSync(join(folder, 'compress_source.md'), 'utf8').length).toBe(c.chars_before);
      // never a protected region: the step's skill before compression has the same regions
      const before = readFileSync(join(outA, 'skills', `skill_v${pad4(r.step - 1)}.md`), 'utf8');
      expect(regionTexts(candidate).length).toBe(regionTexts(before).length);
      if (c.action.startsWith('accept')) {
        expect(c.tokens_after).toBe(Math.ceil(candidate.length / 4));
        expect(c.tokens_after).toBeLessThan(c.tokens_before);
        expect(r.current_origin).toBe(`step_${pad4(r.step)}_compressed`);
        expect(r.skill_len).toBe(candidate.length);
      }
    }
    expect(full.stdout).toMatch(/^\[skillopt\] {3}compress: val \d\.\d{3} \(.+\) · accept/m);

    expect(killed.killed).toBe(true);
    const resumed = await train(outB, ARGS, { config: CONFIG, cwd: REPO });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/resuming after step \d+ /);
    const view = (out: string) =>
      history(out).map((r) => [r.step, r.action, r.current_score, r.best_score, r.compress ?? null]);
    expect(view(outB)).toEqual(view(outA));
    expect(readText(join(outB, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));
    expect(readJson(join(outB, 'summary.json')).token_summary._total.calls).toBe(
      readJson(join(outA, 'summary.json')).token_summary._total.calls,
    );
  });

  test('a compression that loses val is rejected', async () => {
    const sim = await startSimServer({ ...PLAIN_SIM_KNOBS, host: '127.0.0.1', port: 0, logRequests: false });
    const cfg = resolveSimConfig({ ...PLAIN_SIM_KNOBS });
    const seedRule = readText(OPT_SEED_SKILL)
      .split('\n')
      .find((l) => l.includes('`DiskFull`'))!;
    // the optimizer: the simulated model's answer for every stage, but a compress reply that deletes the seed's rule
    const fault = await startFaultServer((ctx) => {
      const user = (ctx.body?.messages ?? []).find((m: { role: string }) => m.role === 'user')?.content ?? '';
      if (readStageHeader(user) === 'compress')
        return { content: JSON.stringify({ reasoning: 'drop it', edits: [{ op: 'delete', target: seedRule }] }) };
      return { content: simulateChatCompletion(ctx.body, cfg).completion.choices[0]!.message.content };
    });
    closers.push(
      () => sim.close(),
      () => fault.close(),
    );
    const out = tmp.make('reject');
    const r = await train(
      out,
      [
        `model.optimizer_base_url=${fault.baseURL}`,
        `model.target_base_url=${sim.url}`,
        'optimizer.compress=on',
        'optimizer.compress_growth=1',
        'evaluation.eval_test=false',
      ],
      {
        config: 'configs/opt/external.yaml',
      },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const runs = history(out).filter((s) => s.compress && !(s.compress as Compress).action.startsWith('skip'));
    expect(runs.length).toBeGreaterThan(0);
    for (const s of runs) {
      const c = s.compress as Compress;
      expect(c.action).toBe('reject');
      expect(c.tokens_after).toBe(c.tokens_before);
      expect(s.current_origin).not.toMatch(/_compressed$/);
    }
    // the seed's rule is still in every skill the run kept
    expect(readText(join(out, 'best_skill.md'))).toContain(seedRule);
  });
});
