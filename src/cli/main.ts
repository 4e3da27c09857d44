#!/usr/bin/env node
/**
 * The `skillopt` command: dispatches to one module per command in ./commands. The summaries live here so
 * that listing the commands loads none of them (they pull in Vitest, the optimizer and the model layer).
 */
import { inspect } from 'node:util';
import pc from 'picocolors';
import { closest } from '../util/closest.ts';
import { SkillOptError, oneLine } from '../util/errors.ts';
import { escapeControls } from '../util/control-chars.ts';
import type { Command } from './command.ts';
import { USAGE_PREFIX } from './args.ts';
import { printErr, printOut } from '../util/print.ts';
import { currentEnv, processIo, withIo, type CommandIo } from '../util/io-context.ts';

const COMMANDS: Record<string, { summary: string; load: () => Promise<{ command: Command }> }> = {
  test: {
    summary: 'run the skill suites as Vitest tests (add --optimize to improve the skill)',
    load: () => import('./commands/test.ts'),
  },
  train: {
    summary: 'run SkillOpt training (epochs × steps) and write the run directory with best_skill.md',
    load: () => import('./commands/train.ts'),
  },
  eval: {
    summary: 'eval-only: score one skill on one split, write eval_summary.json and predictions',
    load: () => import('./commands/eval.ts'),
  },
  compare: {
    summary: 'compare two runs case by case: regressed / fixed cases, the paired change, a verdict',
    load: () => import('./commands/compare.ts'),
  },
  matrix: {
    summary: 'assemble one model × skill matrix from the matrix folders of separate runs (one CI job per model)',
    load: () => import('./commands/matrix.ts'),
  },
  report: {
    summary: "write (again) a run folder's report.html: one self-contained file, no network",
    load: () => import('./commands/report.ts'),
  },
  show: {
    summary: "print a run folder's facts: what ran, scores, the step curve, the worst cases",
    load: () => import('./commands/show.ts'),
  },
  cache: {
    summary:
      'the model-call cache: stats (entries, size, hit rate of recent runs) and prune (--max-size, --older-than)',
    load: () => import('./commands/cache.ts'),
  },
  config: {
    summary: 'print the resolved configuration (validated, secrets redacted)',
    load: () => import('./commands/config.ts'),
  },
  'sim-server': {
    summary: 'start the simulated OpenAI-compatible model server (offline, deterministic)',
    load: () => import('./commands/sim-server.ts'),
  },
};

function help(): string {
  const lines = ['skillopt: evaluate and optimize agent skill documents as Vitest suites', '', 'Commands:'];
  for (const [name, { summary }] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(11)} ${summary}`);
  lines.push('', 'Run `skillopt <command> --help` for its flags.');
  return lines.join('\n');
}

/**
 * Run `skillopt <argv>` and return its exit code. Everything the command prints goes to `io`'s streams and
 * every variable it reads comes from `io.env` (util/io-context.ts), so a test can run a command in process;
 * an error is printed as one line to `io.stderr` (`reportFatal`), never thrown.
 */
export async function main(argv: string[], io: CommandIo = processIo()): Promise<number> {
  // Vitest marks the process failed when a case fails; the code returned here is the command's verdict
  const exitCode = process.exitCode;
  return withIo(
    io,
    async () => {
      try {
        return await dispatch(argv);
      } catch (err) {
        return reportFatal(err);
      } finally {
        process.exitCode = exitCode;
      }
    },
    argv,
  );
}

async function dispatch(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    printOut(help());
    return 0;
  }
  if (name === '--version' || name === '-v') {
    const { VERSION } = await import('../version.ts');
    printOut(VERSION);
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    const near = closest(name, Object.keys(COMMANDS));
    throw new SkillOptError(`unknown command '${name}'${near ? ` (did you mean ${near}?)` : ''}; see skillopt --help`);
  }
  const { command } = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    printOut(`${entry.summary}\n\n${USAGE_PREFIX}${command.usage}`);
    return 0;
  }
  return command.run(rest);
}

/** Print an error as one line, redacted; the stack only with SKILLOPT_DEBUG=1. */
export function reportFatal(err: unknown): number {
  if (currentEnv().SKILLOPT_DEBUG) printErr(escapeControls(inspect(err)));
  const prefix = pc.red('skillopt: error:');
  printErr(`${prefix} ${escapeControls(oneLine(err), { layout: false })}`);
  return err instanceof SkillOptError ? err.exitCode : 1;
}
