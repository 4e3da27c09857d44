/**
 * Global setup of the e2e project (vitest.config.ts): the runs several test files read are made once per
 * test run, here, and their folders are provided to the tests (`sharedRun(name)` in
 * test/helpers/shared-runs.ts). A test treats them as read-only; one that must change a run folder copies
 * it first (`copyRun`). Each run is the spawned CLI exactly as a test would spawn it (test/e2e/helpers.ts
 * `childEnv`, guarded against the network by test/setup/child-offline.mjs), and its exit code, stdout and
 * stderr are provided with its folder, so a test can still assert on what the command printed.
 *
 * The runs (docs/testing.md lists them): the mini fixture's `skillopt test` and `skillopt eval`, a `skillopt
 * test` with the oracle skill, two `skillopt test --optimize` of the opt fixture (one of them writing a
 * model-call cache) and one trials run.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import {
  SHARED_RUNS,
  type SharedRunName,
  type SharedRunResult,
  type SharedRunSpec,
} from '../helpers/shared-run-specs.ts';
import { commandEnv } from '../helpers/child-env.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin', 'skillopt.js');
const CHILD_GUARD = fileURLToPath(new URL('./child-offline.mjs', import.meta.url));

function spawnRun(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<Omit<SharedRunResult, 'dir' | 'aux'>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: commandEnv({ NODE_OPTIONS: `--import=${CHILD_GUARD}`, ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export default async function setup(project: TestProject): Promise<() => void> {
  if (!existsSync(join(REPO, 'dist', 'cli', 'main.js')))
    throw new Error('dist/ is missing: run `npm run build` before the e2e tests');
  const root = mkdtempSync(join(tmpdir(), 'skillopt-shared-runs-'));
  const guardLog = join(root, 'refused-connections.log');
  const names = Object.keys(SHARED_RUNS) as SharedRunName[];
  const results: Record<string, SharedRunResult> = {};
  // two at a time: each run is a process with a Vitest worker of its own, on a 2-core machine
  const queue = [...names];
  await Promise.all(
    [0, 1].map(async () => {
      for (let name = queue.shift(); name; name = queue.shift()) {
        const spec: SharedRunSpec = SHARED_RUNS[name];
        const dir = join(root, name);
        const aux = join(root, `${name}-files`);
        mkdirSync(aux);
        for (const [file, text] of Object.entries(spec.files ?? {})) writeFileSync(join(aux, file), text);
        const run = await spawnRun(spec.args(dir, aux), join(REPO, spec.cwd), {
          ...spec.env,
          SKILLOPT_TEST_GUARD_LOG: guardLog,
        });
        if (!spec.codes.includes(run.code ?? -1)) {
          throw new Error(
            `shared run ${name} (test/setup/fixture-runs.ts) exited ${run.code}, expected ${spec.codes.join(' or ')}:\n${run.stdout}\n${run.stderr}`,
          );
        }
        results[name] = { dir, aux, ...run };
      }
    }),
  );
  if (existsSync(guardLog)) throw new Error(`a shared run reached beyond loopback:\n${readFileSync(guardLog, 'utf8')}`);
  project.provide('sharedRuns', results as Record<SharedRunName, SharedRunResult>);
  return () => rmSync(root, { recursive: true, force: true });
}
