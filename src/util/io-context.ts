/**
 * The streams and environment of the command being run. The `skillopt` binary runs a command with the
 * process's own (`process.stdout`, `process.stderr`, `process.env`); a test runs one in process with
 * streams of its own (`main(argv, { stdout, stderr, env })` in cli/main.ts), and every line the command
 * prints, and every variable it reads through `currentEnv()`, is that call's, however many calls run at
 * once (an AsyncLocalStorage follows each call through its awaits).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

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

const current = new AsyncLocalStorage<CommandIo>();

/** The process's own streams and environment (outside any `withIo`). */
export function processIo(): CommandIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}

/** Run `fn` with `io` as the current command's streams and environment. */
export function withIo<T>(io: CommandIo, fn: () => T): T {
  return current.run(io, fn);
}

/** The current command's streams and environment. */
export function currentIo(): CommandIo {
  return current.getStore() ?? processIo();
}

/** The current command's environment (`process.env` outside a command run in process). */
export function currentEnv(): NodeJS.ProcessEnv {
  return currentIo().env;
}
