/**
 * Cleanups a shared test helper registers: `onTestEnd` runs when the current test ends, `onFileEnd` when the
 * current test file ends. test/setup/guard.ts, which every project runs for each test file, runs them
 * (before it checks the file left nothing in its temp directory). A helper module must not register hooks
 * of its own at its top level: the unit project does not isolate its files (vitest.config.ts), so such a
 * module is evaluated once per worker and its hooks would belong to the first file that imported it.
 */
type Cleanup = () => unknown;

const afterTest: Cleanup[] = [];
const afterFile: Cleanup[] = [];

/** Run `fn` when the current test ends. */
export function onTestEnd(fn: Cleanup): void {
  afterTest.push(fn);
}

/** Run `fn` when the current test file ends. */
export function onFileEnd(fn: Cleanup): void {
  afterFile.push(fn);
}

async function drain(list: Cleanup[]): Promise<void> {
  for (const fn of list.splice(0).reverse()) await fn();
}

/** For test/setup/guard.ts: the cleanups of the test that just ended. */
export const runTestEnd = (): Promise<void> => drain(afterTest);
/** For test/setup/guard.ts: the cleanups of the file that is ending (and of a test that left any). */
export const runFileEnd = async (): Promise<void> => {
  await drain(afterTest);
  await drain(afterFile);
};
