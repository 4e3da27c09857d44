/**
 * The streams and environment of the command being run. The `skillopt` binary runs a command with the
 * process's own (`process.stdout`, `process.stderr`, `process.env`); a test runs one in process with
 * streams of its own (`main(argv, { stdout, stderr, env })` in cli/main.ts), and every line the command
 * prints, and every variable it reads through `currentEnv()`, is that call's, however many calls run at
 * once (an AsyncLocalStorage follows each call through its awaits).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Writable } from 'node:stream';

/** Where a command writes: a process stream, or anything with `write` (and, for a terminal, `columns`). */
export interface OutputStream {
  write(text: string): unknown;
  /** The terminal's width, when it is one. */
  columns?: number;
}

export interface CommandIo {
  stdout: OutputStream;
  stderr: OutputStream;
  env: NodeJS.ProcessEnv;
}

const current = new AsyncLocalStorage<CommandIo & { startedAt: number; argv?: readonly string[] }>();

/** The process's own streams and environment (outside any `withIo`). */
export function processIo(): CommandIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}

/** Run `fn` with `io` as the current command's streams and environment (and `argv` as its arguments). */
export function withIo<T>(io: CommandIo, fn: () => T, argv?: readonly string[]): T {
  return current.run({ ...io, startedAt: performance.now(), ...(argv ? { argv } : {}) }, fn);
}

/** The arguments of the `skillopt` command being run (after `skillopt`), or null outside one (plain `vitest`). */
export function commandArgv(): readonly string[] | null {
  return current.getStore()?.argv ?? null;
}

/** The current command's streams and environment. */
export function currentIo(): CommandIo {
  return current.getStore() ?? processIo();
}

/** The current command's environment (`process.env` outside a command run in process). */
export function currentEnv(): NodeJS.ProcessEnv {
  return currentIo().env;
}

/** Whether the current command writes to this process's own streams (the `skillopt` binary), not a caller's. */
function onProcessStreams(): boolean {
  return currentIo().stdout === process.stdout;
}

/**
 * Seconds the user has waited for the current command: the process's uptime for the binary (spawn to
 * now, Node's start-up included), the time since `main` was called for a command run in process.
 */
export function commandUptime(): number {
  const run = current.getStore();
  return run && !onProcessStreams() ? (performance.now() - run.startedAt) / 1000 : process.uptime();
}

/**
 * The streams to hand Vitest (its logger, console and reporters) for the current command: none for the
 * binary (Vitest writes to the process's own, as it always does), else the command's, as Node streams.
 */
export function vitestStreams(): { stdout: Writable; stderr: Writable } | undefined {
  if (onProcessStreams()) return undefined;
  const { stdout, stderr } = currentIo();
  return { stdout: writableOf(stdout), stderr: writableOf(stderr) };
}

/**
 * The variables a command run in process gives its suites' workers (Vitest's `env` option, which Vitest sets
 * on their `process.env`): none for the binary, whose workers inherit the process's own.
 */
export function vitestEnv(): { env: Record<string, string> } | Record<string, never> {
  if (onProcessStreams()) return {};
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(currentEnv())) if (v !== undefined) env[k] = v;
  return { env };
}

/** A Node Writable over an `OutputStream`, with its terminal width when it has one. */
export function writableOf(target: OutputStream): Writable {
  const stream = new Writable({
    decodeStrings: false,
    write: (chunk: Buffer | string, _encoding, done) => {
      target.write(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      done();
    },
  });
  if (target.columns !== undefined) Object.defineProperty(stream, 'columns', { get: () => target.columns });
  return stream;
}
