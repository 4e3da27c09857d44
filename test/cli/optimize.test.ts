/** best_skill.diff names: the initial skill's project-relative path, so `git apply` updates it in place. */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { diffNames } from '../../src/cli/optimize.ts';

describe('diffNames', () => {
  test('a skill inside the project: its relative path (POSIX separators) on both sides', () => {
    expect(diffNames(join('/proj', 'skills', 'x', 'initial.md'), '/proj')).toEqual({
      oldName: 'skills/x/initial.md',
      newName: 'skills/x/initial.md',
    });
  });

  test('a skill outside the project: the generic names', () => {
    expect(diffNames('/elsewhere/skill.md', '/proj')).toEqual({
      oldName: 'initial_skill.md',
      newName: 'best_skill.md',
    });
  });

  test('a skill served over MCP: the generic names (nothing in the project to patch)', () => {
    expect(diffNames('mcp:notes:skill://release-notes/SKILL.md', '/proj')).toEqual({
      oldName: 'initial_skill.md',
      newName: 'best_skill.md',
    });
  });
});
