/**
 * skillopt in a user's own project, on the lowest and the highest Vitest of its peer range
 * (docs/api.md#installing): the packed package (`npm pack`) installed by npm itself beside the project's own
 * Vitest and zod, then the project's suites run with plain `npx vitest run` and with `npx skillopt test`.
 *
 * The versions are the ones `npm ci` installed under test/vitest-versions/; npm resolves them from a registry
 * on 127.0.0.1 that serves what this repository's lock file records, and takes the tarballs from its own
 * cache (test/helpers/local-registry.ts), so nothing is downloaded: every process runs with the test guard,
 * which refuses any connection beyond loopback.
 *
 * - lowest: a project that has `vitest` and `zod` at the bottom of the ranges installed first, then skillopt;
 * - highest: the README's install command (skillopt, `vitest@^4`, `zod@^4` together), which resolves to the
 *   highest versions there are.
 * Either way the project ends with one vitest and one zod (`npm ls`): skillopt uses the project's own.
 * Vitest 4.0.0 is left out of the range: with the Vite 7 npm installs for it today it runs no test file
 * ("Unknown method: getBuiltins"), with or without skillopt; 4.0.1 fixed that.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLocalRegistry, type LocalRegistry } from '../helpers/local-registry.ts';
import { assertBuilt, readJson, REPO, run, tempDirs, type RunResult } from './helpers.ts';

const tmp = tempDirs('vitest-versions');
let registry: LocalRegistry;
let tarball: string;

const manifest = (path: string) =>
  JSON.parse(readFileSync(join(REPO, path), 'utf8')) as {
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
  };
const pkg = manifest('package.json');
const GROUPS = {
  lowest: manifest('test/vitest-versions/lowest/package.json').dependencies,
  highest: manifest('test/vitest-versions/highest/package.json').dependencies,
};

/** The README's install line (its section "Using skillopt in your own project"), as npm arguments after `npm i -D`. */
function readmeInstall(): string[] {
  const line = /^npm i -D (\S+\.tgz) (.+?)\s*(#.*)?$/m.exec(readFileSync(join(REPO, 'README.md'), 'utf8'));
  if (!line) throw new Error('README.md has no `npm i -D <skillopt tarball> …` line');
  return line[2]!.split(/\s+/);
}

beforeAll(async () => {
  assertBuilt();
  registry = await startLocalRegistry(REPO);
  const dest = tmp.make('pack');
  // --ignore-scripts: pack the dist/ that is there (`prepare` would rebuild it)
  const name = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dest], {
    cwd: REPO,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .pop()!;
  tarball = join(dest, name);
});
afterAll(async () => {
  await registry?.close();
  tmp.cleanup();
});

function npm(args: string[], cwd: string): Promise<RunResult> {
  return run('npm', args, {
    cwd,
    env: {
      npm_config_registry: `${registry.url}/`,
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      // a proxy of the machine's must not carry the requests to the loopback registry
      npm_config_noproxy: '127.0.0.1,localhost',
      NO_PROXY: '127.0.0.1,localhost',
    },
  });
}

const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'user-project', private: true, type: 'module' }, null, 2),
  'vitest.config.ts': `import { defineConfig } from 'vitest/config';
import { skillopt } from 'skillopt/vitest';

export default defineConfig({
  test: { projects: [{ extends: true, plugins: [skillopt()], test: { name: 'skills', include: ['skills/**/*.skill.test.ts'] } }] },
});
`,
  'skillopt.yaml': 'model: { backend: simulated }\n',
  'skills/hello/tasks.json': JSON.stringify([
    { id: 't1', input: 'The nightly job failed with Code0.', expected: 'label0' },
    { id: 't2', input: 'The deploy stopped with Code1.', expected: 'label1' },
  ]),
  'skills/hello/skill.md':
    '- When the input mentions `Code0`, answer `label0`.\n- When the input mentions `Code1`, answer `label1`.\n',
  'skills/hello/hello.skill.test.ts': `import { defineSkillSuite, exactMatch } from 'skillopt';

defineSkillSuite({ name: 'hello', tasks: 'skills/hello/tasks.json', skill: 'skills/hello/skill.md', scorer: exactMatch() });
`,
  // the tool's input schema is the project's zod, parsed and turned into JSON Schema by skillopt
  'skills/orders/tasks.json': JSON.stringify([
    { id: 'o1', input: 'Where is my order ORD-1001?', expected: 'shipped' },
    { id: 'o2', input: 'Has order ORD-2002 left the warehouse?', expected: 'shipped' },
  ]),
  'skills/orders/skill.md':
    '- When the input mentions `ORD-`, call `lookup_order` with `{"id": "<id>"}`.\n- When the input mentions `order`, answer `shipped`.\n',
  'skills/orders/orders.skill.test.ts': `import { defineSkillSuite, exactMatch, tool, toolCalls, weighted } from 'skillopt';
import { z } from 'zod';

defineSkillSuite({
  name: 'orders',
  tasks: 'skills/orders/tasks.json',
  skill: 'skills/orders/skill.md',
  tools: {
    lookup_order: tool({ description: 'An order by id', input: z.object({ id: z.string().startsWith('ORD-') }), handler: ({ id }) => ({ id, status: 'shipped' }) }),
  },
  scorer: weighted([{ scorer: exactMatch(), weight: 1 }, { scorer: toolCalls({ expected: [{ name: 'lookup_order' }] }), weight: 1 }]),
});
`,
};

function writeProject(dir: string): void {
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Every installed copy of each package `npm ls` is asked about, as `name@version` (one line per copy). */
async function installedCopies(dir: string, names: string[]): Promise<string[]> {
  const r = await npm(['ls', ...names, '--all', '--parseable', '--long'], dir);
  expect(r.code, `npm ls (a missing or invalid peer fails it):\n${r.all}`).toBe(0);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(':')[1]!)
    .filter((id) => names.includes(id.replace(/@[^@]+$/, '')));
}

/**
 * Both commands run the project's suites on its own Vitest and pass every case; so does `skillopt eval`,
 * which reruns them in one long-lived Vitest (the optimizer's way).
 */
async function runCommands(dir: string, vitestVersion: string): Promise<void> {
  const runs = {
    'npx vitest run': await run('npx', ['vitest', 'run'], {
      cwd: dir,
      env: { SKILLOPT_CFG_OPTIONS: 'env.out_root=out/vitest' },
    }),
    'npx skillopt test': await run('npx', ['skillopt', 'test', '--cfg-options', 'env.out_root=out/skillopt'], {
      cwd: dir,
    }),
  };
  for (const [command, r] of Object.entries(runs)) {
    const out = command === 'npx vitest run' ? 'vitest' : 'skillopt';
    expect(r.code, `${command}:\n${r.all.slice(-4000)}`).toBe(0);
    expect(r.stdout, command).toMatch(new RegExp(`RUN\\s+v${vitestVersion.replace(/\./g, '\\.')} `));
    // every case of both suites, each with its own record
    expect(readJson(join(dir, 'out', out, 'summary.json')).overall, command).toMatchObject({
      n: 4,
      passed: 4,
      errored: 0,
    });
  }
  const evaluation = await run(
    'npx',
    [
      'skillopt',
      'eval',
      '--skill',
      'skills/orders/skill.md',
      '--split',
      'all',
      '--cfg-options',
      'env.name=orders',
      'env.out_root=out/eval',
    ],
    { cwd: dir },
  );
  expect(evaluation.code, `npx skillopt eval:\n${evaluation.all.slice(-4000)}`).toBe(0);
  expect(readJson(join(dir, 'out', 'eval', 'eval_summary.json')), 'npx skillopt eval').toMatchObject({
    n_items: 2,
    n_scored: 2,
    pass_rate: 1,
  });
}

describe('the packed skillopt in a user project, on each end of the Vitest peer range', () => {
  test('the peer ranges start at the lowest versions tested and take the highest', () => {
    expect(pkg.peerDependencies.vitest).toBe(`>=${GROUPS.lowest.vitest} <5`);
    expect(pkg.peerDependencies.zod).toBe(`>=${GROUPS.lowest.zod} <5`);
    expect(GROUPS.highest.vitest).toMatch(/^4\./);
    expect(GROUPS.highest.zod).toMatch(/^4\./);
    // the registry serves exactly the two ends, so `vitest@^4` and skillopt's zod peer resolve to the highest
    expect(registry.versions('vitest')).toEqual(
      [GROUPS.lowest.vitest, GROUPS.highest.vitest].filter((v, i, a) => a.indexOf(v) === i),
    );
  });

  test(`lowest: a project with vitest@${GROUPS.lowest.vitest} and zod@${GROUPS.lowest.zod} installs skillopt and keeps one of each`, async () => {
    const dir = tmp.make('lowest');
    writeProject(dir);
    const first = await npm(
      ['install', '--save-dev', `vitest@${GROUPS.lowest.vitest}`, `zod@${GROUPS.lowest.zod}`],
      dir,
    );
    expect(first.code, first.all).toBe(0);
    const then = await npm(['install', '--save-dev', tarball], dir);
    expect(then.code, then.all).toBe(0);
    expect(registry.misses).toEqual([]);
    expect((await installedCopies(dir, ['vitest', 'zod'])).sort()).toEqual([
      `vitest@${GROUPS.lowest.vitest}`,
      `zod@${GROUPS.lowest.zod}`,
    ]);
    await runCommands(dir, GROUPS.lowest.vitest!);
  });

  test('highest: the README install command takes the highest Vitest and zod, and the project keeps one of each', async () => {
    const dir = tmp.make('highest');
    writeProject(dir);
    const r = await npm(['install', '--save-dev', tarball, ...readmeInstall()], dir);
    expect(r.code, r.all).toBe(0);
    expect(registry.misses).toEqual([]);
    expect((await installedCopies(dir, ['vitest', 'zod'])).sort()).toEqual([
      `vitest@${GROUPS.highest.vitest}`,
      `zod@${GROUPS.highest.zod}`,
    ]);
    await runCommands(dir, GROUPS.highest.vitest!);
  });
});
