/**
 * repo-operator: operate a SkillOpt-style repository with tools (docs/agents.md).
 *
 * Each task is a request an operator gets: run a smoke training on the local model, evaluate a best
 * skill on the test split, explain a failed run, report where a run's best skill is and how it scored,
 * add a benchmark. The target works through three tools over a virtual repository (shell.ts, repo.json):
 * `run_command` (a simulated shell that knows the training and eval-only scripts, checks the config path
 * and every `--cfg-options` key, and refuses a long run before a smoke test), `read_file` and `list_dir`.
 * Each case gets a fresh copy of the repository as its state.
 *
 * Scored with `weighted` (threshold 0.85), so a partial procedure earns partial credit:
 * - calls (0.5): the expected calls in order, with their exact arguments (extra calls allowed);
 * - procedure (0.2): over the state after the run: no long run refused for want of a smoke test, no
 *   command that failed (missing config, unknown knob), and for local-model tasks both backends set to
 *   `openai_compat` in every run;
 * - report (0.3): the final answer names what the task needs reported (output folder, best skill path,
 *   headline metric, the first failure, the next step).
 * See README.md.
 */
import {
  defineSkillSuite,
  finalState,
  includesAll,
  tool,
  toolCalls,
  ToolError,
  weighted,
  type SkillTask,
} from 'skillopt';
import { z } from 'zod';
import { createRepoState, listDir, readFile, runCommand, ShellError, type RepoState } from './shell.ts';

/**
 * What a task asks for, beside its input and its reference report (`expected`, the answer a careful
 * operator gives; the report is scored by the keywords it must hold, so other wordings pass too).
 */
interface Spec {
  procedure: string;
  calls: Array<{ name: string; args: Record<string, string> }>;
  local: boolean;
  report: string[];
  smoked?: string[];
}
type Task = SkillTask<string> & Spec;
const spec = (task: SkillTask<string>) => task as Task;

/** Shell failures go back to the model as tool errors; anything else is a bug in this suite. */
const shell = (fn: () => string): string => {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ShellError) throw new ToolError(e.message);
    throw e;
  }
};

const tools = {
  run_command: tool({
    description:
      'Run a shell command in the repository root (python3 scripts/train.py, python3 scripts/eval_only.py, ls, cat) and return its output.',
    input: z.object({ cmd: z.string().describe('the command line') }),
    handler: ({ cmd }, ctx) => shell(() => runCommand(ctx.state as RepoState, cmd)),
  }),
  read_file: tool({
    description: 'Read a file of the repository, by its path from the repository root.',
    input: z.object({ path: z.string() }),
    handler: ({ path }, ctx) => shell(() => readFile(ctx.state as RepoState, path)),
  }),
  list_dir: tool({
    description: 'List a directory of the repository (subdirectories end with /).',
    input: z.object({ path: z.string() }),
    handler: ({ path }, ctx) => shell(() => listDir(ctx.state as RepoState, path)),
  }),
};

const procedure = finalState<string, RepoState>(
  (state, { task }) => {
    const runs = state.commands.filter((c) => c.kind === 'train' || c.kind === 'eval');
    const checks: Array<[string, boolean]> = [
      ['no long run refused for want of a smoke test', !state.commands.some((c) => c.refused)],
      ['no failed command', !state.commands.some((c) => !c.ok && !c.refused)],
    ];
    if (spec(task).local) {
      checks.push(['a run was made', runs.length > 0]);
      checks.push([
        'both backends openai_compat in every run',
        runs.length > 0 &&
          runs.every((c) => c.optimizerBackend === 'openai_compat' && c.targetBackend === 'openai_compat'),
      ]);
    }
    const failed = checks.filter(([, ok]) => !ok).map(([what]) => what);
    const soft = (checks.length - failed.length) / checks.length;
    return {
      hard: failed.length ? 0 : 1,
      soft,
      feedback: failed.length ? `procedure: not met: ${failed.join('; ')}` : 'procedure followed',
    };
  },
  { name: 'procedure' },
);

defineSkillSuite<string>({
  name: 'repo-operator',
  tasks: 'benchmarks/repo-operator/tasks.json',
  skill: 'skills/repo-operator/initial.md',
  tools,
  state: (task) => createRepoState(spec(task).smoked ?? []),
  scorer: weighted<string>(
    [
      {
        scorer: toolCalls<string>({
          expected: (task) => spec(task).calls,
          order: 'subsequence',
          args: 'exact',
          name: 'calls',
        }),
        weight: 0.5,
      },
      { scorer: procedure, weight: 0.2 },
      { scorer: includesAll<string>((task) => spec(task).report, { name: 'report' }), weight: 0.3 },
    ],
    { threshold: 0.85 },
  ),
});
