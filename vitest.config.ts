import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { skillopt } from 'skillopt/vitest';

// The compiled library (`npm run build`), as an installed package is: the suites' worker thread imports it
// as is. Aliased to src/ instead, Vite transforms every library module a suite reaches (about 60, with their
// source maps), which cost 70 MiB of peak RSS per `skillopt test` (docs/memory.md).
const library = fileURLToPath(new URL('./dist/index.js', import.meta.url));

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['**/*.skill.test.ts', '**/node_modules/**'],
          // each file: a temp directory of its own that it must leave empty, and no network beyond loopback
          setupFiles: ['./test/setup/guard.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The micro-benchmarks (`npm run bench`): tinybench inside a test each, printing its table (test/bench/benchmark.ts).
        extends: true,
        test: { name: 'bench', include: ['test/bench/*.bench.ts'], setupFiles: ['./test/setup/guard.ts'], testTimeout: 300_000 },
      },
      {
        // The skill benchmarks: run them with `npx skillopt test` (or `npx vitest --project skills`), after
        // `npm run build`: a change to src/ reaches them through dist/.
        // Benchmarks import the library as a user would (`from 'skillopt'`), externalized (not transformed).
        extends: true,
        plugins: [skillopt()],
        resolve: { alias: { skillopt: library } },
        test: { name: 'skills', include: ['benchmarks/**/*.skill.test.ts'], server: { deps: { external: [/\/dist\//] } } },
      },
    ],
  },
});
