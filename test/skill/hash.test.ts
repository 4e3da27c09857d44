import { describe, expect, it } from 'vitest';
import { skillHash } from '../../src/skill/hash.ts';

describe('skillHash', () => {
  it('is the first 16 hex chars of SHA-256 over UTF-8 (values from python hashlib)', () => {
    expect(skillHash('')).toBe('e3b0c44298fc1c14');
    expect(skillHash('hello')).toBe('2cf24dba5fb0a30e');
    expect(skillHash('# Skill\n\nUse ✓ and é.\n')).toBe('d3ce443c731dbfdb');
  });
  it('changes with any byte', () => {
    expect(skillHash('a\n')).not.toBe(skillHash('a'));
    expect(skillHash('a')).toMatch(/^[0-9a-f]{16}$/);
  });
});
