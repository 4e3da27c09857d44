/**
 * Run a `skillopt` command in this process: `main(argv, { stdout, stderr, env })` (src/cli/main.ts), with
 * the streams captured. The result has the shape of a spawned run's (test/e2e/helpers.ts `RunResult`), so
 * a test reads `code`, `stdout`, `stderr` and `all` the same way either way.
 *
 * Use it for every command whose process boundary is not what the test checks (compare, show, report,
 * config, cache, argument and config errors). Spawn the CLI (`skillopt` in test/e2e/helpers.ts) only for
 * the exit code and stream separation of a real process, and for commands that run Vitest suites.
 * Paths given to a command here are best absolute: the working directory is the test worker's.
 */
import { main } from '../../src/cli/main.ts';
import type { OutputStream } from '../../src/util/io-context.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout + stderr, for "somewhere in the output" assertions. */
  all: string;
}

/** The variables a command sees: no Vitest, skillopt or API-key variables of this process, colours off, cache off. */
const INHERITED_OUT =
  /^(VITEST|VITE_|SKILLOPT_|OPENAI_|TARGET_OPENAI|OPTIMIZER_OPENAI|JUDGE_OPENAI|AZURE_|FORCE_COLOR|NODE_OPTIONS|NODE_ENV|TEST$)/;

export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!INHERITED_OUT.test(k)) env[k] = v;
  return { ...env, NO_COLOR: '1', SKILLOPT_CACHE: 'off', ...extra };
}

function capture(columns?: number): OutputStream & { text: string } {
  const stream = {
    text: '',
    write(chunk: string) {
      stream.text += chunk;
      return true;
    },
    ...(columns !== undefined ? { columns } : {}),
  };
  return stream;
}

/** `skillopt <argv>` in process; `env` is added to `cliEnv()`, `columns` makes stdout a terminal that wide. */
export async function cli(
  argv: string[],
  opts: { env?: Record<string, string>; columns?: number } = {},
): Promise<CliResult> {
  const stdout = capture(opts.columns);
  const stderr = capture();
  const code = await main(argv, { stdout, stderr, env: cliEnv(opts.env) });
  return { code, stdout: stdout.text, stderr: stderr.text, all: `${stdout.text}\n${stderr.text}` };
}
