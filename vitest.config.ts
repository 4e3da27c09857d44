import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { skillopt } from 'skillopt/vitest';

const librarySource = fileURLToPath(new URL('./src/index.ts', import.meta.url));

export default defineConfig({
  // Benchmarks import the library as a user would (`from 'skillopt'`); inside this repo that is the source.
  resolve: { alias: { skillopt: librarySource } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['**/*.skill.test.ts', '**/node_modules/**'],
          benchmark: { include: ['test/**/*.bench.ts'] },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The skill benchmarks: run them with `npx skillopt test` (or `npx vitest --project skills`).
        extends: true,
        plugins: [skillopt()],
        test: { name: 'skills', include: ['benchmarks/**/*.skill.test.ts'] },
      },
    ],
  },
});
