/** Dataset and session errors are one readable line that blames the right thing. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadTasks } from '../../src/suite/dataset.ts';
import { defineSkillSuite, exactMatch } from '../../src/index.ts';
import { HOST_ENV_FLAG } from '../../src/contract/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'skillopt-dataset-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dataset errors', () => {
  test('a file that is not JSON: the whole parser message on one line, not cut at its first newline', () => {
    const file = join(dir, 'tasks.json');
    writeFileSync(file, 'hello\nworld\n');
    let message = '';
    try {
      loadTasks(file, { suite: 's' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`${file}: malformed JSON: `);
    expect(message).not.toContain('\n');
    expect(message).toMatch(/is not valid JSON/);
  });
});

describe('a suite that finds no session', () => {
  const suite = { name: 's', tasks: [{ id: 'a', input: 'x', expected: 'y' }], skill: 'skill.md', scorer: exactMatch() };

  test('with a session host open (or SKILLOPT_CONFIG set), the missing skillopt() plugin is blamed, not the config', () => {
    process.env[HOST_ENV_FLAG] = '1';
    try {
      expect(() => defineSkillSuite(suite)).toThrow(/^the skillopt\(\) plugin is not in this project's Vitest config/);
    } finally {
      delete process.env[HOST_ENV_FLAG];
    }
  });

  test('with nothing at all, the missing config is', () => {
    const saved = process.env.SKILLOPT_CONFIG;
    delete process.env.SKILLOPT_CONFIG;
    try {
      expect(() => defineSkillSuite(suite)).toThrow(/^no skillopt config/);
    } finally {
      if (saved !== undefined) process.env.SKILLOPT_CONFIG = saved;
    }
  });
});
