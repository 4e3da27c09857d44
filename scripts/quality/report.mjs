/**
 * The tables the quality script prints (matrix, ablation, transfer, target run) and the goal checks of
 * the optimizer's quality goals, from the cells with their runs' metrics (metrics.mjs). Pure: text in, text out.
 *
 * A cell: { section, bench, labels, skipped: reason | null, runs: [{ seed, metrics | null, error }] }.
 */
import { cellMetrics, mean, median, pairedDelta, transfer } from './metrics.mjs';

export const f3 = (x) => (typeof x === 'number' ? x.toFixed(3) : '–');
const signed = (x, digits = 3) => (typeof x === 'number' ? `${x >= 0 ? '+' : ''}${x.toFixed(digits)}` : '–');
const int = (x) => (typeof x === 'number' ? String(Math.round(x)) : '–');
const pct = (x) => (typeof x === 'number' ? `${Math.round(x * 100)}%` : '–');

/** Columns padded to their widest cell; a row `{ lead, note }` prints its lead cells then the note. */
export function table(header, rows) {
  const width = header.map((h, i) =>
    Math.max(
      h.length,
      ...rows.map((r) => (Array.isArray(r) ? (r[i]?.length ?? 0) : i < r.lead.length ? r.lead[i].length : 0)),
    ),
  );
  const line = (cells) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(width[i])))
      .join('  ')
      .trimEnd();
  return [
    line(header),
    ...rows.map((r) => (Array.isArray(r) ? line(r) : line([...r.lead.map((c, i) => c.padEnd(width[i])), r.note]))),
  ].join('\n');
}

const okRuns = (cell) => cell.runs.filter((r) => r.metrics);
const failedNote = (cell) => {
  const bad = cell.runs.filter((r) => !r.metrics);
  return bad.length ? `${bad.length} run(s) failed: ${bad[0].error}` : null;
};
/** Why a cell has no figures: skipped (knob missing) or every run failed. */
const noFigures = (cell) =>
  cell.skipped ? `skipped: ${cell.skipped}` : okRuns(cell).length === 0 ? (failedNote(cell) ?? 'no runs') : null;

export function aggregate(cell) {
  return cellMetrics(okRuns(cell).map((r) => r.metrics));
}

const benches = (cells) => [...new Set(cells.map((c) => c.bench))];

export function renderMatrix(cells, { seeds }) {
  const out = [];
  for (const bench of benches(cells)) {
    const rows = [];
    for (const c of cells.filter((x) => x.bench === bench)) {
      const lead = [String(c.labels.noise), String(c.labels.analyst_error), c.labels.gate];
      const why = noFigures(c);
      if (why) {
        rows.push({ lead, note: why });
        continue;
      }
      const a = aggregate(c);
      rows.push([
        ...lead,
        f3(a.bestNF),
        f3(a.finalNF),
        String(a.rejects),
        a.rejects ? `${a.falseRejects} (${pct(a.falseRejectShare)})` : '0',
        String(a.accepts),
        String(a.harmfulAccepts),
        int(a.calls),
        typeof a.lengthGrowth === 'number' ? `${a.lengthGrowth.toFixed(2)}×` : '–',
      ]);
      const note = failedNote(c);
      if (note) rows.push({ lead: ['', '', ''], note: `(${note})` });
    }
    out.push(
      `## Matrix: ${bench} (${seeds.length} seed(s) ${seeds.join('/')}; NF = noise-free test pass rate, mean over seeds; counts summed over seeds)`,
      table(
        [
          'noise',
          'a.err',
          'gate',
          'best NF',
          'final NF',
          'rejects',
          'false rejects',
          'accepts',
          'harmful',
          'calls',
          'length',
        ],
        rows,
      ),
      '',
    );
  }
  return out.join('\n');
}

const bySeed = (cell) => new Map(okRuns(cell).map((r) => [r.seed, r.metrics]));

export function renderAblation(cells, { seeds }) {
  const out = [];
  for (const bench of benches(cells)) {
    const mine = cells.filter((x) => x.bench === bench);
    const base = mine.find((c) => c.labels.variant === 'baseline');
    const rows = [];
    for (const c of mine) {
      const lead = [c.labels.variant];
      const why = noFigures(c);
      if (why) {
        rows.push({ lead, note: why });
        continue;
      }
      const a = aggregate(c);
      const isBase = c === base;
      const dNF = isBase || !base ? null : pairedDelta(bySeed(c), bySeed(base), (m) => m.nf.best);
      const dCalls = isBase || !base ? null : pairedDelta(bySeed(c), bySeed(base), (m) => m.calls);
      rows.push([
        ...lead,
        f3(a.bestNF),
        isBase ? '' : dNF ? `${signed(dNF.mean)} [${signed(dNF.min)}, ${signed(dNF.max)}]` : '–',
        int(a.calls),
        isBase ? '' : dCalls ? `${signed(dCalls.mean, 0)} [${signed(dCalls.min, 0)}, ${signed(dCalls.max, 0)}]` : '–',
        c.sameAs ? `(same config as ${c.sameAs})` : '',
      ]);
    }
    out.push(
      `## Ablation: ${bench} (default world, ${seeds.length} seed(s); Δ = variant − baseline per seed: mean [min, max])`,
      table(['variant', 'best NF', 'Δ best NF', 'calls', 'Δ calls', ''], rows),
      '',
    );
  }
  return out.join('\n');
}

/** The cost section: compress off against on per benchmark, paired by seed. */
export function renderCost(cells, { seeds }) {
  const out = [];
  for (const bench of benches(cells)) {
    const off = cells.find((c) => c.bench === bench && c.labels.compress === 'off');
    const on = cells.find((c) => c.bench === bench && c.labels.compress === 'on');
    const rows = [];
    for (const c of [off, on]) {
      const why = noFigures(c);
      if (why) {
        rows.push({ lead: [c.labels.compress], note: why });
        continue;
      }
      const runs = okRuns(c).map((r) => r.metrics);
      rows.push([
        c.labels.compress,
        f3(mean(runs.map((m) => m.nf.best))),
        int(mean(runs.map((m) => m.bestTokens))),
        okRuns(c)
          .map((r) => `${r.seed}: ${f3(r.metrics.nf.best)} / ${int(r.metrics.bestTokens)}`)
          .join(' · '),
        `${runs.reduce((a, m) => a + m.compressAccepted, 0)}/${runs.reduce((a, m) => a + m.compressRan, 0)}`,
        String(runs.reduce((a, m) => a + (m.harmfulCompressions ?? 0), 0)),
        int(mean(runs.map((m) => m.calls))),
      ]);
    }
    const d = costDelta(off, on);
    out.push(
      `## Cost: ${bench} — compress off vs on (default world, ${seeds.length} seed(s); best skill, noise-free test; tokens = chars / 4)`,
      table(
        [
          'compress',
          'best NF',
          'best skill tokens',
          'per seed (NF / tokens)',
          'compressions accepted/run',
          'harmful',
          'calls',
        ],
        rows,
      ),
      d
        ? `Δ (on − off, per seed): best NF ${signed(d.nf.mean)} [${signed(d.nf.min)}, ${signed(d.nf.max)}]; best skill tokens ${pct(d.tokens.mean)} [${pct(d.tokens.min)}, ${pct(d.tokens.max)}]`
        : 'Δ: not measured',
      '',
    );
  }
  return out.join('\n');
}

/** Per-seed on − off: noise-free test of the best skill, and the relative change of its skill tokens. */
function costDelta(off, on) {
  if (!off || !on || noFigures(off) || noFigures(on)) return null;
  const nf = pairedDelta(bySeed(on), bySeed(off), (m) => m.nf.best);
  const ratios = [];
  const o = bySeed(off);
  for (const [seed, m] of bySeed(on)) {
    const b = o.get(seed);
    if (b && m.bestTokens && b.bestTokens) ratios.push(m.bestTokens / b.bestTokens - 1);
  }
  if (!nf || !ratios.length) return null;
  return { nf, tokens: { mean: mean(ratios), min: Math.min(...ratios), max: Math.max(...ratios) } };
}

export function renderTransfer(transferCells, targetCells, { seeds, targetCommand }) {
  const out = [];
  const rows = transferCells.map((c) => {
    const why = noFigures(c);
    if (why) return { lead: [c.bench], note: why };
    const t = transfer(okRuns(c).map((r) => r.metrics));
    return [c.bench, f3(t.valGain), f3(t.testGain), f3(t.ratio), t.perSeed.map(f3).join(' ')];
  });
  if (rows.length) {
    out.push(
      `## Held-out transfer (default world, ${seeds.length} seed(s); gains of the best skill over the seed skill, from summary.json; transfer = Σ test gain ÷ Σ val gain)`,
      table(['benchmark', 'val gain', 'test gain', 'transfer', 'per seed'], rows),
      '',
    );
  }
  for (const c of targetCells) {
    out.push(`## Target run: ${targetCommand} (train.seed ${seeds.join(', ')})`);
    const why = noFigures(c);
    if (why) {
      out.push(why, '');
      continue;
    }
    const runs = okRuns(c);
    out.push(
      table(
        ['seed', 'reached', 'optimization_calls', 'test'],
        runs.map((r) => [
          String(r.seed),
          r.metrics.targetReached ? 'yes' : 'no',
          int(r.metrics.calls),
          f3(r.metrics.test),
        ]),
      ),
      `median optimization_calls ${int(median(runs.map((r) => r.metrics.calls)))} (from ${runs[0].metrics.callsSource})`,
      '',
    );
  }
  return out.join('\n');
}

/**
 * The goals, each { ok, text }. `ctx`: { matrix, ablation, transfer, target } cells, `knobs` (of the
 * first benchmark; the knobs are the build's, the same for every benchmark), `layering` violations.
 */
export function goalChecks(ctx) {
  const goals = [];
  const add = (ok, text) => goals.push({ ok, text });
  const cellOf = (bench, noise, ae, gate) =>
    ctx.matrix.find(
      (c) => c.bench === bench && c.labels.noise === noise && c.labels.analyst_error === ae && c.labels.gate === gate,
    );
  const measured = (c) => c && !noFigures(c);
  const paired = ctx.matrix.filter((c) => c.labels.gate === 'paired');

  if (ctx.matrix.length) {
    const noisy = ctx.matrix.filter((c) => c.labels.gate === 'paired' && c.labels.noise > 0);
    if (!noisy.some(measured)) {
      add(
        false,
        `noise-aware gate's noise-free test ≥ strict and off in every noisy cell: not measured (${paired.find((c) => c.skipped)?.skipped ?? 'no noisy paired cell ran'})`,
      );
    } else {
      const losses = [];
      for (const c of noisy) {
        const p = aggregate(c).bestNF;
        for (const other of ['strict', 'off']) {
          const o = cellOf(c.bench, c.labels.noise, c.labels.analyst_error, other);
          if (measured(o) && !(p >= aggregate(o).bestNF))
            losses.push(
              `${c.bench} noise ${c.labels.noise} a.err ${c.labels.analyst_error}: ${f3(p)} < ${other} ${f3(aggregate(o).bestNF)}`,
            );
        }
      }
      add(
        losses.length === 0,
        `noise-aware gate's noise-free test (best) ≥ strict and off in every noisy cell` +
          (losses.length
            ? `: ${losses.length} loss(es), e.g. ${losses.slice(0, 3).join('; ')}`
            : ` (${noisy.length} cells)`),
      );
    }

    const share = (gate) =>
      benches(ctx.matrix).map((bench) => {
        const a = cellMetrics(
          ctx.matrix
            .filter((c) => c.bench === bench && c.labels.gate === gate && measured(c))
            .flatMap((c) => okRuns(c).map((r) => r.metrics)),
        );
        return { bench, ...a };
      });
    const strictInfo = share('strict')
      .map((s) => `${s.bench} ${s.falseRejects}/${s.rejects}`)
      .join(', ');
    if (!paired.some(measured)) {
      add(
        false,
        `false rejects ≤ 20% of rejections (noise-aware gate): not measured (${paired.find((c) => c.skipped)?.skipped ?? 'no paired cell ran'}); strict gate today: ${strictInfo}`,
      );
    } else {
      const s = share('paired');
      add(
        s.every((x) => x.falseRejectShare === null || x.falseRejectShare <= 0.2),
        `false rejects ≤ 20% of rejections (noise-aware gate, all its cells): ${s.map((x) => `${x.bench} ${x.falseRejects}/${x.rejects} (${pct(x.falseRejectShare)})`).join(', ')}; strict: ${strictInfo}`,
      );
    }

    const gate = paired.some(measured) ? 'paired' : 'strict';
    const compare = benches(ctx.matrix).map((bench) => {
      const m = (g) =>
        cellMetrics(
          ctx.matrix
            .filter((c) => c.bench === bench && c.labels.gate === g && measured(c))
            .flatMap((c) => okRuns(c).map((r) => r.metrics)),
        ).bestNF;
      return { bench, gate: m(gate), off: m('off') };
    });
    const figures = compare.map((x) => `${x.bench} ${gate} ${f3(x.gate)} vs off ${f3(x.off)}`).join(', ');
    if (!ctx.knobs.interference.length)
      add(
        false,
        `with interference on, gate off loses to the gate: not measured (no model.simulated interference knob in this build); today ${figures}`,
      );
    else if (!ctx.knobs.interferenceOn)
      add(
        false,
        `with interference on, gate off loses to the gate: not measured (${ctx.knobs.interference.join(', ')} is off in the default world); ${figures}`,
      );
    else
      add(
        compare.every((x) => x.gate > x.off),
        `with interference on (${ctx.knobs.interference.join(', ')}), gate off loses to the gate on noise-free test (mean over the matrix): ${figures}`,
      );
  }

  if (ctx.ablation.length) {
    const missing = ctx.ablation.filter((c) => !measured(c));
    add(
      missing.length === 0,
      `ablation: every mechanism measured` +
        (missing.length
          ? `: ${missing.length} row(s) not (${[...new Set(missing.map((c) => `${c.labels.variant}: ${noFigures(c)}`))].join('; ')})`
          : ` (${ctx.ablation.length} rows)`),
    );
  }

  if (ctx.cost?.length) {
    for (const bench of benches(ctx.cost)) {
      const off = ctx.cost.find((c) => c.bench === bench && c.labels.compress === 'off');
      const on = ctx.cost.find((c) => c.bench === bench && c.labels.compress === 'on');
      const d = costDelta(off, on);
      if (!d) {
        add(
          false,
          `${bench}: compress on keeps the noise-free test pass rate at ≥ 25% fewer best-skill tokens: not measured`,
        );
        continue;
      }
      const nfOn = mean(okRuns(on).map((r) => r.metrics.nf.best));
      const nfOff = mean(okRuns(off).map((r) => r.metrics.nf.best));
      add(
        nfOn >= nfOff - 1e-9 && d.tokens.mean <= -0.25,
        `${bench}: compress on keeps the noise-free test pass rate (${f3(nfOn)} vs off ${f3(nfOff)}) at ≥ 25% fewer best-skill tokens (${pct(d.tokens.mean)}, per seed ${pct(d.tokens.min)} to ${pct(d.tokens.max)})`,
      );
    }
  }

  for (const c of ctx.target) {
    const runs = okRuns(c);
    if (!runs.length) {
      add(false, `target run: ${noFigures(c)}`);
      continue;
    }
    const sources = new Set(runs.map((r) => r.metrics.callsSource));
    add(
      sources.size === 1 && sources.has('optimization_calls'),
      `summary.json reports optimization_calls` +
        (sources.has('optimization_calls') ? '' : ` (it does not: counted from ${[...sources].join(', ')})`),
    );
    const med = median(runs.map((r) => r.metrics.calls));
    const minTest = Math.min(...runs.map((r) => r.metrics.test ?? 0));
    const reached = runs.every((r) => r.metrics.targetReached);
    add(
      reached && med !== null && med <= 170 && minTest >= 0.85,
      `target 0.8 on dotnetdebug: reached in ${runs.filter((r) => r.metrics.targetReached).length}/${runs.length}, median optimization_calls ${int(med)} (≤ 170), lowest test pass rate ${f3(minTest)} (≥ 0.85)`,
    );
  }

  if (ctx.transfer.length) {
    const t = ctx.transfer.map((c) => ({
      bench: c.bench,
      ratio: measured(c) ? transfer(okRuns(c).map((r) => r.metrics)).ratio : null,
    }));
    add(
      t.every((x) => x.ratio !== null && x.ratio >= 0.8),
      `held-out transfer ≥ 0.8 on every benchmark: ${t.map((x) => `${x.bench} ${f3(x.ratio)}`).join(', ')}`,
    );
  }

  add(
    ctx.layering.length === 0,
    `no module under src/model, src/skill, src/suite imports from src/optimizer or src/cli` +
      (ctx.layering.length ? `: ${ctx.layering.length} import(s), e.g. ${ctx.layering.slice(0, 3).join('; ')}` : ''),
  );
  return goals;
}

export const renderGoals = (goals) =>
  ['## Goals', ...goals.map((g) => `${g.ok ? 'PASS' : 'FAIL'}  ${g.text}`), ''].join('\n');
