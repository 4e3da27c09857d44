#!/usr/bin/env node
/**
 * The power of attribution's two tests (docs/attribution.md#the-statistics prints the table), from the
 * compiled code (dist/compare/blame-test.js lookAgain, the function attribution and salvage decide with):
 * for a case whose pass probability is p₁ under one arm and p₀ under the other, how often
 *
 *   - the reproduction holds (baseline against candidate; α = 0.05, a look above 0.5 stops), and
 *   - a confirmation stands on its own (settled at α / 20, as for 20 changed cases; it then needs p < α
 *     after the adjustment, at most α when it is the family's largest p),
 *
 * and the samples each takes on average; p₁ = p₀ is the false positive rate. Seeded (PyRandom(run)), so
 * the same figures every time.
 *
 *   npm run build && nice -n 10 node scripts/attribution-power.mjs [--runs 4000]
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const i = process.argv.indexOf('--runs');
const RUNS = i >= 0 ? Number(process.argv[i + 1]) : 4000;
const { lookAgain, FUTILE, LOOKS } = await import(join(REPO, 'dist', 'compare', 'blame-test.js'));
const { PyRandom } = await import(join(REPO, 'dist', 'util', 'rng.js'));
const { wilsonInterval } = await import(join(REPO, 'dist', 'stats', 'interval.js'));

const ALPHA = 0.05;
const CASES = 20;
const PAIRS = [
  [0.9, 0.1],
  [0.91, 0.23],
  [0.65, 0.23],
  [0.7, 0.3],
  [0.6, 0.4],
  [0.5, 0.5],
  [0.2, 0.2],
];

async function rate(p1, p0, o) {
  let held = 0;
  let samples = 0;
  for (let run = 0; run < RUNS; run++) {
    const rng = new PyRandom(run);
    const arm = (p, n) => {
      let restored = 0;
      for (let k = 0; k < n; k++) if (rng.random() < p) restored++;
      return { restored, scored: n };
    };
    const got = await lookAgain(
      async (n) => {
        samples += 2 * n;
        return [arm(p1, n), arm(p0, n)];
      },
      [[0, 1]],
      { deterministic: false, alpha: ALPHA, ...o },
    );
    if (got.test.p < ALPHA) held++;
  }
  const [lo, hi] = wilsonInterval(held, RUNS);
  return `${((100 * held) / RUNS).toFixed(1)}% [${(100 * lo).toFixed(1)}, ${(100 * hi).toFixed(1)}], ${(samples / RUNS).toFixed(0)} samples`;
}

console.log(`looks at ${LOOKS.join(' / ')} samples an arm, α = ${ALPHA}, ${RUNS} runs a cell (95% Wilson intervals)\n`);
console.log('| p₁ (variant) | p₀ (reference) | reproduction holds | confirmation stands (settled at α / 20) |');
console.log('|---|---|---|---|');
for (const [p1, p0] of PAIRS) {
  const reproduction = await rate(p1, p0, { settled: ALPHA, futile: FUTILE });
  const confirmation = await rate(p1, p0, { settled: ALPHA / CASES, futile: 1 });
  console.log(`| ${p1} | ${p0} | ${reproduction} | ${confirmation} |`);
}
