/**
 * The default out_root (no env.out_root): upstream's `outputs/<prefix>_<env>_<extra>_<stamp>` with
 * second resolution, created exclusively, so two runs started in the same second (shards of one CI job)
 * get different folders: the second gets `-2`, the third `-3`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { defaultOutRootName, outRoot } from '../../src/config/out-root.ts';
import { ConfigSchema } from '../../src/config/schema.ts';

const base = mkdtempSync(join(tmpdir(), 'skillopt-outroot-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const config = (env: Record<string, unknown> = {}) => ConfigSchema.parse({ env: { name: 'mini', ...env } });
const clock = () => new Date('2026-11-29T22:24:30.123Z');

describe('default out_root', () => {
  test('the readable upstream name', () => {
    expect(defaultOutRootName(config(), 'eval', 'mitko', clock())).toBe('eval_mini_mitko_20261129_222430');
    expect(defaultOutRootName(config({ name: '' }), 'test', undefined, clock())).toBe('test_skills_20261129_222430');
    expect(defaultOutRootName(config(), 'skillopt', 'gpt/5 mini', clock())).toBe(
      'skillopt_mini_gpt-5-mini_20261129_222430',
    );
  });

  test('runs started in the same second get different folders, each created', () => {
    const a = outRoot(config(), 'eval', 'mitko', { now: clock, base });
    const b = outRoot(config(), 'eval', 'mitko', { now: clock, base });
    const c = outRoot(config(), 'eval', 'mitko', { now: clock, base });
    expect([a, b, c].map((d) => basename(d))).toEqual([
      'eval_mini_mitko_20261129_222430',
      'eval_mini_mitko_20261129_222430-2',
      'eval_mini_mitko_20261129_222430-3',
    ]);
    for (const d of [a, b, c]) expect(existsSync(d)).toBe(true);
    // the next second starts over
    const later = outRoot(config(), 'eval', 'mitko', { now: () => new Date('2026-11-29T22:24:31Z'), base });
    expect(basename(later)).toBe('eval_mini_mitko_20261129_222431');
  });

  test('env.out_root is used as given (a rerun goes back into it)', () => {
    const dir = join(base, 'mine');
    expect(outRoot(config({ out_root: dir }), 'eval', 'mitko', { now: clock, base })).toBe(resolve(dir));
    expect(existsSync(dir)).toBe(false); // the lock creates it when a run starts
  });
});
