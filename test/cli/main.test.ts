/** The `skillopt` dispatcher: a mistyped command is one line with the nearest command, exit 2. */
import { expect, test } from 'vitest';
import { cli } from '../helpers/cli.ts';

test('an unknown command: one line naming it, with a did-you-mean when a command is near, exit 2', async () => {
  const near = await cli(['evl', '--split', 'test']);
  expect(near.code).toBe(2);
  expect(near.stdout).toBe('');
  expect(near.stderr).toBe("skillopt: error: unknown command 'evl' (did you mean eval?); see skillopt --help\n");
  expect((await cli(['sim-sever'])).stderr).toBe(
    "skillopt: error: unknown command 'sim-sever' (did you mean sim-server?); see skillopt --help\n",
  );
  expect((await cli(['frobnicate'])).stderr).toBe(
    "skillopt: error: unknown command 'frobnicate'; see skillopt --help\n",
  );
});

test('main runs a command with the streams and environment it is given, and prints an error rather than throwing it', async () => {
  const help = await cli(['--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('Commands:');
  expect(help.stderr).toBe('');
  // SKILLOPT_DEBUG read from the given environment, not this process's: the stack goes to the given stderr
  const debug = await cli(['frobnicate'], { env: { SKILLOPT_DEBUG: '1' } });
  expect(debug.code).toBe(2);
  expect(debug.stderr).toMatch(/SkillOptError: unknown command 'frobnicate'[\s\S]*at /);
  expect(process.env.SKILLOPT_DEBUG).toBeUndefined();
});
