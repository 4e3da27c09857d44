/**
 * The simulated target's world (v2): interference between rules, dilution past an attention budget, and
 * temperature-like noise keyed on the input and its answer. Counts over 200 seeded inputs are exact
 * (deterministic), asserted within a band around the knob's value.
 */
import { describe, expect, it } from 'vitest';
import { missProbability, overload } from '../../src/sim/attention.ts';
import { simulateTarget, type TargetOptions } from '../../src/sim/target.ts';
import { ask, PLAIN, simServer } from './helpers.ts';

const SPECIFIC = '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.';
const GENERAL = '- When the input mentions `handler`, answer `async-void`.';
const UNRELATED = '- When the input mentions `Zebra`, answer `zebra`.';
const INPUTS = Array.from({ length: 200 }, (_, i) => `case ${i}: the handler throws ObjectDisposedException`);

function answers(skill: string, opts: Partial<TargetOptions>, inputs = INPUTS): string[] {
  return inputs.map(
    (input) =>
      simulateTarget(
        [
          { role: 'system', content: skill },
          { role: 'user', content: input },
        ],
        'mitko',
        { seed: 0, noise: 0, maxRules: 0, ...opts },
      ).content,
  );
}

const indexesOf = (list: string[], value: string) => list.flatMap((a, i) => (a === value ? [i] : []));

describe('interference', () => {
  it('a lone rule always wins, whatever the knob', () => {
    expect(new Set(answers(SPECIFIC, { interference: 1 }))).toEqual(new Set(['disposed-object']));
  });

  it('an overly general rule breaks about `interference` of the cases that passed; 0 keeps the most specific rule', () => {
    const skill = `${SPECIFIC}\n${GENERAL}`;
    expect(new Set(answers(skill, { interference: 0 }))).toEqual(new Set(['disposed-object']));
    expect(new Set(answers(skill, { interference: 1 }))).toEqual(new Set(['async-void']));
    const broken = indexesOf(answers(skill, { interference: 0.3 }), 'async-void');
    expect(broken.length).toBeGreaterThanOrEqual(45);
    expect(broken.length).toBeLessThanOrEqual(75);
    expect(answers(skill, { interference: 0.3 })).toEqual(answers(skill, { interference: 0.3 }));
    // one draw per input: the cases confused at 0.3 are confused at 0.5 too
    const more = indexesOf(answers(skill, { interference: 0.5 }), 'async-void');
    expect(broken.every((i) => more.includes(i))).toBe(true);
    expect(more.length).toBeGreaterThan(broken.length);
  });

  it('the order of the rules does not decide, and a rival with the same answer is no conflict', () => {
    expect(answers(`${GENERAL}\n${SPECIFIC}`, { interference: 0.3 })).toEqual(
      answers(`${SPECIFIC}\n${GENERAL}`, { interference: 0.3 }),
    );
    const same = '- When the input mentions `handler`, answer `disposed-object`.';
    expect(new Set(answers(`${SPECIFIC}\n${same}`, { interference: 1 }))).toEqual(new Set(['disposed-object']));
  });
});

describe('dilution', () => {
  const k = { dilution: 0.5, dilutionRules: 40, dilutionChars: 8000 };

  it('hand-checked miss probabilities: dilution × how far the larger of rules and characters is over budget', () => {
    expect(overload(40, 8000, k)).toBe(0);
    expect(missProbability(40, 8000, k)).toBe(0);
    expect(overload(60, 1000, k)).toBe(0.5);
    expect(missProbability(60, 1000, k)).toBe(0.25);
    expect(missProbability(10, 12000, k)).toBe(0.25);
    expect(missProbability(60, 16000, k)).toBe(0.5);
    expect(missProbability(200, 0, k)).toBe(1);
    expect(missProbability(200, 99999, { ...k, dilution: 0 })).toBe(0);
    expect(missProbability(200, 99999, { ...k, dilutionRules: 0, dilutionChars: 0 })).toBe(0);
  });

  it('past the budget, rules that would fire are missed at that rate, and more bloat only adds misses', () => {
    const skillWith = (fillers: number) =>
      [SPECIFIC, ...Array.from({ length: fillers }, (_, i) => `- \`Filler${i}\` → \`f${i}\``)].join('\n');
    const opts = { ...k, dilutionChars: 0 };
    expect(indexesOf(answers(skillWith(39), opts), 'unknown')).toEqual([]);
    const at60 = indexesOf(answers(skillWith(59), opts), 'unknown'); // p = 0.25
    const at80 = indexesOf(answers(skillWith(79), opts), 'unknown'); // p = 0.5
    expect(at60.length).toBeGreaterThanOrEqual(35);
    expect(at60.length).toBeLessThanOrEqual(65);
    expect(at80.length).toBeGreaterThanOrEqual(80);
    expect(at80.length).toBeLessThanOrEqual(120);
    expect(at60.every((i) => at80.includes(i))).toBe(true);
  });

  it('a missed rule leaves the next one that fires', () => {
    const skill = [SPECIFIC, GENERAL, ...Array.from({ length: 78 }, (_, i) => `- \`Filler${i}\` → \`f${i}\``)].join(
      '\n',
    );
    const got = answers(skill, { ...k, dilutionChars: 0 });
    expect(new Set(got)).toEqual(new Set(['disposed-object', 'async-void', 'unknown']));
  });
});

describe('temperature-like noise', () => {
  it('is keyed on the input and the answer the rules give: an edit that changes neither keeps every outcome', () => {
    const before = answers(SPECIFIC, { noise: 0.3 });
    const flipped = before.filter((a) => a !== 'disposed-object').length;
    expect(flipped).toBeGreaterThanOrEqual(45);
    expect(flipped).toBeLessThanOrEqual(75);
    const edited = `# A reworded header\nSome new prose.\n${SPECIFIC}\n${UNRELATED}`;
    const after = answers(edited, { noise: 0.3 });
    // the same cases are noisy; a noisy answer may now also be the new rule's
    expect(indexesOf(after, 'disposed-object')).toEqual(indexesOf(before, 'disposed-object'));
    // an edit that changes the answer re-draws
    const relabelled = answers(SPECIFIC.replace('disposed-object', 'disposed'), { noise: 0.3 });
    expect(indexesOf(relabelled, 'disposed')).not.toEqual(indexesOf(before, 'disposed-object'));
  });

  it('a sample re-draws it, and no sample is one fixed draw', () => {
    const fixed = answers(SPECIFIC, { noise: 0.3 });
    const sampled = answers(SPECIFIC, { noise: 0.3, sample: 1 });
    expect(sampled).not.toEqual(fixed);
    expect(answers(SPECIFIC, { noise: 0.3, sample: 1 })).toEqual(sampled);
  });

  describe('through the server', async () => {
    const { client } = await simServer({ ...PLAIN, noise: 0.5 });
    const create = (input: string, extra: { seed?: number; temperature?: number }) =>
      client.chat.completions
        .create({
          model: 'mitko',
          messages: [
            { role: 'system', content: SPECIFIC },
            { role: 'user', content: input },
          ],
          ...extra,
        })
        .then((r) => r.choices[0]!.message.content);

    it('a request at temperature 0 is stable across seeds; above it each seed is a sample', async () => {
      const inputs = INPUTS.slice(0, 20);
      const plain = await Promise.all(inputs.map((u) => ask(client, SPECIFIC, u)));
      for (const seed of [1, 2, 3])
        expect(await Promise.all(inputs.map((u) => create(u, { seed, temperature: 0 })))).toEqual(plain);
      const samples = await Promise.all(
        [1, 2, 3].map((seed) => Promise.all(inputs.map((u) => create(u, { seed, temperature: 1 })))),
      );
      expect(samples.some((s) => JSON.stringify(s) !== JSON.stringify(plain))).toBe(true);
      expect(await Promise.all(inputs.map((u) => create(u, { seed: 2, temperature: 1 })))).toEqual(samples[1]);
    });
  });
});

describe('interference grows with the number of conflicting rules', () => {
  it('two rivals confuse about 1 − 0.7² = 51% of the cases at 0.3, a superset of those one rival confuses', () => {
    const two = `${SPECIFIC}\n${GENERAL}\n- When the input mentions \`throws\`, answer \`exception\`.`;
    const one = indexesOf(answers(`${SPECIFIC}\n${GENERAL}`, { interference: 0.3 }), 'disposed-object');
    const kept = indexesOf(answers(two, { interference: 0.3 }), 'disposed-object');
    expect(200 - kept.length).toBeGreaterThanOrEqual(85);
    expect(200 - kept.length).toBeLessThanOrEqual(120);
    expect(kept.every((i) => one.includes(i))).toBe(true);
  });
});
