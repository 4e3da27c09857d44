#!/usr/bin/env node
/**
 * How often the optimizer's paired gate accepts a candidate, under independent sampling noise: the real
 * race and gate (dist/optimizer/racing.js, gate.js) against a seeded Bernoulli world, in process.
 *
 *   npm run build && node scripts/gate-rates.mjs [--draws 2000] [--seed 1] [--items 29] [--p 0.8]
 *                                                [--confidence 0.9] [--gate-trials 1] [--looks 3]
 *
 * Each draw is one candidate against one current skill on `items` val items, one sample per item and
 * side (k = 1), `gate-trials` extra samples per side when the gate samples again. Every sample is an
 * independent Bernoulli draw: the current skill passes every item with probability p; the candidate
 *   - no-change: the same p on every item;
 *   - breaks-2: fails 2 items (chosen per draw) that the current skill passes with probability p;
 *   - fixes-2: passes with probability p 2 items (chosen per draw) that the current skill always fails.
 * Cells are scenario × `evaluation.paired_decision`. Printed per cell, with Wilson 95% intervals:
 *   accepted — the gate's decision;
 *   as worse — rejected by the exact test for "worse" (the test `evaluation.gate_confidence` sets), and
 *              how many draws each look rejected (racing looks 1..looks, then the look after the extra
 *              samples);
 *   first samples — accepted without extra samples (nothing broke, or a clear win), i.e. what a gate
 *                   that asks for p_better ≤ α before accepting a candidate that broke items accepts.
 * Draw i of every cell uses seed `seed + i`, so cells differ only in what they vary.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const { race, raceOrder } = await import(join(REPO, 'dist', 'optimizer', 'racing.js'));
const { PyRandom } = await import(join(REPO, 'dist', 'util', 'rng.js'));
const { wilsonInterval } = await import(join(REPO, 'dist', 'stats', 'interval.js'));

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v))
    throw new Error(`gate-rates: --${name} needs a number, got ${process.argv[i + 1] ?? 'nothing'}`);
  return v;
};
if (process.argv.includes('--help')) {
  console.log(
    'node scripts/gate-rates.mjs [--draws 2000] [--seed 1] [--items 29] [--p 0.8] [--confidence 0.9] [--gate-trials 1] [--looks 3]',
  );
  process.exit(0);
}
const DRAWS = arg('draws', 2000);
const SEED = arg('seed', 1);
const ITEMS = arg('items', 29);
const P = arg('p', 0.8);
const CONFIDENCE = arg('confidence', 0.9);
const GATE_TRIALS = arg('gate-trials', 1);
const LOOKS = arg('looks', 3);

const ids = Array.from({ length: ITEMS }, (_, i) => `v${i}`);
/** The race order of a run seeded 42 (the default train seed); the changed items are drawn per draw. */
const order = raceOrder(ids, 42);

/** Pass probabilities of both skills per item. */
function scenario(name, rng) {
  const cur = ids.map(() => P);
  const cand = ids.map(() => P);
  if (name !== 'no-change') {
    const changed = rng.sample(
      ids.map((_, i) => i),
      2,
    );
    for (const i of changed) {
      if (name === 'breaks-2') cand[i] = 0;
      else cur[i] = 0;
    }
  }
  return { cur, cand };
}

async function draw(name, decision, seed) {
  const rng = new PyRandom(seed);
  const probs = scenario(name, rng);
  const idx = (id) => Number(id.slice(1));
  const bern = (p) => (rng.random() < p ? 1 : 0);
  // the current skill was validated on every item; the candidate's samples are drawn as the race asks
  const cur = new Map(ids.map((id) => [id, [bern(probs.cur[idx(id)])]]));
  const cand = new Map();
  const r = await race({
    test: 'paired',
    order,
    looks: LOOKS,
    confidence: CONFIDENCE,
    minGain: 0,
    decision,
    bonus: 0,
    strict: { current: 0, densityTerm: 0 },
    gateTrials: GATE_TRIALS,
    evaluate: async (list) => {
      for (const id of list) if (!cand.has(id)) cand.set(id, [bern(probs.cand[idx(id)])]);
    },
    resample: async (list) => {
      for (const id of list) {
        for (let t = 0; t < GATE_TRIALS; t++) cand.get(id).push(bern(probs.cand[idx(id)]));
        for (let t = 0; t < GATE_TRIALS; t++) cur.get(id).push(bern(probs.cur[idx(id)]));
      }
    },
    cand: (id) => cand.get(id)?.slice(0, 1),
    cur: (id) => cur.get(id)[0],
    pair: (id) => (cand.has(id) ? { cand: cand.get(id), cur: cur.get(id) } : undefined),
  });
  const worse = r.verdict === 'reject' && r.rule.startsWith('worse');
  return {
    accepted: r.verdict === 'accept',
    worse,
    look: worse ? r.looks.length : 0,
    first: r.verdict === 'accept' && r.resampled.length === 0,
  };
}

const pct = (x) => `${((100 * x) / DRAWS).toFixed(1)}%`;
const ci = (x) => {
  const [lo, hi] = wilsonInterval(x, DRAWS);
  return `[${(100 * lo).toFixed(1)}, ${(100 * hi).toFixed(1)}]`;
};

console.log(
  `gate-rates: ${DRAWS} draws per cell, seeds ${SEED}..${SEED + DRAWS - 1}, ${ITEMS} val items at p ${P}, confidence ${CONFIDENCE} (α ${+(1 - CONFIDENCE).toFixed(6)}), ${LOOKS} looks, gate_trials ${GATE_TRIALS}`,
);
console.log(
  '| candidate | paired_decision | accepted [95% CI] | rejected as worse [95% CI] | as worse, by look | accepted on first samples [95% CI] |',
);
console.log('|---|---|---|---|---|---|');
for (const name of ['no-change', 'breaks-2', 'fixes-2']) {
  for (const decision of ['mean_gain', 'no_harm']) {
    let accepted = 0;
    let worse = 0;
    let first = 0;
    const byLook = Array(LOOKS + (GATE_TRIALS > 0 ? 1 : 0)).fill(0);
    for (let i = 0; i < DRAWS; i++) {
      const d = await draw(name, decision, SEED + i);
      accepted += d.accepted ? 1 : 0;
      worse += d.worse ? 1 : 0;
      first += d.first ? 1 : 0;
      if (d.look) byLook[d.look - 1]++;
    }
    console.log(
      `| ${name} | ${decision} | ${pct(accepted)} ${ci(accepted)} | ${pct(worse)} ${ci(worse)} | ${byLook.join(' / ')} | ${pct(first)} ${ci(first)} |`,
    );
  }
}
