/**
 * Vitest's default console reporter, compact for large runs. Up to `LARGE_RUN` cases it is Vitest's own,
 * line for line. Beyond that, listing every case is noise and costs memory and time (Vitest lists every
 * case of a failed file, of a single file in a terminal, and every case slower than `slowTestThreshold`,
 * which a model call usually is; then a full error block with a code frame per failed case): it lists
 * only the first `SHOWN_FAILURES` failed cases and their errors and says how many more there are. The
 * skillopt table that follows names the worst cases, and results.jsonl holds every one.
 * The skillopt() plugin puts it in place of the `default` reporter.
 */
import type { DefaultReporter, TestCase, TestModule } from 'vitest/node';

type DefaultReporterClass = typeof DefaultReporter;

export const LARGE_RUN = 500;
export const SHOWN_FAILURES = 10;

/** The part of Vitest's task tree the error summary walks. */
interface TaskNode {
  type: string;
  result?: { state?: string; errors?: unknown[] };
  tasks?: TaskNode[];
}

/**
 * The tree with the errors of the first `keep` failed tests only: the later failed tests stay (so the
 * summary still counts them) without their errors, which the error summary would print one block each.
 * Suites that failed themselves keep theirs. The run's own tree is not changed.
 * (Vitest's `reportSummary` prints the error summary, then the counts from the same tree.)
 */
export function errorsOfFirstFailures<T extends TaskNode>(
  files: readonly T[],
  keep: number,
): { files: T[]; hidden: number } {
  let kept = 0;
  let hidden = 0;
  const prune = (task: TaskNode): TaskNode => {
    if (task.tasks) {
      const tasks = task.tasks.map(prune);
      return tasks.some((t, i) => t !== task.tasks![i]) ? { ...task, tasks } : task;
    }
    if (task.result?.state !== 'fail') return task;
    if (kept < keep) return (kept++, task);
    hidden++;
    return { ...task, result: { ...task.result, errors: [] } };
  };
  return { files: files.map((f) => prune(f) as T), hidden };
}

/**
 * Vitest's default reporter, from where the running Vitest documents it: `vitest/node` since 4.1 (which
 * deprecates `vitest/reporters`, with a warning on import), `vitest/reporters` in 4.0.
 */
async function defaultReporterClass(): Promise<DefaultReporterClass> {
  const node = (await import('vitest/node')) as { DefaultReporter?: DefaultReporterClass };
  return node.DefaultReporter ?? (await import('vitest/reporters')).DefaultReporter;
}

function compact(Base: DefaultReporterClass) {
  return class SkillConsoleReporter extends Base {
    private cases = 0;
    private listed = 0;

    /** The end summary: a large run prints the errors of its first failures only, then says how many more failed. */
    override reportSummary(files: Parameters<DefaultReporter['reportSummary']>[0], errors: unknown[]): void {
      if (!this.large) {
        super.reportSummary(files, errors);
        return;
      }
      const shown = errorsOfFirstFailures(files, SHOWN_FAILURES);
      super.reportSummary(shown.files, errors);
      if (shown.hidden > 0)
        this.error(
          `… and ${shown.hidden} more failed cases: the worst are in the skillopt table below, every case in results.jsonl\n`,
        );
    }

    private get large(): boolean {
      return this.cases > LARGE_RUN;
    }

    override onTestRunStart(specifications: Parameters<DefaultReporter['onTestRunStart']>[0]): void {
      super.onTestRunStart(specifications);
      this.cases = 0;
    }

    override onTestModuleCollected(module: TestModule): void {
      super.onTestModuleCollected(module);
      for (const _ of module.children.allTests()) this.cases++;
      if (this.large) this.renderSucceed = false;
    }

    protected override printTestModule(module: TestModule): void {
      this.listed = 0;
      super.printTestModule(module);
      if (this.large && this.listed > SHOWN_FAILURES)
        this.log(`   … and ${this.listed - SHOWN_FAILURES} more failed cases`);
    }

    protected override printTestCase(
      moduleState: Parameters<DefaultReporter['printTestCase']>[0],
      test: TestCase,
    ): void {
      if (!this.large) {
        super.printTestCase(moduleState, test);
        return;
      }
      if (test.result().state !== 'failed') return;
      if (this.listed++ < SHOWN_FAILURES) super.printTestCase(moduleState, test);
    }
  };
}

type CompactReporterClass = new (options?: ConstructorParameters<DefaultReporterClass>[0]) => DefaultReporter;

let loaded: Promise<CompactReporterClass> | undefined;

/** The compact reporter's class, built on the running Vitest's default reporter (loaded once, when first asked for). */
export function skillConsoleReporter(): Promise<CompactReporterClass> {
  loaded ??= defaultReporterClass().then(compact);
  return loaded;
}
