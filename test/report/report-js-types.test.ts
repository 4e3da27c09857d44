/**
 * The report page's script (src/report/assets/report.js, inlined as is) is type-checked: `// @ts-check`, JSDoc
 * types, and tsc run over it with the DOM library by its own jsconfig.json (`npm run typecheck` runs it too).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, test } from 'vitest';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const script = new URL('../../src/report/assets/report.js', import.meta.url);
const project = new URL('../../src/report/assets/jsconfig.json', import.meta.url);

test('report.js opts into checking and passes tsc', () => {
  expect(readFileSync(script, 'utf8').split('\n', 1)[0]).toBe('// @ts-check');
  const run = spawnSync(process.execPath, [tsc, '-p', project.pathname], { encoding: 'utf8' });
  expect(run.stdout + run.stderr).toBe('');
  expect(run.status).toBe(0);
});
