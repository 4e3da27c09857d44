/**
 * Figures of one run and of a cell (its runs over seeds), from the run's facts (run-facts.mjs) and the
 * noise-free test pass rate of each skill (`nf(hash)`).
 *
 * - false reject: a rejected candidate whose noise-free test pass rate is above that of the skill it was
 *   compared with (the current skill before its step);
 * - harmful accept: an accepted candidate whose noise-free test pass rate is below the skill it replaced.
 */

export function runMetrics(facts, nf) {
  let rejects = 0;
  let falseRejects = 0;
  let accepts = 0;
  let harmfulAccepts = 0;
  for (const s of facts.steps) {
    if (s.kind === 'skip' || s.candidate === null) continue;
    const cand = nf(s.candidate);
    const cur = s.current === null ? null : nf(s.current);
    if (s.kind === 'reject') {
      rejects++;
      if (cand !== null && cur !== null && cand > cur) falseRejects++;
    } else {
      accepts++;
      if (cand !== null && cur !== null && cand < cur) harmfulAccepts++;
    }
  }
  // compressions: an accepted one that lowers the noise-free test of the skill it compressed is harmful
  let harmfulCompressions = 0;
  for (const c of facts.compressions ?? []) {
    const cand = nf(c.candidate);
    const cur = nf(c.current);
    if (c.kind === 'accept' && cand !== null && cur !== null && cand < cur) harmfulCompressions++;
  }
  const { initial, final } = facts.lengths;
  return {
    nf: { initial: nf(facts.initial), best: nf(facts.best), final: nf(facts.final) },
    rejects,
    falseRejects,
    accepts,
    harmfulAccepts,
    calls: facts.calls,
    callsSource: facts.callsSource,
    lengthGrowth: initial && final ? final / initial : null,
    // skill tokens: the documented chars / 4 estimate (docs/optimizer.md, "Compression")
    bestTokens: typeof facts.lengths.best === 'number' ? Math.ceil(facts.lengths.best / 4) : null,
    compressRan: facts.compress?.length ?? 0,
    compressAccepted: facts.compress?.filter((c) => String(c.action).includes('accept')).length ?? 0,
    harmfulCompressions,
    valGain: diff(facts.val.best, facts.val.baseline),
    testGain: diff(facts.test.best, facts.test.baseline),
    test: facts.test.best,
    targetReached: facts.targetReached,
  };
}

const diff = (a, b) => (a === null || b === null ? null : a - b);

export function mean(xs) {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x));
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
}

export function median(xs) {
  const v = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!v.length) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

const sum = (xs) => xs.reduce((a, b) => a + (b ?? 0), 0);

/** A cell's figures over its runs (one per seed). */
export function cellMetrics(runs) {
  const rejects = sum(runs.map((r) => r.rejects));
  const falseRejects = sum(runs.map((r) => r.falseRejects));
  return {
    n: runs.length,
    bestNF: mean(runs.map((r) => r.nf.best)),
    finalNF: mean(runs.map((r) => r.nf.final)),
    rejects,
    falseRejects,
    falseRejectShare: rejects > 0 ? falseRejects / rejects : null,
    accepts: sum(runs.map((r) => r.accepts)),
    harmfulAccepts: sum(runs.map((r) => r.harmfulAccepts)),
    calls: mean(runs.map((r) => r.calls)),
    lengthGrowth: mean(runs.map((r) => r.lengthGrowth)),
  };
}

/** Per-seed differences variant − baseline of `pick(run)`, paired by seed: mean, min, max. */
export function pairedDelta(variantBySeed, baselineBySeed, pick) {
  const ds = [];
  for (const [seed, v] of variantBySeed) {
    const b = baselineBySeed.get(seed);
    if (!b) continue;
    const x = pick(v);
    const y = pick(b);
    if (typeof x === 'number' && typeof y === 'number') ds.push(x - y);
  }
  return ds.length ? { mean: mean(ds), min: Math.min(...ds), max: Math.max(...ds), n: ds.length } : null;
}

/** Held-out transfer over seeds: summed test gain ÷ summed val gain (null when val did not gain). */
export function transfer(runs) {
  const val = sum(runs.map((r) => r.valGain));
  const test = sum(runs.map((r) => r.testGain));
  return {
    valGain: mean(runs.map((r) => r.valGain)),
    testGain: mean(runs.map((r) => r.testGain)),
    ratio: val > 0 ? test / val : null,
    perSeed: runs.map((r) => (r.valGain > 0 ? r.testGain / r.valGain : null)),
  };
}
