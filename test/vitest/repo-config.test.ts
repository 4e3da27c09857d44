/**
 * The repository's own benchmarks load skillopt as an installed package is loaded: from dist/, externalized,
 * so the suites' worker thread does not have Vite transform the library's sources (docs/memory.md).
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import config from '../../vitest.config.ts';
import { REPO } from '../e2e/helpers.ts';

test("the skills project resolves 'skillopt' to dist/index.js and leaves it untransformed", () => {
  const projects = (config.test?.projects ?? []) as Array<{
    resolve?: { alias?: Record<string, string> };
    test?: { name?: string; server?: { deps?: { external?: RegExp[] } } };
  }>;
  const skills = projects.find((p) => p.test?.name === 'skills');
  const library = skills?.resolve?.alias?.['skillopt'];
  expect(library).toBe(join(REPO, 'dist', 'index.js'));
  expect(skills?.test?.server?.deps?.external?.some((re) => re.test(library!))).toBe(true);
});
