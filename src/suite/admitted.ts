/**
 * Which cases of a suite run (docs/accounting.md#budgets): a `skillopt test` rerun into a folder the budget
 * stopped (or a matrix cell run again, docs/matrix.md#resuming) reuses the rows it scored, and under `env.max_cost` every other case asks the session host before
 * it starts, and tells it what it spent once done. A case the host does not admit is not run: no row.
 */
import { caseSpent } from '../cost/case-budget.ts';
import type { ProvidedSession } from '../contract/session.ts';
import type { CaseRecord, SkillTask } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import type { SuiteRuntime } from './runtime.ts';
import type { CaseSamplesRun } from './run-case.ts';

/** A case that was not run, and why (one line). */
export interface NotRun {
  notRun: string;
}

export type CaseRun<E> = (task: SkillTask<E>, signal: AbortSignal) => Promise<CaseRecord[] | NotRun>;

export function isNotRun(x: CaseRecord[] | NotRun): x is NotRun {
  return !Array.isArray(x);
}

/** A kept case's rows when they are complete for this run: this skill, this task's expected answer, every trial wanted, none errored. */
function keptRows(
  rows: CaseRecord[] | undefined,
  task: SkillTask<unknown>,
  hash: string,
  trials: number,
): CaseRecord[] | null {
  if (!rows || rows.length !== trials) return null;
  const expected = JSON.stringify(task.expected);
  if (
    rows.some(
      (r) =>
        r.skill_hash !== hash ||
        r.error_kind !== null ||
        trials > 1 !== (r.trial !== undefined) ||
        JSON.stringify(r.expected) !== expected,
    )
  )
    return null;
  return [...rows].sort((a, b) => (a.trial ?? 0) - (b.trial ?? 0));
}

/**
 * Kept rows of some of a case's trials (env.trials > 1): this skill, this task's expected answer, a trial
 * index below `trials`, not errored; one per trial. A rerun with more trials (or after errored trials) runs
 * only the others.
 */
function keptTrials(
  rows: CaseRecord[] | undefined,
  task: SkillTask<unknown>,
  hash: string,
  trials: number,
): Map<number, CaseRecord> {
  const out = new Map<number, CaseRecord>();
  if (!rows || trials <= 1) return out;
  const expected = JSON.stringify(task.expected);
  for (const r of rows) {
    if (
      r.skill_hash === hash &&
      r.error_kind === null &&
      r.trial !== undefined &&
      r.trial < trials &&
      JSON.stringify(r.expected) === expected
    )
      out.set(r.trial, r);
  }
  return out;
}

export function admittedRunner<E>(
  run: CaseSamplesRun<E>,
  c: { suite: string; session: ProvidedSession; runtime: SuiteRuntime; hash: string; trials: number; samples: boolean },
): CaseRun<E> {
  const kept = c.session.kept ?? null;
  const admission = c.session.budgeted ? c.runtime.admission : null;
  if (c.session.budgeted && !admission) {
    throw new SkillOptError(
      'env.max_cost needs the cases to run in worker threads of the skillopt process (pool: threads), where the host sees every call',
    );
  }
  if (!kept && !admission) return run;
  return async (task, signal) => {
    const rows = kept?.[`${c.suite}\u0000${task.id}`];
    const reused = kept ? keptRows(rows, task as SkillTask<unknown>, c.hash, c.trials) : null;
    if (reused) return reused;
    // some trials kept (not the rollout's own samples): only the others run
    const some = c.samples
      ? new Map<number, CaseRecord>()
      : keptTrials(rows, task as SkillTask<unknown>, c.hash, c.trials);
    const missing =
      some.size > 0 ? Array.from({ length: c.trials }, (_, t) => t).filter((t) => !some.has(t)) : undefined;
    const runMissing = async () => {
      const fresh = await run(task, signal, missing);
      return {
        fresh,
        all: missing ? [...some.values(), ...fresh].sort((a, b) => (a.trial ?? 0) - (b.trial ?? 0)) : fresh,
      };
    };
    if (!admission) return (await runMissing()).all;
    const d = await admission.admit();
    if (!d.ok) return { notRun: d.reason ?? 'not admitted' };
    let cost: number | null = null;
    try {
      const { fresh, all } = await runMissing();
      cost = caseSpent(fresh);
      return all;
    } finally {
      admission.settle(cost);
    }
  };
}
