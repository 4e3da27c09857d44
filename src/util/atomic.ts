/**
 * Atomic file writes: write a sibling temp file, then rename over the target, so a killed run never leaves a torn file.
 * The files a run writes go through here, so text is redacted here (util/redact.ts: URL credentials and
 * registered secrets are masked); binary data is written as given. A failed write removes its temp file.
 *
 * Exempt, each writing redacted text its own way:
 * - model-call cache entries (model/cache/store.ts): also a temp file and a rename, but the entry's checksum
 *   is computed over the redacted bytes it writes, and its temp names carry a tag that `prune` recognizes as a
 *   killed writer's leftover; its run log is appended to and cut back by the same module.
 * - the run lock (util/lock.ts): taken by hard-linking an exclusively created (`wx`) file, because a rename
 *   would silently replace another process's lock.
 * - appendLine below, and the GitHub step summary (cli/github.ts): appends, which a rename cannot do.
 */
import { appendFileSync, closeSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, basename } from 'node:path';
import { redactText } from './redact.ts';

let counter = 0;

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    writeFileSync(tmp, typeof data === 'string' ? redactText(data) : data);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${++counter}.tmp`);
}

/**
 * Write lines (each ended with a newline) atomically without holding the whole text: a 10,000-row
 * results.jsonl is written in chunks of about 1 MB. A secret never spans lines, so redacting by chunk masks
 * what redacting the whole text would.
 */
export function writeLinesAtomic(path: string, lines: Iterable<string>): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  const fd = openSync(tmp, 'w');
  try {
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
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
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
