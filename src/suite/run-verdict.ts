/** The shape of a run's verdict and the exit code each verdict maps to (decided in verdict.ts, recorded in the summary). */

export type Verdict = 'pass' | 'fail' | 'inconclusive';

/** Exit codes of every command: 0 pass, 1 fail, 2 usage or configuration error, 3 inconclusive. */
export const EXIT_CODES = { pass: 0, fail: 1, usage: 2, inconclusive: 3 } as const;

export interface RunVerdict {
  verdict: Verdict;
  exit_code: number;
  /** One line: why, naming the first concrete failure (null on a plain pass). */
  reason: string | null;
  /** The smallest next step for a person (null on pass: the command decides what to suggest). */
  next: string | null;
}
