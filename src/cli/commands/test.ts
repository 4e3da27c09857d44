/**
 * `skillopt test`: run the skill suites as Vitest tests with the skillopt reporter. Vitest flags pass
 * through unchanged (-t, --reporter, --outputFile.junit, --shard, --merge-reports, file filters).
 * With `--optimize` it runs the optimizer until the validation pass rate reaches `--target`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { startVitest } from 'vitest/node';
import { runSummary } from '../../suite/summary.ts';
import { normalizeSplit } from '../../suite/splits.ts';
import { openHost, type RunResult } from '../../vitest/host.ts';
import { defaultFilters, parseVitestArgs } from '../../vitest/runner.ts';
import { SkillOptError } from '../../util/errors.ts';
import { numberFlag, single, takeFlags } from '../args.ts';
import { outRoot } from '../../config/out-root.ts';
import { configFromArgs, CONFIG_FLAGS, readSkillFile } from '../common.ts';
import type { Command } from '../main.ts';
import { score3 } from '../../util/format.ts';
import { displayPath } from '../../util/paths.ts';
import { printEndReport } from '../report.ts';

const USAGE = `skillopt test [vitest args] [--config C] [--cfg-options k=v ...] [--skill S] [--split train|val|test|all]
                     [--optimize [--target 0.9]]

  --config C          YAML config (env.name picks the suite; model.* picks the endpoints)
  --cfg-options k=v   override config keys (e.g. env.limit=20 evaluation.min_pass_rate=0.8)
  --skill S           skill file under test (default: the suite's seed skill)
  --split S           which tasks to run (default all)
  --optimize          optimize the skill until the validation pass rate reaches --target
  --target X          target validation pass rate for --optimize (default train.target_pass_rate, else 0.9)
  Any other flag goes to Vitest: -t <pattern>, --reporter=junit --outputFile.junit=out.xml, --shard=1/2, --merge-reports`;

export const command: Command = {
  usage: USAGE,
  async run(argv) {
    const args = takeFlags(argv, {
      valued: [...CONFIG_FLAGS.valued, 'skill', 'split', 'target'],
      multi: CONFIG_FLAGS.multi,
      switches: ['optimize'],
    });
    if (args.switches.has('optimize')) {
      const { runOptimize } = await import('../../optimizer/cli-run.ts');
      return runOptimize(args, { stopAtTarget: true, target: numberFlag(args, 'target') });
    }
    const { config } = configFromArgs(args, { required: false });
    const split = normalizeSplit(single(args, 'split') ?? 'all');
    const skillPath = single(args, 'skill');
    const skill = skillPath ? readSkillFile(skillPath) : undefined;
    const { filters, options } = parseVitestArgs(args.rest);
    const mergeDir = options.mergeReports;
    if (typeof mergeDir === 'string' && !existsSync(resolve(mergeDir))) {
      // Vitest would only print a serialized ENOENT; name the directory on one line instead.
      throw new SkillOptError(`--merge-reports ${mergeDir}: no such directory (write shard blobs there with --reporter=blob --outputFile.blob=<dir>/blob-N.json)`);
    }
    const outDir = outRoot(config, 'test');
    const host = await openHost({
      config,
      outDir,
      session: { mode: 'test', split, ids: null, skills: skill ? { '*': skill } : {} },
      log: (l) => console.log(l),
    });
    let result: RunResult | undefined;
    host.sink = (r) => {
      result = r;
    };
    try {
      const vitest = await startVitest('test', filters.length ? filters : defaultFilters(config.env.name), {
        ...options,
        watch: false,
        run: true,
      });
      await vitest.close();
    } finally {
      await host.close();
    }
    const exitCode = Number(process.exitCode ?? 0) || 0;
    const summary = result && (result.summary ?? runSummary(result.records, { wallTimeS: result.wallTimeS, gates: result.gates }));
    const failedGate = result?.gates.find((g) => !g.ok);
    const firstMiss = result?.records.find((r) => r.error_kind);
    const o = summary?.overall;
    printEndReport({
      title: 'skillopt test',
      ok: exitCode === 0,
      outDir: result && result.records.length ? outDir : null,
      skill: { label: 'skill', path: skill?.path ?? (config.env.skill_init || 'the seed skill of each suite') },
      metrics: o
        ? [
            ['cases', `${o.n} (${o.passed} pass, ${o.failed} fail, ${o.errored} errored)`],
            ['pass', `rate ${score3(o.pass_rate)} · mean hard ${score3(o.mean_hard)} · mean soft ${score3(o.mean_soft)}`],
            ['tokens', `target ${o.usage.target.prompt_tokens + o.usage.target.completion_tokens} in ${o.usage.target.calls} calls` +
              (o.usage.judge.calls ? ` · judge ${o.usage.judge.prompt_tokens + o.usage.judge.completion_tokens} in ${o.usage.judge.calls} calls` : '')],
            ['wall', `${summary!.wall_time_s.toFixed(1)} s`],
          ]
        : [],
      failure:
        result?.errors[0] ??
        (failedGate ? `suite gate failed for '${failedGate.suite}': ${failedGate.reasons.join('; ')}` : null) ??
        (firstMiss ? `${firstMiss.id}: ${firstMiss.error}` : null) ??
        (exitCode !== 0 && !result ? 'Vitest did not run any skill suite (see its output above)' : null),
      next: nextAction(exitCode, Boolean(failedGate), Boolean(result?.errors.length) || !result?.records.length, single(args, 'config') ?? '<config>', outDir),
      simulated: summary?.simulated ?? host.session.simulated,
    });
    return exitCode;
  },
};

function nextAction(exitCode: number, gateFailed: boolean, broken: boolean, configPath: string, outDir: string): string {
  if (exitCode === 0) return `inspect ${displayPath(outDir)}/results.jsonl, or optimize: npx skillopt test --optimize --config ${configPath}`;
  // A suite that could not load (bad dataset, missing seed skill), or no suite ran: no results to read.
  if (broken) return 'fix the failure above and rerun';
  if (gateFailed) return `improve the skill from its failures: npx skillopt test --optimize --config ${configPath}`;
  return `read the worst cases above and ${displayPath(outDir)}/results.jsonl`;
}
