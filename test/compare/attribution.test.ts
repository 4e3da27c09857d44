import { describe, expect, it } from 'vitest';
import {
  attribute,
  defaultBudget,
  type AttributeOptions,
  type ChangedCase,
  type VariantEvaluator,
} from '../../src/compare/attribution.ts';
import { LOOKS } from '../../src/compare/blame-test.ts';
import { skillChange } from '../../src/skill/units.ts';
import { familyAdjusted } from '../../src/stats/multiplicity.ts';
import { stableHash32 } from '../../src/util/rng.ts';

const SEED = [
  '# Triage',
  '',
  '- When the input mentions `login`, answer `auth`.',
  '- When the input mentions `invoice`, answer `billing`.',
  '',
].join('\n');
const LEARNED = [
  '- When the input mentions `crash`, answer `mobile`.',
  '- When the input mentions `deploy`, answer `infra`.',
  '- When the input mentions `invoice failed`, answer `payments`.',
  '- When the input mentions `refund`, answer `payments`.',
];
const CANDIDATE = SEED.replace('answer `billing`.\n', `answer \`billing\`.\n${LEARNED.join('\n')}\n`);

/**
 * A world with noise: a sample of a case passes with the probability its rule gives for the text, drawn
 * from a hash of (text, case, sample index), so a sample index asked twice for one text repeats its answer
 * (as a cache would). `inv-*` pass 0.9 without the planted `invoice failed` rule (u3), 0.1 with it;
 * `crash-1` passes 0.9 with u1 and 0.1 without; `both-1` passes 0.9 only without u2 and u4 both; `flip-*`
 * pass 0.5 whatever the text (their flips are noise). Every (text, case, sample) asked is recorded.
 */
function world(
  asked: string[] = [],
  log: Array<{ reverted: string; samples: readonly number[] }> = [],
): VariantEvaluator {
  return async ({ reverted, text }, cases, samples) => {
    log.push({ reverted: reverted === null ? 'baseline' : reverted.join(','), samples });
    const has = (line: string) => text.includes(line);
    const counts = new Map<string, { passes: number; scored: number }>();
    for (const c of cases) {
      const p = c.id.startsWith('inv-')
        ? has(LEARNED[2]!)
          ? 0.1
          : 0.9
        : c.id === 'crash-1'
          ? has(LEARNED[0]!)
            ? 0.9
            : 0.1
          : c.id === 'both-1'
            ? has(LEARNED[1]!) || has(LEARNED[3]!)
              ? 0.1
              : 0.9
            : 0.5;
      let passes = 0;
      for (const t of samples) {
        asked.push(`${text}\u0000${c.id}\u0000${t}`);
        if (stableHash32(text, c.id, String(t)) / 2 ** 32 < p) passes++;
      }
      counts.set(`${c.suite}\u0000${c.id}`, { passes, scored: samples.length });
    }
    return { counts, calls: cases.length * samples.length };
  };
}

const changed = (id: string, direction: ChangedCase['direction']): ChangedCase => ({
  suite: 'triage',
  id,
  direction,
  callsPerSample: 1,
});
const opts = (over: Partial<AttributeOptions> = {}): AttributeOptions => ({
  budget: 100_000,
  alpha: 0.05,
  deterministic: false,
  firstSample: 3,
  baselineText: SEED,
  ...over,
});
const ids = (list: ReadonlyArray<{ id: string }>) => list.map((c) => c.id);

describe('attributing changed cases to units', () => {
  const change = skillChange(SEED, CANDIDATE);
  const cases = [
    changed('crash-1', 'fixed'),
    changed('inv-2', 'regressed'),
    changed('inv-1', 'regressed'),
    changed('both-1', 'regressed'),
    changed('flip-1', 'regressed'),
    changed('flip-2', 'fixed'),
  ];

  it('blames the planted unit for the cases it broke, credits the fix and the combo, and leaves the noise flips unblamed', async () => {
    expect(change.units.map((u) => u.text)).toEqual(LEARNED);
    const got = await attribute(change, cases, world(), opts());
    expect(got.units.map((u) => [u.id, ids(u.breaks), ids(u.fixes)])).toEqual([
      ['u1', [], ['crash-1']],
      ['u2', [], []],
      ['u3', ['inv-1', 'inv-2'], []],
      ['u4', [], []],
    ]);
    expect(got.combos.map((c) => [c.units, ids(c.breaks)])).toEqual([[['u2', 'u4'], ['both-1']]]);
    expect(ids(got.noise)).toEqual(['flip-1', 'flip-2']);
    expect(got.unexplained).toEqual([]);
    // every blame carries its confirmation's arms, p and adjusted p: the family is every confirmation
    const blames = [...got.units.flatMap((u) => [...u.breaks, ...u.fixes]), ...got.combos.flatMap((c) => c.breaks)];
    expect(got.tested).toBe(4);
    for (const b of blames) {
      expect(b.p).toBeLessThan(0.05);
      expect(b.p_adjusted).toBeGreaterThanOrEqual(b.p!);
      expect(b.p_adjusted).toBeLessThan(0.05);
      expect(b.reverted.scored).toBeGreaterThanOrEqual(LOOKS[0]);
    }
    expect(got.samples).toEqual([...LOOKS]);
    expect(got.deterministic).toBe(false);
  });

  it('every question is answered by fresh samples: never one of the runs’ trials, never a sample asked before', async () => {
    const asked: string[] = [];
    const log: Array<{ reverted: string; samples: readonly number[] }> = [];
    const got = await attribute(change, cases, world(asked, log), opts({ firstSample: 3 }));
    expect(new Set(asked).size).toBe(asked.length);
    expect(Math.min(...log.flatMap((l) => l.samples))).toBe(3);
    // the baseline's own text is asked (reproduction), the candidate's several times, each on other samples
    expect(log.filter((l) => l.reverted === '').length).toBeGreaterThan(1);
    expect(got.calls).toBe(asked.length);
  });

  it('the p-values are adjusted over every confirmation with the one multiplicity rule', async () => {
    const got = await attribute(change, cases, world(), opts());
    const blames = [...got.units.flatMap((u) => [...u.breaks, ...u.fixes]), ...got.combos.flatMap((c) => c.breaks)];
    const adjusted = familyAdjusted(
      blames.map((b) => ({ p: b.p!, attainable: 0 })),
      0.05,
    );
    // with every member able to reach α, the family's adjustment is Benjamini–Hochberg's over these p-values
    expect(blames.map((b) => b.p_adjusted)).toEqual(adjusted);
  });

  it('a budget too small leaves cases unexplained (budget), the same ones every time; calls stay within it', async () => {
    const small = defaultBudget(cases, change.units.length, false) / 4;
    const runs = await Promise.all([1, 2].map(() => attribute(change, cases, world(), opts({ budget: small }))));
    expect(runs[0]).toEqual(runs[1]);
    expect(runs[0]!.calls).toBeLessThanOrEqual(small);
    expect(runs[0]!.unexplained.some((c) => c.reason === 'budget')).toBe(true);
    const full = await attribute(
      change,
      cases,
      world(),
      opts({ budget: defaultBudget(cases, change.units.length, false) }),
    );
    expect(full.unexplained).toEqual([]);
  });

  it('a suspect the search saw by chance is not confirmed on fresh samples: unexplained, with its counts and p', async () => {
    // reverting u2 seems to restore weak-1 in the search's looks, and does not when it is confirmed
    let confirming = false;
    const got = await attribute(
      change,
      [changed('weak-1', 'regressed')],
      async ({ reverted, text }, batch, samples) => {
        if (reverted?.join() === 'u2' && samples.length >= LOOKS[0]) confirming = true;
        const p = text === SEED ? 0.9 : reverted?.includes('u2') && !confirming ? 0.9 : 0.3;
        let passes = 0;
        for (const t of samples) if (stableHash32(text, String(t)) / 2 ** 32 < p) passes++;
        return {
          counts: new Map(batch.map((c) => [`${c.suite}\u0000${c.id}`, { passes, scored: samples.length }])),
          calls: samples.length,
        };
      },
      opts(),
    );
    expect(got.units.every((u) => u.breaks.length === 0)).toBe(true);
    expect(got.unexplained).toEqual([
      expect.objectContaining({ id: 'weak-1', reason: 'not_confirmed', units: ['u2'] }),
    ]);
    const u = got.unexplained[0]!;
    expect(u.p_adjusted).toBeGreaterThanOrEqual(0.05);
    expect(u.reverted!.scored).toBe(u.candidate!.scored);
    expect(got.tested).toBe(1);
  });

  it('a flip that reverting every unit does not restore (the change is outside the units) is outside_units', async () => {
    const frontmatter = `---\nname: triage\n---\n${SEED}`;
    const moved = skillChange(frontmatter, `---\nname: triage-2\n---\n${CANDIDATE}`);
    const got = await attribute(
      moved,
      [changed('fm-1', 'regressed')],
      async ({ text }, batch, samples) => {
        const p = text.includes('name: triage\n') ? 0.9 : 0.1;
        let passes = 0;
        for (const t of samples) if (stableHash32(text, String(t)) / 2 ** 32 < p) passes++;
        return {
          counts: new Map(batch.map((c) => [`${c.suite}\u0000${c.id}`, { passes, scored: samples.length }])),
          calls: samples.length,
        };
      },
      opts({ baselineText: frontmatter }),
    );
    expect(got.unexplained).toEqual([{ suite: 'triage', id: 'fm-1', direction: 'regressed', reason: 'outside_units' }]);
  });

  it('against a deterministic target each question takes one sample and no p is given', async () => {
    const log: Array<{ reverted: string; samples: readonly number[] }> = [];
    const deterministic: VariantEvaluator = async (variant, batch, samples) => {
      log.push({ reverted: variant.reverted === null ? 'baseline' : variant.reverted.join(','), samples });
      const counts = new Map(
        batch.map((c) => [
          `${c.suite}\u0000${c.id}`,
          {
            passes: c.id.startsWith('inv-') && variant.text.includes(LEARNED[2]!) ? 0 : samples.length,
            scored: samples.length,
          },
        ]),
      );
      return { counts, calls: batch.length * samples.length };
    };
    const got = await attribute(change, [changed('inv-1', 'regressed')], deterministic, opts({ deterministic: true }));
    expect(got.units[2]!.breaks).toEqual([
      {
        suite: 'triage',
        id: 'inv-1',
        p: null,
        p_adjusted: null,
        reverted: { passes: 1, scored: 1 },
        candidate: { passes: 0, scored: 1 },
      },
    ]);
    expect(log.every((l) => l.samples.length === 1)).toBe(true);
    expect(got.deterministic).toBe(true);
    expect(got.samples).toEqual([1]);
  });

  it('a run that fails fails the attribution; without units nothing is re-run', async () => {
    await expect(
      attribute(
        change,
        [changed('inv-1', 'regressed')],
        async () => Promise.reject(new Error('endpoint down')),
        opts(),
      ),
    ).rejects.toThrow('endpoint down');
    const none = skillChange(SEED, SEED);
    const got = await attribute(
      none,
      [changed('inv-1', 'regressed')],
      async () => Promise.reject(new Error('nothing to re-run')),
      opts(),
    );
    expect(got.unexplained).toEqual([
      { suite: 'triage', id: 'inv-1', direction: 'regressed', reason: 'outside_units' },
    ]);
  });
});
