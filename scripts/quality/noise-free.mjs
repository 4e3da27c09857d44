/**
 * Noise-free test scores of skills, each skill text (by hash) scored once per world: the run's
 * `model.simulated.*` overrides with `noise=0`, less the optimizer-only `analyst_error_rate`. Scores are
 * kept in `<work>/noise-free.json`, so a rerun with the same --work reuses them. Skills are scored in
 * batches by noise-free-worker.mjs (one Vitest session per batch); if the build's modules cannot be
 * imported, by one `skillopt eval` process per skill.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorLine, pool, REPO, runNode, skillopt } from './cli.mjs';

const WORKER = join(REPO, 'scripts', 'quality', 'noise-free-worker.mjs');
const OPTIMIZER_ONLY = /^model\.simulated\.(noise|analyst_error_rate)=/;
/** Skills per worker process: large enough to pay for its ~1 s start, small enough to spread over the jobs. */
const MIN_BATCH = 40;

export function noiseFreeWorld(bench, configPath, runOverrides) {
  const overrides = [
    ...runOverrides.filter((o) => o.startsWith('model.simulated.') && !OPTIMIZER_ONLY.test(o)),
    'model.simulated.noise=0',
  ].sort();
  return { key: `${bench} ${overrides.join(' ')}`, bench, configPath, overrides };
}

export class NoiseFreeScores {
  constructor({ workDir, jobs, log }) {
    this.file = join(workDir, 'noise-free.json');
    this.tmp = join(workDir, 'noise-free');
    this.jobs = jobs;
    this.log = log;
    this.byWorld = existsSync(this.file) ? JSON.parse(readFileSync(this.file, 'utf8')) : {};
    this.evaluated = 0;
    this.reused = 0;
  }

  get(worldKey, hash) {
    return this.byWorld[worldKey]?.[hash] ?? null;
  }

  /** Score every requested { world, hash, text } not scored yet. */
  async score(requests) {
    const missing = new Map(); // world key → { world, skills: Map(hash → text) }
    let asked = 0;
    for (const { world, hash, text } of requests) {
      if (this.get(world.key, hash) || missing.get(world.key)?.skills.has(hash)) continue;
      asked++;
      if (!missing.has(world.key)) missing.set(world.key, { world, skills: new Map() });
      missing.get(world.key).skills.set(hash, text);
    }
    this.reused += new Set(requests.map((r) => `${r.world.key}|${r.hash}`)).size - asked;
    if (asked === 0) return;
    mkdirSync(this.tmp, { recursive: true });
    const batches = [];
    for (const { world, skills } of missing.values()) {
      const entries = [...skills].map(([hash, text]) => ({ hash, text }));
      const n = Math.max(1, Math.min(this.jobs, Math.ceil(entries.length / MIN_BATCH)));
      for (let i = 0; i < n; i++) batches.push({ world, skills: entries.filter((_, j) => j % n === i) });
    }
    this.log(`noise-free test: scoring ${asked} distinct skill(s) in ${batches.length} batch(es)`);
    let fallback = false;
    await pool(batches, this.jobs, async (batch, i) => {
      const scores = fallback ? null : await this.viaWorker(batch, i);
      if (scores === null) fallback = true;
      this.merge(batch.world.key, scores ?? (await this.viaEval(batch, i)));
    });
    this.evaluated += asked;
    writeFileSync(`${this.file}.tmp`, JSON.stringify(this.byWorld));
    renameSync(`${this.file}.tmp`, this.file);
  }

  merge(worldKey, scores) {
    this.byWorld[worldKey] = { ...this.byWorld[worldKey], ...scores };
  }

  /** One worker process for the batch; null when the build's modules cannot be imported (exit 4). */
  async viaWorker(batch, i) {
    const jobsFile = join(this.tmp, `batch_${i}.json`);
    const outFile = join(this.tmp, `batch_${i}.scores.json`);
    writeFileSync(jobsFile, JSON.stringify(batch.skills));
    const r = await runNode(
      WORKER,
      [
        '--config',
        batch.world.configPath,
        '--in',
        jobsFile,
        '--out',
        outFile,
        '--cfg-options',
        ...batch.world.overrides,
      ],
      { logFile: join(this.tmp, `batch_${i}.log`) },
    );
    if (r.code === 4) {
      this.log(`noise-free test: ${errorLine(r.out)}; falling back to one skillopt eval per skill (slow)`);
      return null;
    }
    if (r.code !== 0) throw new Error(`noise-free worker failed (${batch.world.key}): ${errorLine(r.out)}`);
    return JSON.parse(readFileSync(outFile, 'utf8'));
  }

  async viaEval(batch, i) {
    const scores = {};
    for (const { hash, text } of batch.skills) {
      const out = join(this.tmp, `eval_${i}_${hash}`);
      const path = join(this.tmp, `${hash}.md`);
      writeFileSync(path, text);
      const r = await skillopt([
        'eval',
        '--config',
        batch.world.configPath,
        '--skill',
        path,
        '--split',
        'test',
        '--model-cache',
        'off',
        '--cfg-options',
        `env.out_root=${out}`,
        ...batch.world.overrides,
      ]);
      if (r.code !== 0) throw new Error(`skillopt eval of ${path} failed: ${errorLine(r.out)}`);
      const s = JSON.parse(readFileSync(join(out, 'eval_summary.json'), 'utf8'));
      scores[hash] = { pass_rate: s.pass_rate, hard: s.hard, soft: s.soft, n: s.n_scored, errored: s.n_errored };
    }
    return scores;
  }
}
