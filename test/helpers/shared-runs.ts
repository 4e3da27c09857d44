/**
 * The shared runs in a test (e2e project only: its global setup, test/setup/fixture-runs.ts, makes them).
 * `sharedRun('miniTest').dir` is the run's folder; never write into it. `copyRun` gives a copy to change.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { inject, onTestFinished } from 'vitest';
import type { SharedRunName, SharedRunResult } from './shared-run-specs.ts';

export type { SharedRunName, SharedRunResult };

export function sharedRun(name: SharedRunName): SharedRunResult {
  const runs = inject('sharedRuns');
  if (!runs)
    throw new Error(`shared run ${name}: none provided; run this file in the e2e project (vitest --project e2e)`);
  return runs[name];
}

/** A copy of the shared run's folder, to change; called in a test, it is removed when the test ends. */
export function copyRun(name: SharedRunName): string {
  const parent = mkdtempSync(join(tmpdir(), `skillopt-copy-${name}-`));
  onTestFinished(() => rmSync(parent, { recursive: true, force: true }));
  const dir = join(parent, basename(sharedRun(name).dir));
  cpSync(sharedRun(name).dir, dir, { recursive: true });
  return dir;
}
