/**
 * The throwaway project the benchmarks run: one suite of `cases` synthetic tickets (answers label0…label6
 * by the trigger Code0…Code6), a skill with `rules` of those rules, and a vitest.config.ts that loads
 * skillopt from the repo's dist/ as an installed package would be (externalized, not transformed).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('..', import.meta.url));

export function writeBenchProject(dir, { cases = 1000, rules = 7 } = {}) {
  mkdirSync(join(dir, 'suite'), { recursive: true });
  const distIndex = relative(dir, join(REPO, 'dist', 'index.js')).split('\\').join('/');
  writeFileSync(join(dir, 'vitest.config.ts'), `
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { skillopt } from 'skillopt/vitest';
export default defineConfig({
  resolve: { alias: { skillopt: fileURLToPath(new URL(${JSON.stringify(distIndex)}, import.meta.url)) } },
  test: { server: { deps: { external: [/\\/dist\\//] } }, projects: [{ extends: true, plugins: [skillopt()], test: { name: 'skills', include: ['suite/*.skill.test.ts'] } }] },
});
`);
  const tasks = Array.from({ length: cases }, (_, i) => ({ id: `c${String(i).padStart(5, '0')}`, input: `Ticket ${i}: the job failed with Code${i % 7}.`, expected: `label${i % 7}` }));
  writeFileSync(join(dir, 'suite', 'tasks.json'), JSON.stringify(tasks));
  writeFileSync(join(dir, 'suite', 'skill.md'), Array.from({ length: rules }, (_, k) => `- When the input mentions \`Code${k}\`, answer \`label${k}\`.`).join('\n') + '\n');
  writeFileSync(join(dir, 'suite', 'bench.skill.test.ts'), `
import { defineSkillSuite, exactMatch } from 'skillopt';
defineSkillSuite({ name: 'bench', tasks: 'suite/tasks.json', skill: 'suite/skill.md', scorer: exactMatch() });
`);
}
