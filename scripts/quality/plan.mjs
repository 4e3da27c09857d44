/**
 * What the quality script runs: the cells of the matrix, the ablation, the transfer/target tables and the
 * cost section (compress off against on), each
 * a benchmark, `--cfg-options` overrides and seeds. Knobs that other work adds later are named here as
 * the issue names them; a cell whose overrides this build's config does not accept is skipped (the
 * caller probes each override set with `skillopt config`).
 */

export const BENCHMARKS = [
  { name: 'dotnetdebug', config: 'configs/dotnetdebug/sim.yaml' },
  { name: 'ticket-triage', config: 'configs/ticket-triage/sim.yaml' },
];

export const FULL = {
  seeds: [42, 43, 44],
  noise: [0, 0.1, 0.2, 0.3],
  analystError: [0, 0.3],
  benchmarks: BENCHMARKS.map((b) => b.name),
};
export const QUICK = { seeds: [42], noise: [0, 0.2], analystError: [0, 0.3], benchmarks: ['dotnetdebug'] };

/** The target run of the issue: `test --optimize --target 0.8` on dotnetdebug. */
export const TARGET = { bench: 'dotnetdebug', target: 0.8 };

export function getKey(config, dotted) {
  let node = config;
  for (const part of dotted.split('.')) {
    if (node === null || typeof node !== 'object' || !(part in node)) return undefined;
    node = node[part];
  }
  return node;
}

/** Dotted paths of every leaf of a resolved config whose last part matches `re`. */
export function findKeys(config, re, prefix = '') {
  const out = [];
  for (const [k, v] of Object.entries(config ?? {})) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) out.push(...findKeys(v, re, path));
    else if (re.test(k)) out.push(path);
  }
  return out;
}

/**
 * The knobs of this build, read from a benchmark's resolved default config: how to ask for the strict
 * gate (explicitly once `evaluation.gate_test` exists, since `paired` becomes the default), the clipping
 * switch (a boolean key named like clip), and the world's interference knob, if any.
 */
export function detectKnobs(baseConfig) {
  const hasGateTest = getKey(baseConfig, 'evaluation.gate_test') !== undefined;
  const clip = findKeys(baseConfig, /clip/i).find((k) => typeof getKey(baseConfig, k) === 'boolean');
  const interference = findKeys(getKey(baseConfig, 'model.simulated') ?? {}, /interfer/i, 'model.simulated');
  const interferenceOn = interference.some((k) => {
    const v = getKey(baseConfig, k);
    return v === true || (typeof v === 'number' && v > 0);
  });
  return {
    gates: {
      strict: hasGateTest ? ['evaluation.gate_test=strict'] : [],
      paired: ['evaluation.gate_test=paired'],
      off: ['evaluation.use_gate=false'],
    },
    clip: clip ? [`${clip}=false`] : ['optimizer.clip_edits=false'],
    interference,
    interferenceOn,
  };
}

export const GATES = ['strict', 'paired', 'off'];

export function ablationVariants(knobs) {
  return [
    { name: 'baseline', overrides: [] },
    { name: 'buffer off', overrides: ['optimizer.use_rejected_buffer=false'] },
    { name: 'slow update off', overrides: ['optimizer.use_slow_update=false'] },
    { name: 'meta skill off', overrides: ['optimizer.use_meta_skill=false'] },
    { name: 'constant lr 2', overrides: ['optimizer.lr_scheduler=constant', 'optimizer.learning_rate=2'] },
    { name: 'no clipping', overrides: knobs.clip },
    { name: 'greedy', overrides: ['optimizer.candidate_selection=greedy'] },
    { name: 'pareto', overrides: ['optimizer.candidate_selection=pareto'] },
  ];
}

/**
 * Every cell of the selected sections. A cell: { section, bench, labels, overrides, mode, seeds } with
 * mode `train` (every configured step) or `target` (`test --optimize --target`).
 */
export function planCells({ sections, scale, knobsByBench }) {
  const cells = [];
  for (const bench of scale.benchmarks) {
    const knobs = knobsByBench[bench];
    if (sections.includes('matrix')) {
      for (const noise of scale.noise) {
        for (const ae of scale.analystError) {
          for (const gate of GATES) {
            cells.push({
              section: 'matrix',
              bench,
              labels: { noise, analyst_error: ae, gate },
              overrides: [
                `model.simulated.noise=${noise}`,
                `model.simulated.analyst_error_rate=${ae}`,
                ...knobs.gates[gate],
              ],
              mode: 'train',
              seeds: scale.seeds,
            });
          }
        }
      }
    }
    if (sections.includes('ablation')) {
      for (const v of ablationVariants(knobs)) {
        cells.push({
          section: 'ablation',
          bench,
          labels: { variant: v.name },
          overrides: v.overrides,
          mode: 'train',
          seeds: scale.seeds,
        });
      }
    }
    if (sections.includes('cost')) {
      // the compress stage against none, default world (best skill chosen as this build chooses it)
      for (const compress of ['off', 'on']) {
        cells.push({
          section: 'cost',
          bench,
          labels: { compress },
          overrides: [`optimizer.compress=${compress}`],
          mode: 'train',
          seeds: scale.seeds,
        });
      }
    }
    if (sections.includes('transfer')) {
      cells.push({ section: 'transfer', bench, labels: {}, overrides: [], mode: 'train', seeds: scale.seeds });
      if (bench === TARGET.bench)
        cells.push({
          section: 'target',
          bench,
          labels: { target: TARGET.target },
          overrides: [],
          mode: 'target',
          seeds: scale.seeds,
        });
    }
  }
  return cells;
}
