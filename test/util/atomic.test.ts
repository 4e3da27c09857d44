/** util/atomic.ts: a write that fails leaves neither a torn target nor its temp file behind. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { writeFileAtomic, writeJsonAtomic, writeLinesAtomic } from '../../src/util/atomic.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skillopt-atomic-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a write replaces the target whole and leaves no temp file', () => {
  const file = join(dir, 'a.json');
  writeFileSync(file, 'old\n');
  writeJsonAtomic(file, { a: 1 });
  expect(readFileSync(file, 'utf8')).toBe('{\n  "a": 1\n}\n');
  writeLinesAtomic(join(dir, 'rows.jsonl'), ['x', 'y']);
  expect(readFileSync(join(dir, 'rows.jsonl'), 'utf8')).toBe('x\ny\n');
  expect(readdirSync(dir).sort()).toEqual(['a.json', 'rows.jsonl']);
});

test('a rename that fails (the target is a folder) removes the temp file and throws', () => {
  const target = join(dir, 'taken');
  mkdirSync(join(target, 'inside'), { recursive: true });
  expect(() => writeFileAtomic(target, 'text\n')).toThrow(/taken/);
  expect(() => writeLinesAtomic(target, ['a'])).toThrow(/taken/);
  expect(readdirSync(dir)).toEqual(['taken']);
});

test('lines that fail part way (the iterable throws) remove the temp file and keep the old target', () => {
  const file = join(dir, 'results.jsonl');
  writeFileSync(file, 'old\n');
  function* rows(): Generator<string> {
    yield 'first';
    throw new Error('row 2 cannot be serialized');
  }
  expect(() => writeLinesAtomic(file, rows())).toThrow('row 2 cannot be serialized');
  expect(readdirSync(dir)).toEqual(['results.jsonl']);
  expect(readFileSync(file, 'utf8')).toBe('old\n');
});
