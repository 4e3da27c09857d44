/**
 * The `skillopt` command itself, run in process (test/helpers/cli.ts): help, per-command help, unknown
 * flags, and `skillopt config` (validation errors naming file and key; --cfg-options reaching the resolved
 * config). test/e2e/cli-basics.test.ts runs the binary for its exit codes and streams.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { tempDirs, writeConfig } from '../e2e/helpers.ts';
import { cli } from '../helpers/cli.ts';

const tmp = tempDirs('basics');
afterAll(() => tmp.cleanup());

describe.concurrent('skillopt CLI basics', () => {
  test('--help lists every command and exits 0', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of ['test', 'train', 'eval', 'config', 'sim-server']) {
      expect(r.stdout).toMatch(new RegExp(`^\\s+${cmd}\\s+\\S`, 'm'));
    }
  });

  test('<command> --help prints the usage of that command', async () => {
    const [t, e] = await Promise.all([cli(['test', '--help']), cli(['eval', '--help'])]);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('Usage: skillopt test');
    expect(t.stdout).toContain('--cfg-options');
    expect(e.code).toBe(0);
    expect(e.stdout).toContain('Usage: skillopt eval --config C --skill S');
    expect(e.stdout).toContain('valid_seen');
  });

  test('a flag the command does not define exits 2 before any work, with the nearest flag it does', async () => {
    const [trials, typo, vitestOnly, testTypo] = await Promise.all([
      cli(['train', '--trials', '3']),
      cli(['eval', '--config', 'c.yaml', '--skill', 's.md', '--cfg-option', 'env.limit=2']),
      cli(['train', '--reporter=junit']),
      cli(['test', '--trails', '3']),
    ]);
    const oneLine = (r: { code: number | null; stdout: string; stderr: string }) => {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      return r.stderr.trim();
    };
    expect(oneLine(trials)).toContain("unknown flag '--trials' for skillopt train; see skillopt train --help");
    expect(oneLine(typo)).toContain("unknown flag '--cfg-option' for skillopt eval (did you mean --cfg-options?)");
    // Vitest's flags go on to Vitest from `skillopt test` only
    expect(oneLine(vitestOnly)).toContain("unknown flag '--reporter' for skillopt train");
    expect(oneLine(testTypo)).toContain("unknown flag '--trails' for skillopt test (did you mean --trials?)");
  });

  test('every command that reads a config lists --model-cache in its help', async () => {
    const helps = await Promise.all(
      ['test', 'train', 'eval', 'compare', 'cache', 'config'].map((c) => cli([c, '--help'])),
    );
    for (const h of helps) {
      expect(h.code).toBe(0);
      expect(h.stdout).toMatch(/^ {2}--model-cache rw\|ro\|off\|replay\b/m);
    }
  });

  test('an unknown command exits 2 with one line naming it and the command it meant', async () => {
    const r = await cli(['evl']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe("skillopt: error: unknown command 'evl' (did you mean eval?); see skillopt --help");
  });

  test('config: a mistyped key is one line naming the file and the key path, exit != 0', async () => {
    const dir = tmp.make('cfg');
    const file = writeConfig(dir, 'typo.yaml', 'train:\n  num_epoch: 2\n');
    const r = await cli(['config', '--config', file]);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(file);
    expect(lines[0]).toContain('train.num_epoch');
    expect(lines[0]).not.toMatch(/\bat .*\(.*:\d+:\d+\)/); // no stack frame
  });

  test('config: --cfg-options train.num_epochs=2 overrides the default (4) in the resolved YAML', async () => {
    const [plain, overridden] = await Promise.all([
      cli(['config']),
      cli(['config', '--cfg-options', 'train.num_epochs=2']),
    ]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^ {2}num_epochs: 4$/m);
    expect(overridden.code).toBe(0);
    expect(overridden.stdout).toMatch(/^ {2}num_epochs: 2$/m);
  });
});
