/**
 * Loading and checking a benchmark dataset. Every problem is a one-line error naming the file and the
 * task id (or position) at fault: a missing file, malformed JSON, an empty dataset, a missing or
 * duplicate or unsafe id, a task without input or expected answer, a task its scorer cannot read.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SkillTask } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';

export class DatasetError extends SkillOptError {}

export type TaskSource<E> = string | URL | SkillTask<E>[];

/** A filesystem-safe id: letters, digits, dot, dash, underscore; not starting with a dot. */
const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export function describeSource(source: TaskSource<unknown>, suite: string): string {
  if (Array.isArray(source)) return `suite '${suite}' dataset`;
  const path = source instanceof URL ? fileURLToPath(source) : resolve(source);
  return displayPath(path);
}

/** A JSON.parse message on one line: Node quotes the offending text, newlines included. */
function flat(e: unknown): string {
  return (e as Error).message.replace(/\s*\n\s*/g, ' ↵ ');
}

/** The rows of a dataset file: a JSON array, `{ "<key>": [...] }`, or JSONL. */
export function readTaskRows(source: string | URL, label: string, key = 'tasks'): unknown[] {
  return readRaw(source, label, key);
}

function readRaw(source: string | URL, label: string, key = 'tasks'): unknown[] {
  const path = source instanceof URL ? fileURLToPath(source) : resolve(source);
  if (!existsSync(path)) throw new DatasetError(`${label}: dataset file not found`);
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.jsonl')) {
    const rows: unknown[] = [];
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      try {
        rows.push(JSON.parse(line));
      } catch (e) {
        throw new DatasetError(`${label}:${i + 1}: malformed JSON line: ${flat(e)}`);
      }
    });
    return rows;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new DatasetError(`${label}: malformed JSON: ${flat(e)}`);
  }
  if (Array.isArray(parsed)) return parsed;
  if (parsed && typeof parsed === 'object' && Array.isArray((parsed as Record<string, unknown>)[key])) {
    return (parsed as Record<string, unknown[]>)[key]!;
  }
  throw new DatasetError(`${label}: expected a JSON array of ${key} (or {"${key}": [...]})`);
}

/**
 * Load and validate the tasks. `validate` is called once per task (the scorer's check); its error
 * message is reported with the task id.
 */
export function loadTasks<E>(
  source: TaskSource<E>,
  opts: { suite: string; validate?: (task: SkillTask<E>) => void },
): SkillTask<E>[] {
  const label = describeSource(source, opts.suite);
  const raw = Array.isArray(source) ? source : readRaw(source, label);
  if (raw.length === 0) throw new DatasetError(`${label}: the dataset is empty`);
  const seen = new Map<string, number>();
  return raw.map((item, index) => {
    const where = `${label}: task #${index + 1}`;
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw new DatasetError(`${where}: not an object`);
    const task = item as SkillTask<E>;
    if (task.id === undefined || task.id === null || task.id === '') throw new DatasetError(`${where}: missing id`);
    if (typeof task.id !== 'string')
      throw new DatasetError(`${where}: id must be a string, got ${JSON.stringify(task.id)}`);
    if (!SAFE_ID.test(task.id)) {
      throw new DatasetError(
        `${label}: task '${task.id}': id is not filesystem-safe (use letters, digits, '.', '-', '_')`,
      );
    }
    const first = seen.get(task.id);
    if (first !== undefined) {
      throw new DatasetError(`${label}: duplicate id '${task.id}' (tasks #${first + 1} and #${index + 1})`);
    }
    seen.set(task.id, index);
    if (typeof task.input !== 'string' || task.input.length === 0) {
      throw new DatasetError(`${label}: task '${task.id}': missing input (a non-empty string)`);
    }
    if (task.expected === undefined) throw new DatasetError(`${label}: task '${task.id}': missing expected`);
    if (task.task_type !== undefined && typeof task.task_type !== 'string') {
      throw new DatasetError(`${label}: task '${task.id}': task_type must be a string`);
    }
    if (opts.validate) {
      try {
        opts.validate(task);
      } catch (e) {
        throw new DatasetError(`${label}: task '${task.id}': ${(e as Error).message}`);
      }
    }
    return task;
  });
}
