/**
 * Watch mode: editing a skill or a dataset reruns the suites that use them. `skillopt test --watch` and
 * plain `vitest watch` (skillopt() plugin, SKILLOPT_CONFIG) run in a copy of the mini fixture; the test
 * waits for the first run's report, edits a file, and waits for a run that reports the new result.
 *
 * No timing is asserted. A file watcher may miss a write that lands while it is still settling after a
 * start, so when no rerun has shown up for a while the same write is made again (a spurious extra rerun
 * is harmless: every run reports what is on disk). Each child is stopped with SIGTERM and awaited.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assertBuilt,
  BIN,
  childEnv,
  MINI,
  MINI_ORACLE_SKILL,
  miniProject,
  tempDirs,
  VITEST_BIN,
  waitForOutput,
} from './helpers.ts';

const tmp = tempDirs('watch');
const live = new Set<ChildProcess>();
beforeAll(assertBuilt);
afterAll(async () => {
  await Promise.all([...live].map((c) => stop(c, 'SIGKILL')));
  tmp.cleanup();
});

/** Generous: a run of the mini suite takes about a second; the machine may be busy. */
const RUN_TIMEOUT = 240_000;
/** No rerun after this long: make the same edit again (the watcher may have missed it). */
const RETRY_EDIT_MS = 15_000;
const MAX_EDITS = 6;

const SKILL = 'skills/mini/initial.md';
const DATASET = 'benchmarks/mini/tasks.json';
const CONFIG = 'configs/mini/sim.yaml';

const makeProject = (name: string): string => miniProject(tmp.make(name));

function start(args: string[], cwd: string, env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, args, { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let all = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (all += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (all += d));
  (child as ChildProcess & { output: () => string }).output = () => all;
  return child;
}

const output = (child: ChildProcess) => (child as ChildProcess & { output: () => string }).output();

/** Stop a child and wait for it to be gone. */
function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** Make `edit`, then wait for output matching `pattern`; repeat the edit while nothing matches, up to `MAX_EDITS` times. */
async function afterEdit(child: ChildProcess, pattern: RegExp, edit: () => void): Promise<string> {
  const seen = waitForOutput(child, pattern);
  seen.catch(() => {}); // when the edits gave up first, the child's later exit must not be an unhandled rejection
  let timer: NodeJS.Timeout | undefined;
  let edits = 0;
  const gaveUp = new Promise<never>((_, reject) => {
    const next = () => {
      if (edits === MAX_EDITS) {
        reject(
          new Error(
            `no run matching ${pattern} after the same edit was made ${edits} times:\n${output(child).slice(-3000)}`,
          ),
        );
        return;
      }
      edits++;
      edit();
      timer = setTimeout(next, RETRY_EDIT_MS);
    };
    next();
  });
  try {
    return await Promise.race([seen, gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}

const dropFirstTask = (dir: string) => () => {
  const tasks = JSON.parse(readFileSync(join(MINI, DATASET), 'utf8')) as unknown[];
  writeFileSync(join(dir, DATASET), JSON.stringify(tasks.slice(1), null, 2));
};

/** The short report `skillopt test --watch` prints after each run, with its cases line. */
const watchReport = (status: 'OK' | 'FAILED', cases: string) =>
  new RegExp(
    `skillopt test --watch · run \\d+ ${status} — simulated model\\n(?:  skill: .*\\n)?  cases:    ${cases.replace(/[()]/g, '\\$&')}\\n`,
  );

describe('watch mode', () => {
  test(
    'skillopt test --watch reruns when the seed skill or the dataset changes',
    async () => {
      const dir = makeProject('cli');
      const child = start([BIN, 'test', '--watch', '--config', CONFIG], dir);
      try {
        // Run 1: the seed skill solves 3 of 30 tasks; the files it read are watched.
        const first = await waitForOutput(child, watchReport('FAILED', '30 (3 pass, 27 fail, 0 errored)'));
        expect(first).toContain(`[skillopt] watching ${DATASET}, ${SKILL}: editing one reruns the suites that use it`);

        // The oracle skill solves every task: the rerun reads the new text.
        await afterEdit(child, watchReport('OK', '30 (30 pass, 0 fail, 0 errored)'), () =>
          writeFileSync(join(dir, SKILL), MINI_ORACLE_SKILL),
        );
        // One task fewer in the dataset: the next run has one case fewer.
        await afterEdit(child, watchReport('OK', '29 (29 pass, 0 fail, 0 errored)'), dropFirstTask(dir));
        expect(child.exitCode).toBeNull(); // still watching
      } finally {
        await stop(child);
      }
      expect(output(child)).toMatch(/RERUN {2}skills\/mini\/initial\.md/);
    },
    RUN_TIMEOUT,
  );

  test(
    'skillopt test --watch --skill S rereads S (outside the project) when it changes',
    async () => {
      const dir = makeProject('override');
      const skill = join(tmp.make('skill'), 'candidate.md');
      writeFileSync(skill, readFileSync(join(MINI, SKILL), 'utf8'));
      const child = start([BIN, 'test', '--watch', '--config', CONFIG, '--skill', skill], dir);
      try {
        const first = await waitForOutput(child, watchReport('FAILED', '30 (3 pass, 27 fail, 0 errored)'));
        expect(first).toMatch(/\[skillopt\] watching .*: editing one reruns/);
        const watched = /\[skillopt\] watching (.*): editing one reruns/.exec(first)![1]!.split(', ');
        expect(watched.sort()).toEqual([skill, DATASET].sort());
        await afterEdit(child, watchReport('OK', '30 (30 pass, 0 fail, 0 errored)'), () =>
          writeFileSync(skill, MINI_ORACLE_SKILL),
        );
      } finally {
        await stop(child);
      }
    },
    RUN_TIMEOUT,
  );

  test(
    'plain vitest watch with SKILLOPT_CONFIG reruns when the skill or the dataset changes',
    async () => {
      const dir = makeProject('plain');
      const child = start([VITEST_BIN, 'watch', '--project', 'skills'], dir, { SKILLOPT_CONFIG: CONFIG });
      try {
        // The reporter's table (`all  n  pass  fail  err  pass-rate`), then Vitest waits for changes.
        await waitForOutput(child, /^ {2}all\s+30\s+3\s+27\s+0\s+0\.100[\s\S]*Watching for file changes/m);
        await afterEdit(child, /^ {2}all\s+30\s+30\s+0\s+0\s+1\.000/m, () =>
          writeFileSync(join(dir, SKILL), MINI_ORACLE_SKILL),
        );
        await afterEdit(child, /^ {2}all\s+29\s+29\s+0\s+0\s+1\.000/m, dropFirstTask(dir));
        expect(output(child)).toContain('[skillopt] watching benchmarks/mini/tasks.json, skills/mini/initial.md');
      } finally {
        await stop(child);
      }
    },
    RUN_TIMEOUT,
  );
});
