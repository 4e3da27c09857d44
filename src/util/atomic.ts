/**
 * Atomic file writes: write a sibling temp file, then rename over the target, so a killed run never leaves a torn file.
 * Every file a run writes goes through here, so text is redacted here (util/redact.ts: URL credentials and
 * registered secrets are masked); binary data is written as given.
 */
import { appendFileSync, closeSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, basename } from 'node:path';
import { redactText } from './redact.ts';

let counter = 0;

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${++counter}.tmp`);
  writeFileSync(tmp, typeof data === 'string' ? redactText(data) : data);
  renameSync(tmp, path);
}

/**
 * Write lines (each ended with a newline) atomically without holding the whole text: a 10,000-row
 * results.jsonl is written in chunks of about 1 MB. A secret never spans lines, so redacting by chunk masks
 * what redacting the whole text would.
 */
export function writeLinesAtomic(path: string, lines: Iterable<string>): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${++counter}.tmp`);
  const fd = openSync(tmp, 'w');
  try {
    let chunk = '';
    for (const line of lines) {
      chunk += `${line}\n`;
      if (chunk.length >= 1 << 20) {
        writeSync(fd, redactText(chunk));
        chunk = '';
      }
    }
    if (chunk) writeSync(fd, redactText(chunk));
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Append one line to a file in an existing folder (incremental JSONL logs read back on resume). The write reaches the OS before this
 * returns, so a killed process loses nothing; a torn last line from a crash is cut by the reader.
 * No fsync per line: it cost a disk flush per case on the rollout hot path.
 */
export function appendLine(path: string, line: string): void {
  appendFileSync(path, `${redactText(line)}\n`);
}
