import { describe, expect, it } from 'vitest';
import { readJsonBlocks, jsonBlock, readTag, tag } from '../src/protocol/prompt.ts';

describe('protocol', () => {
  it('round-trips fenced JSON blocks, even with backticks inside', () => {
    const v = { a: 'x ``` y', b: [1, 2] };
    expect(readJsonBlocks(`hello\n${jsonBlock(v)}\nbye`)).toEqual([v]);
  });
  it('reads tags', () => {
    expect(readTag(`pre ${tag('edit_budget', '4')} post`, 'edit_budget')).toBe('4');
  });
});
