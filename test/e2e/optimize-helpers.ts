/**
 * Helpers for the optimizer end-to-end tests: spawn the compiled `skillopt` CLI (bin/skillopt.js →
 * dist/, so `npm run build` first) in the `test/fixtures/opt` project, asynchronously (simulated and
 * fault servers started by a test keep answering meanwhile), with a clean environment (no Vitest,
 * skillopt or API-key variables leak into the child). A run can be SIGKILLed once its output shows a
 * pattern; the child is its own process group so its Vitest workers die with it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { RuntimeStateExactSchema, StepDigestWriteSchema, StepRecordWriteSchema } from '../../src/runfiles/index.ts';
import { startSimServer, type SimServer, type SimServerOptions } from '../../src/sim/server.ts';
import {
  assertBuilt,
  BIN,
  childEnv,
  skillopt as inProcess,
  MINI,
  readJson,
  readJsonl,
  REPO,
  reportLine,
  tempDirs,
} from './helpers.ts';

export { REPO, BIN, MINI, assertBuilt, tempDirs, readJson, readJsonl, reportLine };
export const OPT = join(REPO, 'test', 'fixtures', 'opt');
export const OPT_CONFIG = 'configs/opt/sim.yaml';
export const OPT_SEED_SKILL = join(OPT, 'skills', 'opt', 'initial.md');

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Whether the run was killed by `killWhen`. */
  killed: boolean;
}

/**
 * `skillopt <args>` in `cwd` (default: the opt fixture). With `killWhen`, it is a process of its own whose
 * whole process group gets SIGKILL as soon as stdout matches it (the kill of an operator, or of the
 * machine, mid-run); with `killOn`, as soon as that promise resolves. Without either it runs in process.
 */
export function skillopt(
  args: string[],
  opts: { cwd?: string; killWhen?: RegExp; killOn?: Promise<unknown>; env?: Record<string, string> } = {},
): Promise<CliRun> {
  // nothing to kill: in this process, as test/e2e/helpers.ts `skillopt` runs a command
  if (!opts.killWhen && !opts.killOn)
    return inProcess(args, { cwd: opts.cwd ?? OPT, ...(opts.env ? { env: opts.env } : {}) }).then((r) => ({
      code: r.code,
      signal: null,
      stdout: r.stdout,
      stderr: r.stderr,
      killed: false,
    }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? OPT,
      env: childEnv(opts.env),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (opts.killWhen && !killed && opts.killWhen.test(stdout)) {
        killed = true;
        process.kill(-child.pid!, 'SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // a kill at a point the test decides (e.g. a request held at a proxy), not at a moment in time
    void opts.killOn?.then(() => {
      if (killed || child.exitCode !== null || child.signalCode !== null) return;
      killed = true;
      process.kill(-child.pid!, 'SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, killed }));
  });
}

/** `train --config <opt sim config> [--skill S] --cfg-options env.out_root=<out> ...options` (in `cwd`, default the opt fixture) */
export function train(
  out: string,
  options: string[] = [],
  opts: {
    killWhen?: RegExp;
    killOn?: Promise<unknown>;
    config?: string;
    skill?: string;
    env?: Record<string, string>;
    cwd?: string;
  } = {},
): Promise<CliRun> {
  const skill = opts.skill ? ['--skill', opts.skill] : [];
  return skillopt(
    ['train', '--config', opts.config ?? OPT_CONFIG, ...skill, '--cfg-options', `env.out_root=${out}`, ...options],
    opts,
  );
}

export function readText(path: string): string {
  return readFileSync(path, 'utf8');
}

export interface StepRecord {
  step: number;
  epoch: number;
  action: string;
  current_score: number;
  best_score: number;
  candidate_gate_score?: number;
  selection_pass_rate?: number;
  warnings: string[];
  accumulation_batches: Array<{ reused_cases: number; reused_patches: number; n_envs: number }>;
  [k: string]: unknown;
}

/**
 * The run's history.json. Every record in it, every steps/step_NNNN/step_record.json and
 * trajectory_digest.json beside it, and runtime_state.json, are parsed against the schemas deeply strict:
 * a field the optimizer writes that the schema does not name, or of another type, fails the test that
 * made the run.
 */
export function history(out: string): StepRecord[] {
  const records = readJson<StepRecord[]>(join(out, 'history.json'));
  expectStrictStepFiles(out, records);
  return records;
}

function expectStrictStepFiles(out: string, records: unknown[]): void {
  const strict = (schema: z.ZodType, value: unknown, file: string) => {
    const got = schema.safeParse(value);
    if (!got.success)
      throw new Error(`${file}: ${got.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  };
  records.forEach((r, i) => strict(StepRecordWriteSchema, r, `${out}/history.json[${i}]`));
  strict(RuntimeStateExactSchema, readJson(join(out, 'runtime_state.json')), `${out}/runtime_state.json`);
  for (const dir of stepDirs(out)) {
    const record = join(out, 'steps', dir, 'step_record.json');
    const digest = join(out, 'steps', dir, 'trajectory_digest.json');
    if (existsSync(record)) strict(StepRecordWriteSchema, readJson(record), record);
    if (existsSync(digest)) strict(StepDigestWriteSchema, readJson(digest), digest);
  }
}

/** Step directories of a run, sorted. */
export function stepDirs(out: string): string[] {
  const dir = join(out, 'steps');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** In-process simulated servers on 127.0.0.1 that a test file starts with `start()` and closes in afterAll. */
export function simServers(knobs: SimServerOptions = {}): { start(): Promise<SimServer>; closeAll(): Promise<void> } {
  const started: SimServer[] = [];
  return {
    async start() {
      const s = await startSimServer({ ...knobs, host: '127.0.0.1', port: 0, logRequests: false });
      started.push(s);
      return s;
    },
    async closeAll() {
      for (const s of started.splice(0)) await s.close();
    },
  };
}
