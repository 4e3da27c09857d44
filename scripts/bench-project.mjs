/**
 * The throwaway projects the benchmarks run: one suite of `cases` synthetic tickets (answers label0…label6
 * by the trigger Code0…Code6) and a skill with `rules` of those rules.
 *
 * - writeBenchProject: a vitest.config.ts that loads skillopt from the repo's dist/ as an installed package
 *   would be (externalized, not transformed), for benchmarks that drive skillopt's modules in-process.
 * - writeInstalledProject: a project that installs the packed package (installPacked: `npm pack` of this
 *   repo, unpacked into node_modules/skillopt with its bin linked, as `npm install` does; its dependencies
 *   are this repo's node_modules, linked), for benchmarks that run `node node_modules/.bin/skillopt` as a
 *   user does (and for the README test's own-project section).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('..', import.meta.url));

function writeSuite(dir, { cases, rules }) {
  mkdirSync(join(dir, 'suite'), { recursive: true });
  const tasks = Array.from({ length: cases }, (_, i) => ({
    id: `c${String(i).padStart(5, '0')}`,
    input: `Ticket ${i}: the job failed with Code${i % 7}.`,
    expected: `label${i % 7}`,
  }));
  writeFileSync(join(dir, 'suite', 'tasks.json'), JSON.stringify(tasks));
  writeFileSync(
    join(dir, 'suite', 'skill.md'),
    Array.from({ length: rules }, (_, k) => `- When the input mentions \`Code${k}\`, answer \`label${k}\`.`).join(
      '\n',
    ) + '\n',
  );
  writeFileSync(
    join(dir, 'suite', 'bench.skill.test.ts'),
    `
import { defineSkillSuite, exactMatch } from 'skillopt';
defineSkillSuite({ name: 'bench', tasks: 'suite/tasks.json', skill: 'suite/skill.md', scorer: exactMatch() });
`,
  );
}

export function writeBenchProject(dir, { cases = 1000, rules = 7 } = {}) {
  writeSuite(dir, { cases, rules });
  const distIndex = relative(dir, join(REPO, 'dist', 'index.js'))
    .split('\\')
    .join('/');
  writeFileSync(
    join(dir, 'vitest.config.ts'),
    `
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { skillopt } from 'skillopt/vitest';
export default defineConfig({
  resolve: { alias: { skillopt: fileURLToPath(new URL(${JSON.stringify(distIndex)}, import.meta.url)) } },
  test: { server: { deps: { external: [/\\/dist\\//] } }, projects: [{ extends: true, plugins: [skillopt()], test: { name: 'skills', include: ['suite/*.skill.test.ts'] } }] },
});
`,
  );
}

/** A user's project with skillopt installed from the packed package (build dist/ first). */
export function writeInstalledProject(dir, { cases = 1000, rules = 7 } = {}) {
  writeSuite(dir, { cases, rules });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'bench-app', private: true, type: 'module' }, null, 2),
  );
  writeFileSync(
    join(dir, 'vitest.config.ts'),
    `
import { defineConfig } from 'vitest/config';
import { skillopt } from 'skillopt/vitest';
export default defineConfig({
  test: { projects: [{ extends: true, plugins: [skillopt()], test: { name: 'skills', include: ['suite/*.skill.test.ts'] } }] },
});
`,
  );
  installPacked(dir);
}

/**
 * Install skillopt into the project `dir` as `npm i -D <tarball>` would, with no registry: the packed
 * package (build dist/ first) unpacked into node_modules/skillopt with its bin linked, and every package of
 * this repository's node_modules (its dependencies, Vitest among them) linked beside it.
 */
export function installPacked(dir) {
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '.bin'), { recursive: true });
  // --ignore-scripts: pack the dist/ that is there (`prepare` would rebuild it)
  const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], {
    cwd: REPO,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .pop();
  execFileSync('tar', ['-xzf', join(dir, tarball), '-C', dir]);
  renameSync(join(dir, 'package'), join(modules, 'skillopt'));
  rmSync(join(dir, tarball));
  for (const name of readdirSync(join(REPO, 'node_modules'))) {
    if (name.startsWith('.') || name === 'skillopt') continue;
    symlinkSync(join(REPO, 'node_modules', name), join(modules, name));
  }
  symlinkSync('../skillopt/bin/skillopt.js', join(modules, '.bin', 'skillopt'));
}
