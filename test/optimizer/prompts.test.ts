/**
 * The optimizer prompt library: built-in markdown prompts, a benchmark's override directory searched
 * first, mode variants (`*_rewrite`, `*_full_rewrite`) falling back to the patch prompt plus a note on
 * the mode's payload, and a one-line error for a prompt that exists nowhere.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { PromptLibrary } from '../../src/optimizer/prompts.ts';
import { STAGE_SCHEMAS } from '../../src/protocol/schemas.ts';
import { SkillOptError } from '../../src/util/errors.ts';
import { sourceAsset } from '../../src/util/paths.ts';
import { tempDir } from './harness.ts';

const builtIn = (name: string) => readFileSync(join(sourceAsset('optimizer', 'prompts'), `${name}.md`), 'utf8').trim();

describe('PromptLibrary', () => {
  test('every optimizer stage has a prompt (built in, or base + mode note)', () => {
    const lib = new PromptLibrary();
    for (const stage of Object.keys(STAGE_SCHEMAS).filter((s) => s !== 'judge')) {
      expect(lib.get(stage).text.length, stage).toBeGreaterThan(50);
    }
  });

  test('a benchmark override wins over the built-in prompt', () => {
    const dir = tempDir('prompts');
    writeFileSync(join(dir, 'analyst_error.md'), '  Benchmark-specific analyst.\n');
    const lib = new PromptLibrary([dir]);
    expect(lib.get('analyst_error')).toEqual({
      text: 'Benchmark-specific analyst.',
      file: join(dir, 'analyst_error.md'),
    });
    expect(lib.get('ranking').text).toBe(builtIn('ranking'));
  });

  test('a rewrite variant without its own file = base prompt + the mode note', () => {
    const lib = new PromptLibrary();
    const p = lib.get('merge_failure_rewrite');
    expect(p.text).toBe(`${builtIn('merge_failure')}\n${builtIn('mode_rewrite')}`);
    expect(p.text).toContain('revise_suggestions');
    expect(lib.get('ranking_rewrite').text).toBe(`${builtIn('ranking')}\n${builtIn('mode_rewrite')}`);
    expect(lib.get('merge_final_full_rewrite').text).toBe(`${builtIn('merge_final')}\n${builtIn('mode_full_rewrite')}`);
  });

  test('the fallback uses the overridden base prompt', () => {
    const dir = tempDir('prompts');
    writeFileSync(join(dir, 'merge_success.md'), 'Custom merge.');
    const p = new PromptLibrary([dir]).get('merge_success_rewrite');
    expect(p.text).toBe(`Custom merge.\n${builtIn('mode_rewrite')}`);
    expect(p.file).toBe(
      `${join(dir, 'merge_success.md')} + ${join(sourceAsset('optimizer', 'prompts'), 'mode_rewrite.md')}`,
    );
  });

  test('a variant with its own file uses it', () => {
    expect(new PromptLibrary().get('analyst_error_rewrite').text).toBe(builtIn('analyst_error_rewrite'));
  });

  test('a missing prompt is a one-line SkillOptError naming the file and where it looked', () => {
    const dir = tempDir('prompts');
    let err: unknown;
    try {
      new PromptLibrary([dir]).get('no_such_stage');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SkillOptError);
    const msg = (err as Error).message;
    expect(msg).not.toContain('\n');
    expect(msg).toMatch(/^optimizer prompt 'no_such_stage\.md' not found in /);
    expect(msg).toContain(dir);
  });
});
