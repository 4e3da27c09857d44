/** The one clip, token count and plain-object check every layer shares (util/clip.ts, util/format.ts, util/objects.ts). */
import { describe, expect, test } from 'vitest';
import { clip, oneLineClip } from '../../src/util/clip.ts';
import { kTok } from '../../src/util/format.ts';
import { isPlainObject } from '../../src/util/objects.ts';

describe('shared text helpers', () => {
  test('clip collapses whitespace to one line and marks a cut with an ellipsis, within max characters', () => {
    expect(clip('  a\n\tb   c  ', 10)).toBe('a b c');
    expect(clip('abcdefghij', 10)).toBe('abcdefghij');
    expect(clip('abcdefghijk', 10)).toBe('abcdefghi…');
    expect(clip('abc', 0)).toBe('…');
  });

  test('oneLineClip also shows control characters, and counts them as shown', () => {
    expect(oneLineClip('red \u001b[31m\nline', 100)).toBe('red \\x1b[31m line');
    expect(oneLineClip('\u0007'.repeat(3), 6)).toBe('\\x07\\…');
  });

  test('kTok: plain below ten thousand, then k, then M', () => {
    expect([kTok(9_999), kTok(12_345), kTok(1_234_567)]).toEqual(['9999', '12.3k', '1.23M']);
  });

  test('isPlainObject: objects, not arrays or null', () => {
    expect([isPlainObject({}), isPlainObject([]), isPlainObject(null), isPlainObject('x')]).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });
});
