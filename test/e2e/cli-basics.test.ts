/**
 * The `skillopt` binary: exit codes and which stream gets what (help on stdout, exit 0; an unknown command or
 * flag, and a config error, one line on stderr, exit 2). What each command prints is tested in process in
 * test/cli/cli-basics.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, skillopt, tempDirs, writeConfig } from './helpers.ts';

const tmp = tempDirs('basics');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

describe('skillopt binary', () => {
  test('--help lists every command on stdout and exits 0', async () => {
    const r = await skillopt(['--help']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    for (const cmd of ['test', 'train', 'eval', 'config', 'sim-server']) {
      expect(r.stdout).toMatch(new RegExp(`^\\s+${cmd}\\s+\\S`, 'm'));
    }
  });

  test('an unknown command exits 2 with one line on stderr naming it and the command it meant', async () => {
    const r = await skillopt(['evl']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe("skillopt: error: unknown command 'evl' (did you mean eval?); see skillopt --help");
  });

  test('an unknown flag and a config error: exit 2, one line on stderr, nothing on stdout', async () => {
    const flag = await skillopt(['train', '--trials', '3']);
    expect(flag.code).toBe(2);
    expect(flag.stdout).toBe('');
    expect(flag.stderr.trim()).toBe(
      "skillopt: error: unknown flag '--trials' for skillopt train; see skillopt train --help",
    );
    const file = writeConfig(tmp.make('cfg'), 'typo.yaml', 'train:\n  num_epoch: 2\n');
    const config = await skillopt(['config', '--config', file]);
    expect(config.code).toBe(2);
    expect(config.stdout).toBe('');
    expect(config.stderr.trim().split('\n')).toHaveLength(1);
    expect(config.stderr).toContain('train.num_epoch');
  });
});
