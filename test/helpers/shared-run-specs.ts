/**
 * The shared runs of the e2e project: what each one runs. test/setup/fixture-runs.ts makes them once per
 * test run; test/helpers/shared-runs.ts gives a test their folders. A test that makes the same run as one
 * of these reads the shared one instead (docs/testing.md).
 */
import { join } from 'node:path';
import { MINI_ORACLE_SKILL } from './mini-oracle.ts';

export interface SharedRunSpec {
  /** The working directory, relative to the repository. */
  cwd: string;
  /** The arguments of `skillopt`, writing into `dir` (its out_root); `aux` is a folder for its other files. */
  args(dir: string, aux: string): string[];
  /** Files the run reads, written into `aux` first: name → text. */
  files?: Record<string, string>;
  /** The exit codes it may end with. */
  codes: number[];
  /** Variables the run sees besides a spawned test run's (test/e2e/helpers.ts `childEnv`). */
  env?: Record<string, string>;
}

export interface SharedRunResult {
  /** The run's folder (its out_root). Read-only: copy it (`copyRun`) to change it. */
  dir: string;
  /** The folder of its other files (the skill it read, a JUnit file). */
  aux: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

const MINI_CONFIG = 'configs/mini/sim.yaml';
/** The API key the `optimizeTarget` run is given (on its command line and in its environment): no output may carry it. */
export const OPT_TARGET_SECRET = 'sk-e2e-do-not-leak-0123456789abcdef';

export const SHARED_RUNS = {
  /** `skillopt test` of the mini fixture with its seed skill: 3 of 30 cases pass, exit 1. */
  miniTest: {
    cwd: 'test/fixtures/mini',
    codes: [1],
    args: (dir) => ['test', '--config', MINI_CONFIG, '--cfg-options', `env.out_root=${dir}`],
  },
  /** `skillopt test` of the mini fixture with the oracle skill (aux/oracle.md): every case passes. */
  miniTestOracle: {
    cwd: 'test/fixtures/mini',
    codes: [0],
    files: { 'oracle.md': MINI_ORACLE_SKILL },
    args: (dir, aux) => [
      'test',
      '--config',
      MINI_CONFIG,
      '--skill',
      join(aux, 'oracle.md'),
      '--cfg-options',
      `env.out_root=${dir}`,
    ],
  },
  /** `skillopt eval` of the mini fixture's seed skill on its test split. */
  miniEval: {
    cwd: 'test/fixtures/mini',
    codes: [0, 1],
    args: (dir) => [
      'eval',
      '--config',
      MINI_CONFIG,
      '--skill',
      'skills/mini/initial.md',
      '--split',
      'test',
      '--cfg-options',
      `env.out_root=${dir}`,
    ],
  },
  /** One `skillopt test --optimize` of the opt fixture: one epoch, to a target of 0.6. */
  optimize: {
    cwd: 'test/fixtures/opt',
    codes: [0],
    args: (dir) => [
      'test',
      '--optimize',
      '--target',
      '0.6',
      '--config',
      'configs/opt/sim.yaml',
      '--cfg-options',
      `env.out_root=${dir}`,
      'env.data_path=benchmarks/opt/tasks.json',
      'env.workers=2',
      'train.num_epochs=1',
    ],
  },
  /**
   * `skillopt test --optimize --target 0.8` of the opt fixture as configured (two epochs, the test split
   * scored), writing a model-call cache (aux/cache), with an API key on the command line and in the
   * environment (OPT_TARGET_SECRET): the run its summary, artifacts and redaction are checked on, and the
   * cache a rerun replays.
   */
  optimizeTarget: {
    cwd: 'test/fixtures/opt',
    codes: [0],
    env: { OPENAI_COMPATIBLE_API_KEY: OPT_TARGET_SECRET },
    args: (dir, aux) => [
      'test',
      '--optimize',
      '--target',
      '0.8',
      '--config',
      'configs/opt/sim.yaml',
      '--model-cache',
      'rw',
      '--cfg-options',
      `env.out_root=${dir}`,
      `cache.dir=${join(aux, 'cache')}`,
      `model.azure_openai_api_key=${OPT_TARGET_SECRET}`,
    ],
  },
  /** Three trials per task at noise 0.2 with the oracle skill, with a JUnit file (aux/junit.xml). */
  trials: {
    cwd: 'test/fixtures/mini',
    codes: [0, 1],
    files: { 'oracle.md': MINI_ORACLE_SKILL },
    args: (dir, aux) => [
      'test',
      '--config',
      MINI_CONFIG,
      '--skill',
      join(aux, 'oracle.md'),
      '--reporter=default',
      '--reporter=junit',
      `--outputFile.junit=${join(aux, 'junit.xml')}`,
      '--cfg-options',
      'env.trials=3',
      'model.simulated.noise=0.2',
      `env.out_root=${dir}`,
    ],
  },
} satisfies Record<string, SharedRunSpec>;

export type SharedRunName = keyof typeof SHARED_RUNS;

declare module 'vitest' {
  export interface ProvidedContext {
    sharedRuns: Record<SharedRunName, SharedRunResult>;
  }
}
