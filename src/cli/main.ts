#!/usr/bin/env node
/** The `skillopt` command: dispatches to one module per command in ./commands. */
import pc from 'picocolors';
import { SkillOptError, oneLine } from '../util/errors.ts';

export interface Command {
  summary: string;
  usage: string;
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, () => Promise<{ command: Command }>> = {
  test: () => import('./commands/test.ts'),
  train: () => import('./commands/train.ts'),
  eval: () => import('./commands/eval.ts'),
  config: () => import('./commands/config.ts'),
  'sim-server': () => import('./commands/sim-server.ts'),
};

async function help(): Promise<string> {
  const lines = ['skillopt: evaluate and optimize agent skill documents as Vitest suites', '', 'Commands:'];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const { command } = await load();
    lines.push(`  ${name.padEnd(11)} ${command.summary}`);
  }
  lines.push('', 'Run `skillopt <command> --help` for its flags.');
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(await help());
    return 0;
  }
  if (name === '--version' || name === '-v') {
    const { VERSION } = await import('../version.ts');
    console.log(VERSION);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    console.error(`skillopt: unknown command '${name}'\n\n${await help()}`);
    return 2;
  }
  const { command } = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(`${command.summary}\n\nUsage: ${command.usage}`);
    return 0;
  }
  return command.run(rest);
}

/** Print an error as one line; the stack only with SKILLOPT_DEBUG=1. */
export function reportFatal(err: unknown): number {
  if (process.env.SKILLOPT_DEBUG) console.error(err);
  const prefix = pc.red('skillopt: error:');
  console.error(`${prefix} ${oneLine(err)}`);
  return err instanceof SkillOptError ? err.exitCode : 1;
}
