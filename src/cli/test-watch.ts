/**
 * `skillopt test --watch`: Vitest in watch mode with the skillopt session. The plugin reruns a suite when
 * its skill or dataset file changes (src/vitest/watch.ts), Vitest reruns it when its test file or an
 * import changes; after every run a short report is printed. It ends like `vitest watch`: `q` or Ctrl-C
 * (and SIGTERM) exit; the exit code carries no verdict in watch mode.
 */
import pc from 'picocolors';
import { startVitest } from 'vitest/node';
import type { CaseRecord } from '../types.ts';
import { oneLine } from '../util/errors.ts';
import { score3 } from '../util/format.ts';
import { displayPath } from '../util/paths.ts';
import type { RunResult, SessionHost } from '../vitest/host.ts';
import { printOut } from '../util/print.ts';

export interface TestWatchOptions {
  host: SessionHost;
  filters: string[];
  /** Vitest options from the command line (`watch`/`run` are overridden). */
  options: Record<string, unknown>;
  /** The skill file under test (`--skill`), for the report. */
  skillPath?: string | undefined;
  log?: (text: string) => void;
}

/** Counts of one run's cases; the pass rate is over scored (not errored) cases. */
function counts(records: CaseRecord[]) {
  const errored = records.filter((r) => r.error_kind).length;
  const passed = records.filter((r) => !r.error_kind && r.pass).length;
  const scored = records.length - errored;
  return { n: records.length, passed, failed: scored - passed, errored, passRate: scored ? passed / scored : null };
}

/** The short report printed after each run in watch mode; the verdict is the run's own (src/suite/verdict.ts). */
export function renderWatchReport(
  run: number,
  result: RunResult,
  opts: { simulated: boolean; skillPath?: string | undefined },
): string {
  const c = counts(result.records);
  const verdict = (result as Partial<RunResult>).verdict;
  const failedGate = result.gates.find((g) => !g.ok);
  const firstError = result.records.find((r) => r.error_kind);
  const ok = verdict
    ? verdict.verdict === 'pass'
    : result.errors.length === 0 && !failedGate && c.n > 0 && c.failed === 0 && c.errored === 0;
  const status = ok
    ? pc.green('OK')
    : verdict?.verdict === 'inconclusive'
      ? pc.yellow('INCONCLUSIVE')
      : pc.red('FAILED');
  const lines = [
    '',
    `${pc.bold(`skillopt test --watch · run ${run}`)} ${status}${opts.simulated ? pc.yellow(' — simulated model') : ''}`,
  ];
  if (opts.skillPath) lines.push(`  skill:    ${displayPath(opts.skillPath)}`);
  if (c.n > 0) {
    lines.push(`  cases:    ${c.n} (${c.passed} pass, ${c.failed} fail, ${c.errored} errored)`);
    lines.push(`  pass:     rate ${score3(c.passRate)}`);
  }
  const failure = verdict
    ? verdict.reason
    : (result.errors[0] ??
      (failedGate ? `suite gate failed for '${failedGate.suite}': ${failedGate.reasons.join('; ')}` : null) ??
      (firstError ? `${firstError.id}: ${oneLine(firstError.error)}` : null) ??
      (c.n === 0 ? 'no skill case ran (see the output above)' : null));
  if (failure && !ok) lines.push(`  ${pc.red('failure:')}  ${failure}`);
  lines.push(`  next:     edit the skill, the dataset or the suite to rerun; press q to quit`);
  return lines.join('\n');
}

/** Run the suites in watch mode; resolves when Vitest closes (Vitest itself exits the process on q / Ctrl-C). */
export async function runTestWatch(opts: TestWatchOptions): Promise<number> {
  const { host } = opts;
  const log = opts.log ?? ((t: string) => printOut(t));
  let runs = 0;
  host.sink = (result) => {
    const run = ++runs;
    // The sink is called from the reporter's onTestRunEnd, before it prints its table: report after it.
    setImmediate(() =>
      log(renderWatchReport(run, result, { simulated: host.session.simulated, skillPath: opts.skillPath })),
    );
  };
  const vitest = await startVitest('test', opts.filters, { ...opts.options, watch: true, run: false });
  if (!vitest.shouldKeepServer()) {
    await vitest.close();
    return Number(process.exitCode ?? 0) || 0;
  }
  await new Promise<void>((resolve) => {
    // A config-file change restarts Vitest (closing it first) and keeps watching: not an end.
    let restarting = false;
    vitest.onServerRestart(() => {
      restarting = true;
    });
    vitest.onClose(() => {
      if (restarting) restarting = false;
      else resolve();
    });
  });
  return 0;
}
