/**
 * Vitest's default console reporter, compact for large runs. Up to `LARGE_RUN` cases it is Vitest's own,
 * line for line. Beyond that, listing every case is noise and costs memory and time (Vitest lists every
 * case of a failed file, of a single file in a terminal, and every case slower than `slowTestThreshold`,
 * which a model call usually is; then a full error block with a code frame per failed case): it lists
 * only the first `SHOWN_FAILURES` failed cases and their errors and says how many more there are. The
 * skillopt table that follows names the worst cases, and results.jsonl holds every one.
 * The skillopt() plugin puts it in place of the `default` reporter.
 */
import { DefaultReporter, type TestCase, type TestModule } from 'vitest/node';

export const LARGE_RUN = 500;
export const SHOWN_FAILURES = 10;

/** The part of Vitest's task tree the error summary walks. */
interface TaskNode {
  type: string;
  result?: { state?: string; errors?: unknown[] };
  tasks?: TaskNode[];
}

type ErrorsSummary = (files: TaskNode[], errors: unknown[]) => void;

/** The tree with only the first `keep` failed tests (suites that failed themselves stay). */
export function firstFailures(files: readonly TaskNode[], keep: number): { files: TaskNode[]; hidden: number } {
  let kept = 0;
  let hidden = 0;
  const prune = (task: TaskNode): TaskNode | null => {
    if (!task.tasks) {
      if (task.result?.state !== 'fail') return null;
      if (kept < keep) return (kept++, task);
      return (hidden++, null);
    }
    const tasks = task.tasks.map(prune).filter((t): t is TaskNode => t !== null);
    return tasks.length || task.result?.errors?.length ? { ...task, tasks } : null;
  };
  return { files: files.map((f) => prune(f) ?? { ...f, tasks: [] }), hidden };
}

export class SkillConsoleReporter extends DefaultReporter {
  private cases = 0;
  private listed = 0;

  constructor(options?: ConstructorParameters<typeof DefaultReporter>[0]) {
    super(options);
    // Vitest declares its error summary private; a large run gets it for the first failures only.
    const self = this as unknown as { printErrorsSummary: ErrorsSummary };
    const full = self.printErrorsSummary.bind(this);
    self.printErrorsSummary = (files, errors) => {
      if (!this.large) return full(files, errors);
      const shown = firstFailures(files, SHOWN_FAILURES);
      full(shown.files, errors);
      if (shown.hidden > 0) this.error(`… and ${shown.hidden} more failed cases: the worst are in the skillopt table below, every case in results.jsonl\n`);
    };
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
    if (this.large && this.listed > SHOWN_FAILURES) this.log(`   … and ${this.listed - SHOWN_FAILURES} more failed cases`);
  }

  protected override printTestCase(moduleState: Parameters<DefaultReporter['printTestCase']>[0], test: TestCase): void {
    if (!this.large) return super.printTestCase(moduleState, test);
    if (test.result().state !== 'failed') return;
    if (this.listed++ < SHOWN_FAILURES) super.printTestCase(moduleState, test);
  }
}
