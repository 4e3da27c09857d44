/**
 * From cells to optimize runs and back: each cell's overrides are resolved with `skillopt config` (a cell
 * whose overrides do not load is skipped, saying why); cells whose resolved configs are identical share
 * their runs (one per seed); each run is a `skillopt train` (or `test --optimize --target`) process in its
 * own out_root with the model cache off, and a run folder that already holds a summary is reused.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { errorLine, pool, resolveConfig, skillopt } from './cli.mjs';
import { BENCHMARKS, TARGET } from './plan.mjs';
import { readRunFacts } from './run-facts.mjs';

export const configOf = (bench) => BENCHMARKS.find((b) => b.name === bench).config;
const shortHash = (x) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 10);

/** Sets each cell's `skipped` and `runKeys` (and `sameAs` for an ablation row equal to an earlier one); returns the distinct runs. */
export async function planRuns(cells, { work, jobs, log }) {
  const variantKey = (c) => `${c.bench} ${c.overrides.join(' ')}`;
  const probes = new Map(cells.map((c) => [variantKey(c), { bench: c.bench, overrides: c.overrides }]));
  log(`checking ${probes.size} config variant(s)`);
  const list = [...probes.values()];
  const resolved = await pool(list, jobs, (p) => resolveConfig(configOf(p.bench), p.overrides));
  list.forEach((p, i) => (p.result = resolved[i]));
  const runs = new Map();
  for (const c of cells) {
    const { config, error } = probes.get(variantKey(c)).result;
    c.skipped = error ?? null;
    c.runKeys = [];
    if (c.skipped) continue;
    c.configHash = shortHash(config);
    for (const seed of c.seeds) {
      const key = `${c.bench}-${c.mode}-${c.configHash}-s${seed}`;
      c.runKeys.push(key);
      if (!runs.has(key))
        runs.set(key, {
          key,
          bench: c.bench,
          overrides: c.overrides,
          seed,
          mode: c.mode,
          dir: join(work, 'runs', key),
        });
    }
  }
  for (const c of cells.filter((x) => x.section === 'ablation')) {
    const first = cells.find(
      (x) => x.section === 'ablation' && x.bench === c.bench && x.configHash && x.configHash === c.configHash,
    );
    if (first && first !== c) c.sameAs = first.labels.variant;
  }
  return runs;
}

/** Runs every run (at most `jobs` at once) and reads its facts; a failed run gets `error`. */
export async function executeRuns(runList, { work, jobs, log }) {
  let done = 0;
  await pool(runList, jobs, async (run) => {
    const t = performance.now();
    const reused = existsSync(join(run.dir, 'summary.json'));
    if (!reused) {
      const head = run.mode === 'target' ? ['test', '--optimize', '--target', String(TARGET.target)] : ['train'];
      const r = await skillopt(
        [
          ...head,
          '--config',
          configOf(run.bench),
          '--model-cache',
          'off',
          '--cfg-options',
          `env.out_root=${run.dir}`,
          `train.seed=${run.seed}`,
          ...run.overrides,
        ],
        {
          logFile: join(work, 'logs', `${run.key}.log`),
        },
      );
      // `test --optimize` exits 1 when the target is not reached: still a finished run
      const finished = existsSync(join(run.dir, 'summary.json'));
      if (!finished || (r.code !== 0 && r.code !== 1))
        run.error = r.timedOut ? 'timed out' : `exit ${r.code}: ${errorLine(r.out)}`;
    }
    if (!run.error) {
      try {
        run.facts = readRunFacts(run.dir);
      } catch (e) {
        run.error = e instanceof Error ? e.message : String(e);
      }
    }
    done++;
    const what = [
      run.bench,
      run.mode === 'target' ? `--target ${TARGET.target}` : 'train',
      ...run.overrides,
      `seed ${run.seed}`,
    ].join(' ');
    log(
      `run ${done}/${runList.length} ${what}: ${run.error ? `FAILED (${run.error})` : reused ? 'reused' : `${((performance.now() - t) / 1000).toFixed(1)} s`}`,
    );
  });
}
