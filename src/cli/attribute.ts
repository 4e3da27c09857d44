/**
 * `skillopt compare --attribute` (docs/attribution.md): after the comparison, re-run the flipped cases with
 * units of the skill change reverted, through the suites and the model layer (gateway, cache, trials,
 * accounting as any run), and report which unit breaks or fixes which case. Both runs' skill texts are
 * needed, found by the hash their rows carry; anything missing is refused in one line before any request.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { attribute, caseKeyOf, defaultBudget, type Attribution, type ChangedCase } from '../compare/attribution.ts';
import type { CaseRef } from '../compare/compare.ts';
import type { ComparisonRun, Side } from '../compare/index.ts';
import type { SkillOptConfig } from '../config/schema.ts';
import { deterministicTarget } from '../config/roles.ts';
import { skillHash } from '../skill/hash.ts';
import { skillChange, type UnitGranularity } from '../skill/units.ts';
import { readRunFile, EvalSummarySchema } from '../runfiles/index.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { openHost } from '../vitest/host.ts';
import { SuiteRunner } from '../vitest/runner.ts';

export interface AttributeOptions {
  config: SkillOptConfig;
  granularity: UnitGranularity;
  /** Calls at most; default defaultBudget (docs/attribution.md#budget). */
  budget: number | null;
  /** Skill files named on the command line, for runs that do not record theirs. */
  skills: { baseline?: string | undefined; candidate?: string | undefined };
  log: (line: string) => void;
  /**
   * The candidate's skill when the caller knows it (`skillopt test --baseline … --attribute`: the run's
   * `--skill`), or `seed`: the suite's seed skill, read from its manifest. Checked against the run's hash.
   */
  candidateSkill?: { text: string; path: string } | 'seed';
}

export interface AttributionResult extends Attribution {
  granularity: UnitGranularity;
  budget: number;
  skills: { baseline: string; candidate: string };
}

/** The one skill hash of a side's rows (a side that mixes skills cannot be attributed). */
function hashOf(side: Side, which: string): string {
  const hashes = [...new Set(side.rows.map((r) => r.skill_hash))];
  if (hashes.length !== 1) {
    throw new SkillOptError(
      `--attribute: the ${which} run (${side.arg}) ${hashes.length === 0 ? 'has no scored rows' : `mixes ${hashes.length} skills (hashes ${hashes.join(', ')})`}: attribution needs one skill per run`,
    );
  }
  return hashes[0]!;
}

/** Files that may hold a side's skill: the flag, eval_summary.json's `skill`, an optimize run's skills. */
function skillCandidates(side: Side, flag: string | undefined): string[] {
  if (flag) return [resolve(flag)];
  const out: string[] = [];
  const summary = join(side.folder, 'eval_summary.json');
  if (existsSync(summary)) {
    const skill = readRunFile(EvalSummarySchema, summary, displayPath(summary))?.skill;
    if (skill) out.push(resolve(skill));
  }
  // an optimize run: its evaluation folders sit in the run directory beside best_skill.md and skills/
  for (const dir of [side.folder, dirname(side.folder)]) {
    out.push(join(dir, 'best_skill.md'));
    const skills = join(dir, 'skills');
    if (existsSync(skills))
      for (const f of readdirSync(skills).sort()) if (f.endsWith('.md')) out.push(join(skills, f));
  }
  return out;
}

/** A skill the caller holds in memory, checked against the hash of the side's rows. */
function knownSkill(side: Side, skill: { text: string; path: string }, what: string): { text: string; path: string } {
  const hash = hashOf(side, 'candidate');
  const got = skillHash(skill.text);
  if (got !== hash)
    throw new SkillOptError(
      `--attribute: ${what} (${displayPath(skill.path)}, hash ${got}) is not the skill the run scored (its rows carry skill hash ${hash})`,
    );
  return skill;
}

/** A run's skill text: the flag's file, or the file its run records, matched by the hash its rows carry. */
export function sideSkill(
  side: Side,
  which: 'baseline' | 'candidate',
  flag: string | undefined,
): { text: string; path: string } {
  const hash = hashOf(side, which);
  if (hash === skillHash('')) return { text: '', path: 'none' };
  const tried = skillCandidates(side, flag);
  for (const path of tried) {
    if (!existsSync(path)) continue;
    const text = readFileSync(path, 'utf8');
    if (skillHash(text) === hash) return { text, path };
  }
  const flagName = `--${which}-skill`;
  throw new SkillOptError(
    flag
      ? `--attribute: ${flagName} ${flag} is not the skill the ${which} run scored (its rows carry skill hash ${hash}; the file hashes to ${existsSync(resolve(flag)) ? skillHash(readFileSync(resolve(flag), 'utf8')) : 'nothing: not found'})`
      : `--attribute: the ${which} run (${side.arg}) does not record the skill it scored (hash ${hash}): name it with ${flagName} <file>`,
  );
}

/** The model calls one sample of a case took in the runs (the mean over its rows of both sides, at least 1). */
function callsPerSample(run: ComparisonRun, c: CaseRef): number {
  const rows = [...run.baseline.rows, ...run.candidate.rows].filter((r) => r.suite === c.suite && r.id === c.id);
  const calls = rows.reduce((n, r) => n + (r.usage?.calls ?? 0) + (r.judge_usage?.calls ?? 0), 0);
  return rows.length === 0 ? 1 : Math.max(1, calls / rows.length);
}

/** The flipped cases, regressed first, with the calls one sample of each takes. */
export function changedCases(run: ComparisonRun): ChangedCase[] {
  const c = run.comparison;
  return [
    ...c.regressed.map((x) => ({
      suite: x.suite,
      id: x.id,
      direction: 'regressed' as const,
      callsPerSample: callsPerSample(run, x),
    })),
    ...c.fixed.map((x) => ({
      suite: x.suite,
      id: x.id,
      direction: 'fixed' as const,
      callsPerSample: callsPerSample(run, x),
    })),
  ];
}

/** The first trial index neither run used: the re-runs' fresh samples start there (docs/attribution.md#fresh-samples). */
export function firstFreshSample(run: ComparisonRun): number {
  let last = 0;
  for (const r of [...run.baseline.rows, ...run.candidate.rows]) last = Math.max(last, r.trial ?? 0);
  return last + 1;
}

export async function attributeComparison(run: ComparisonRun, opts: AttributeOptions): Promise<AttributionResult> {
  if (run.differentTasks)
    throw new SkillOptError(`--attribute needs two runs of the same tasks: ${run.differentTasks}`);
  const baseline = sideSkill(run.baseline, 'baseline', opts.skills.baseline);
  const known = opts.candidateSkill;
  const given =
    known === undefined
      ? sideSkill(run.candidate, 'candidate', opts.skills.candidate)
      : known === 'seed'
        ? null
        : knownSkill(run.candidate, known, 'the skill under test');
  if (known === 'seed') hashOf(run.candidate, 'candidate');
  const cases = changedCases(run);
  const suites = [...new Set(cases.map((c) => c.suite))];
  if (suites.length > 1)
    throw new SkillOptError(
      `--attribute explains one suite at a time; the changed cases are in ${suites.join(', ')} (select one with --cfg-options env.name=…)`,
    );
  const suite = suites[0] ?? run.candidate.rows[0]?.suite ?? opts.config.env.name;
  const config: SkillOptConfig = { ...opts.config, env: { ...opts.config.env, name: suite } };

  // the suites run only when there is something to re-run, or a seed skill to read from the manifest
  const opened: { host?: Awaited<ReturnType<typeof openHost>>; runner?: SuiteRunner } = {};
  const runnerOf = async (): Promise<SuiteRunner> => {
    opened.host ??= await openHost({ config, outDir: null, quiet: true, session: { mode: 'rollout', split: 'all' } });
    opened.runner ??= await SuiteRunner.open({ host: opened.host });
    return opened.runner;
  };
  try {
    let candidate = given;
    if (!candidate) {
      const manifest = (await (await runnerOf()).manifests()).find((m) => m.suite === suite);
      if (!manifest)
        throw new SkillOptError(`--attribute: suite '${suite}' has no manifest to read its seed skill from`);
      candidate = knownSkill(run.candidate, manifest.seed_skill, "the suite's seed skill");
    }
    return await explainChange(opts, {
      baseline,
      candidate,
      cases,
      firstSample: firstFreshSample(run),
      deterministic: deterministicTarget(config.model),
      runnerOf,
    });
  } finally {
    try {
      await opened.runner?.close();
    } finally {
      await opened.host?.close();
    }
  }
}

async function explainChange(
  opts: AttributeOptions,
  x: {
    baseline: { text: string; path: string };
    candidate: { text: string; path: string };
    cases: ChangedCase[];
    firstSample: number;
    deterministic: boolean;
    runnerOf: () => Promise<SuiteRunner>;
  },
): Promise<AttributionResult> {
  const { baseline, candidate, cases, deterministic } = x;
  const change = skillChange(baseline.text, candidate.text, opts.granularity);
  const budget = opts.budget ?? defaultBudget(cases, change.units.length, deterministic);
  const alpha = opts.config.evaluation.alpha;
  const settings = { budget, alpha, deterministic, firstSample: x.firstSample, baselineText: baseline.text };
  const result = {
    granularity: opts.granularity,
    budget,
    skills: { baseline: baseline.path, candidate: candidate.path },
  };
  if (cases.length === 0 || change.units.length === 0) {
    // nothing to re-run (no changed case, or no unit: every case is then unexplained), so no host is opened
    const never = async (): Promise<never> => {
      throw new Error('attribution: a re-run was asked for with nothing to re-run');
    };
    return { ...result, ...(await attribute(change, cases, never, settings)) };
  }
  const runner = await x.runnerOf();
  const got = await attribute(
    change,
    cases,
    async (variant, batch, samples) => {
      const what =
        variant.reverted === null
          ? `${displayPath(baseline.path)}`
          : variant.reverted.length === 0
            ? displayPath(candidate.path)
            : `${displayPath(candidate.path)} without ${variant.reverted.join(', ')}`;
      const res = await runner.run({
        mode: 'rollout',
        ids: batch.map((c) => c.id),
        skills: { '*': { text: variant.text, path: what } },
        samples: [...samples],
      });
      if (res.errors.length > 0 && res.records.length === 0) throw new SkillOptError(res.errors[0]!);
      const counts = new Map<string, { passes: number; scored: number }>();
      let calls = 0;
      for (const r of res.records) {
        calls += r.usage.calls + (r.judge_usage?.calls ?? 0);
        const key = caseKeyOf(r);
        const c = counts.get(key) ?? { passes: 0, scored: 0 };
        if (r.error_kind === null) {
          c.scored++;
          if (r.pass) c.passes++;
        }
        counts.set(key, c);
      }
      return { counts, calls };
    },
    settings,
  );
  opts.log(
    `attribution: ${cases.length} changed case(s), ${change.units.length} unit(s) (${opts.granularity}), ${got.runs} re-run(s), ${got.calls} model call(s) of a budget of ${budget}${deterministic ? '; the target runs at temperature 0, so each question took one sample' : ''}`,
  );
  return { ...result, ...got };
}
