import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { skillopt } from 'skillopt/vitest';

// The compiled library (`npm run build`), as an installed package is: the suites' worker thread imports it
// as is. Aliased to src/ instead, Vite transforms every library module a suite reaches (about 60, with their
// source maps), which cost 70 MiB of peak RSS per `skillopt test` (docs/memory.md).
const library = fileURLToPath(new URL('./dist/index.js', import.meta.url));

/**
 * The three projects `npm test` runs (docs/testing.md):
 * - unit: in process, no child processes beyond a quick `node -e` or `git apply`; run on every change.
 * - e2e: files that spawn the CLI or Vitest, and the tests that read the shared runs its global setup makes
 *   once (test/setup/fixture-runs.ts). One test at a time per file, at most one file per core.
 * - browser: the HTML reports in Chromium (test/report/browser.test.ts).
 */
const E2E = [
  'test/e2e/**/*.test.ts',
  // these spawn `skillopt test`, Vitest or tsc
  'test/vitest/case-meta.test.ts',
  'test/vitest/console-reporter.test.ts',
  'test/setup/guard.test.ts',
  'test/report/report-js-types.test.ts',
];
const BROWSER = ['test/report/browser.test.ts'];
const CORES = Math.max(1, availableParallelism());
/**
 * Test files that run the built CLI in their own process (`skillopt()` in test/e2e/helpers.ts): dist/ is
 * loaded by Node, not transformed, so it is the same code the binary runs; each file is a child process
 * (`forks`), since a command run in process changes the working directory while it runs.
 */
const RUNS_THE_CLI: { pool: 'forks'; server: { deps: { external: RegExp[] } } } = {
  pool: 'forks',
  server: { deps: { external: [/\/dist\//] } },
};
/**
 * In those projects a test's import of the library's source (`../../src/x.ts`) loads the build
 * (`../../dist/x.js`) instead: the code the binary runs, loaded once per worker by Node. Their files share
 * a worker's modules (`isolate: false`), and a module Vite had loaded for an earlier file could not import
 * lazily once that file's module runner was torn down.
 */
const BUILT_LIBRARY = { alias: [{ find: /^((?:\.\.\/)+)src\/(.+)\.ts$/, replacement: '$1dist/$2.js' }] };

export default defineConfig({
  test: {
    // no more test files at once than cores (a spawning file is one process at a time, see e2e below)
    maxWorkers: CORES,
    env: { NO_COLOR: '1' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['**/*.skill.test.ts', '**/node_modules/**', ...E2E, ...BROWSER],
          // each file: a temp directory of its own that it must leave empty, and no network beyond loopback
          setupFiles: ['./test/setup/guard.ts'],
          // a guard against a hang, not a limit: a loaded 2-core machine is slow
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      {
        extends: true,
        resolve: BUILT_LIBRARY,
        test: {
          name: 'e2e',
          include: E2E,
          ...RUNS_THE_CLI,
          // A worker's files share its modules, so the CLI, Vitest and Vite that the in-process commands load
          // are loaded once per worker, not once per file (about 100 s of CPU). Each file still gets the
          // guard's temp directory; a shared helper registers its cleanups through test/helpers/cleanup.ts,
          // never hooks at its top level.
          isolate: false,
          setupFiles: ['./test/setup/guard.ts'],
          globalSetup: ['./test/setup/fixture-runs.ts'],
          // a spawning test runs alone in its file (describe.concurrent included): with maxWorkers, at most
          // one CLI process per core. Timeouts are generous: a loaded 2-core machine is slow, never wrong.
          maxConcurrency: 1,
          sequence: { concurrent: false },
          testTimeout: 600_000,
          hookTimeout: 600_000,
        },
      },
      {
        extends: true,
        resolve: BUILT_LIBRARY,
        test: {
          name: 'browser',
          include: BROWSER,
          ...RUNS_THE_CLI,
          setupFiles: ['./test/setup/guard.ts'],
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
      {
        // The micro-benchmarks (`npm run bench`): tinybench inside a test each, printing its table (test/bench/benchmark.ts).
        extends: true,
        test: {
          name: 'bench',
          include: ['test/bench/*.bench.ts'],
          setupFiles: ['./test/setup/guard.ts'],
          testTimeout: 300_000,
        },
      },
      {
        // The skill benchmarks: run them with `npx skillopt test` (or `npx vitest --project skills`), after
        // `npm run build`: a change to src/ reaches them through dist/.
        // Benchmarks import the library as a user would (`from 'skillopt'`), externalized (not transformed).
        extends: true,
        plugins: [skillopt()],
        resolve: { alias: { skillopt: library } },
        test: {
          name: 'skills',
          include: ['benchmarks/**/*.skill.test.ts'],
          server: { deps: { external: [/\/dist\//] } },
        },
      },
    ],
  },
});
