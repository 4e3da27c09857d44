/**
 * Run a `skillopt` command in this process: `main(argv, { stdout, stderr, env })` (src/cli/main.ts), with
 * the streams captured. The result has the shape of a spawned run's (test/e2e/helpers.ts `RunResult`), so
 * a test reads `code`, `stdout`, `stderr` and `all` the same way either way.
 *
 * Use it for every command whose process boundary is not what the test checks. In the e2e and browser
 * projects the import below loads the build (dist/cli/main.js, vitest.config.ts `BUILT_LIBRARY`), the code
 * the binary runs; there `skillopt` of test/e2e/helpers.ts runs suite commands through it in a fixture's
 * folder. Spawn the CLI (`spawnSkillopt`) only for what a process shows (docs/testing.md). Without `cwd`,
 * the working directory is the test worker's: give paths absolute.
 */
import { main } from '../../src/cli/main.ts';
import type { OutputStream } from '../../src/util/io-context.ts';
import { commandEnv } from './child-env.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr in the order the command wrote them, for "somewhere in the output" assertions. */
  all: string;
}

let queue: Promise<unknown> = Promise.resolve();

/** A stream that keeps what is written, also into `both` (the two streams in the order written). */
function capture(both: { text: string }, columns?: number): OutputStream & { text: string } {
  const stream = {
    text: '',
    write(chunk: string | Uint8Array) {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      stream.text += text;
      both.text += text;
      return true;
    },
    ...(columns !== undefined ? { columns } : {}),
  };
  return stream;
}

/**
 * `skillopt <argv>` in process; `env` is added to `commandEnv()` (test/helpers/child-env.ts), `columns`
 * makes stdout a terminal that wide, and `cwd` is the working directory while the command runs (this
 * process's: such commands run one at a time, and only where a file is its own process, as in `forks`).
 */
export function cli(
  argv: string[],
  opts: { env?: Record<string, string | undefined>; columns?: number; cwd?: string } = {},
): Promise<CliResult> {
  const turn = queue.then(async () => {
    const both = { text: '' };
    const stdout = capture(both, opts.columns);
    const stderr = capture(both);
    const before = process.cwd();
    if (opts.cwd) process.chdir(opts.cwd);
    try {
      const code = await main(argv, { stdout, stderr, env: commandEnv(opts.env) });
      return { code, stdout: stdout.text, stderr: stderr.text, all: both.text };
    } finally {
      if (opts.cwd) process.chdir(before);
    }
  });
  queue = turn.catch(() => {});
  return turn;
}
