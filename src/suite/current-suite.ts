/**
 * The suite being collected, from where the running Vitest offers it: `TestRunner.getCurrentSuite` of the
 * `vitest` entry since 4.1 (which deprecates `vitest/suite`, with a warning on import), `getCurrentSuite` of
 * `vitest/suite` in 4.0. Both are public; the lowest and the highest Vitest of the peer range are tested
 * (test/e2e/vitest-versions.test.ts).
 */
import * as vitest from 'vitest';
import type { SuiteCollector } from 'vitest';

type GetCurrentSuite = () => SuiteCollector;

const fromRoot = (vitest as { TestRunner?: { getCurrentSuite?: GetCurrentSuite } }).TestRunner;
const getCurrentSuite: GetCurrentSuite = fromRoot?.getCurrentSuite ? () => fromRoot.getCurrentSuite!() : (await import('vitest/suite')).getCurrentSuite;

/** The collector of the suite (describe block, or the file's own) whose definition is running. */
export function currentSuite(): SuiteCollector {
  return getCurrentSuite();
}
