/** Which commands start the warm pool's thread before loading the CLI (bin/skillopt.js). */
import { expect, test } from 'vitest';
import { runsSuites } from '../../src/vitest/prestart.ts';

test('commands that run suites in Vitest workers prestart their thread; help, merging blobs and other commands do not', () => {
  for (const argv of [
    ['test'],
    ['test', '--config', 'c.yaml', '-t', 'x'],
    ['eval', '--skill', 's.md'],
    ['train'],
    ['test', '--optimize'],
  ]) {
    expect(runsSuites(argv), argv.join(' ')).toBe(true);
  }
  for (const argv of [
    [],
    ['test', '--help'],
    ['eval', '-h'],
    ['test', '--merge-reports', 'dir'],
    ['test', '--merge-reports=dir'],
    ['compare', 'a', 'b'],
    ['report', 'x'],
    ['sim-server'],
    ['--version'],
  ]) {
    expect(runsSuites(argv), argv.join(' ')).toBe(false);
  }
});
