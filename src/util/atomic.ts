/** Atomic file writes: write a sibling temp file, then rename over the target, so a killed run never leaves a torn file. */
import { mkdirSync, renameSync, writeFileSync, appendFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { dirname, join, basename } from 'node:path';

let counter = 0;

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${++counter}.tmp`);
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Append one line and flush it to disk (for incremental JSONL logs read back on resume). */
export function appendLineDurable(path: string, line: string): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${line}\n`);
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
