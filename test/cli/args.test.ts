/**
 * Flags declared once: the parser and the help both come from a command's table; a flag the command does
 * not define stops it with a did-you-mean, except the flags Vitest's own CLI defines, which `test` hands on.
 */
import { describe, expect, test } from 'vitest';
import { defineCommand, helpText, parseFlags } from '../../src/cli/args.ts';
import { CONFIG_FLAGS } from '../../src/cli/common.ts';
import { isVitestFlag, vitestFlags } from '../../src/vitest/cli-flags.ts';
import { SkillOptError } from '../../src/util/errors.ts';

const SPEC = defineCommand({
  name: 'demo',
  operands: '<dir>',
  flags: {
    ...CONFIG_FLAGS,
    optimize: { type: 'boolean', help: 'optimize' },
    trials: { type: 'number', arg: 'K', help: 'trials' },
    port: { type: 'number', default: 8000, help: 'port' },
    skill: { type: 'string', arg: 'S', short: 's', help: 'skill' },
  },
});

const vitestPassOn = async () => {
  const flags = await vitestFlags();
  return { accepts: (name: string) => isVitestFlag(flags, name), names: flags.long };
};

function errorOf(fn: () => unknown): SkillOptError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SkillOptError);
    return e as SkillOptError;
  }
  throw new Error('expected a SkillOptError');
}

describe('parseFlags', () => {
  test('typed values, defaults, a list up to its first word without "=", positionals', () => {
    const { values, positionals, passed } = parseFlags(SPEC, [
      'dir',
      '--cfg-options',
      'a=1',
      'b=2',
      'more',
      '--trials=3',
      '-s',
      'x.md',
      '--optimize',
    ]);
    expect(values).toEqual({
      config: undefined,
      'cfg-options': ['a=1', 'b=2'],
      'model-cache': undefined,
      optimize: true,
      trials: 3,
      port: 8000,
      skill: 'x.md',
    });
    expect(positionals).toEqual(['dir', 'more']);
    expect(passed).toEqual([]);
  });

  test('a repeated value flag keeps the last; a list accumulates; --flag=false turns a boolean off', () => {
    const { values } = parseFlags(SPEC, [
      '--config',
      'a.yaml',
      '--config=b.yaml',
      '--cfg-options',
      'a=1',
      '--cfg-options=b=2',
      '--optimize',
      '--optimize=false',
    ]);
    expect(values).toMatchObject({ config: 'b.yaml', 'cfg-options': ['a=1', 'b=2'], optimize: false });
  });

  test('bad values are one line naming the flag', () => {
    expect(errorOf(() => parseFlags(SPEC, ['--trials', 'many'])).message).toBe("--trials must be a number, got 'many'");
    expect(errorOf(() => parseFlags(SPEC, ['--config'])).message).toBe('--config needs a value');
    expect(errorOf(() => parseFlags(SPEC, ['--config', '--optimize'])).message).toBe('--config needs a value');
    expect(errorOf(() => parseFlags(SPEC, ['--optimize=maybe'])).message).toBe(
      "--optimize takes no value, got 'maybe'",
    );
  });

  test('a list flag given nothing is a usage error naming it (not an empty list)', () => {
    for (const argv of [
      ['--cfg-options'],
      ['--cfg-options', '--optimize'],
      ['dir', '--cfg-options', '--', 'x'],
      ['--cfg-options', 'notakv'],
    ]) {
      const e = errorOf(() => parseFlags(SPEC, argv));
      expect(e.exitCode).toBe(2);
      expect(e.message).toBe(`--cfg-options needs at least one k=v${argv.includes('notakv') ? ", got 'notakv'" : ''}`);
    }
    expect(parseFlags(SPEC, ['--cfg-options', 'a=1', '--cfg-options=b=2']).values['cfg-options']).toEqual([
      'a=1',
      'b=2',
    ]);
  });

  test('a flag the command does not define: exit 2 with the nearest one it does', () => {
    const e = errorOf(() => parseFlags(SPEC, ['--cfg-option', 'a=1']));
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe(
      "unknown flag '--cfg-option' for skillopt demo (did you mean --cfg-options?); see skillopt demo --help",
    );
    expect(errorOf(() => parseFlags(SPEC, ['--frobnicate'])).message).toBe(
      "unknown flag '--frobnicate' for skillopt demo; see skillopt demo --help",
    );
    // Vitest's flags are not this command's: without a pass-on they are refused like any other
    expect(errorOf(() => parseFlags(SPEC, ['--reporter=junit'])).message).toContain("unknown flag '--reporter'");
    expect(errorOf(() => parseFlags(SPEC, ['-t', 'x'])).message).toContain("unknown flag '-t'");
  });
});

describe("Vitest's flags, read from the installed Vitest", () => {
  test('knows -t, --reporter, --shard, --outputFile.junit, --no-color and not --trials', async () => {
    const flags = await vitestFlags();
    for (const name of [
      't',
      'testNamePattern',
      'test-name-pattern',
      'reporter',
      'shard',
      'merge-reports',
      'outputFile.junit',
      'output-file.junit',
      'no-color',
      'watch',
    ]) {
      expect(isVitestFlag(flags, name), name).toBe(true);
    }
    for (const name of ['trials', 'cfg-options', 'frobnicate']) expect(isVitestFlag(flags, name), name).toBe(false);
    expect(flags.long).toContain('test-name-pattern');
  });

  test("with Vitest as the pass-on, its flags and the file filters go to it in order; the command's own stay", async () => {
    const argv = [
      '--cfg-options',
      'env.limit=2',
      'env.workers=1',
      '-t',
      'dnd-01',
      '--config',
      'c.yaml',
      '--reporter',
      'junit',
      '--outputFile.junit=out.xml',
      '--shard=1/2',
      'mini',
    ];
    const { values, passed, positionals } = parseFlags(SPEC, argv, await vitestPassOn());
    expect(values).toMatchObject({ config: 'c.yaml', 'cfg-options': ['env.limit=2', 'env.workers=1'] });
    expect(passed).toEqual([
      '-t',
      'dnd-01',
      '--reporter',
      'junit',
      '--outputFile.junit=out.xml',
      '--shard=1/2',
      'mini',
    ]);
    expect(positionals).toEqual([]);
  });

  test('a flag neither defines is refused, suggesting from both', async () => {
    const passOn = await vitestPassOn();
    expect(errorOf(() => parseFlags(SPEC, ['--trails', '3'], passOn)).message).toContain('(did you mean --trials?)');
    expect(errorOf(() => parseFlags(SPEC, ['--reportr=junit'], passOn)).message).toContain(
      '(did you mean --reporter?)',
    );
  });
});

describe('helpText', () => {
  test('the usage line and one line per flag, from the table', () => {
    const help = helpText(SPEC);
    expect(help.split('\n').slice(0, 2).join('\n')).toMatch(
      /^skillopt demo <dir> \[--config C\] \[--cfg-options k=v \.\.\.\] \[--model-cache rw\|ro\|off\|replay\]\n {27}\[--optimize\]/,
    );
    expect(help).toContain('[--port 8000]');
    for (const flag of [
      '--config C',
      '--cfg-options k=v ...',
      '--model-cache rw|ro|off|replay',
      '--optimize',
      '--trials K',
      '-s, --skill S',
    ]) {
      expect(
        help.split('\n').some((l) => l.startsWith(`  ${flag} `) || l === `  ${flag}`),
        flag,
      ).toBe(true);
    }
    expect(help).toMatch(/^ {2}--port N +port \(default 8000\)$/m);
  });
});
