/**
 * dotnetdebug: name the root cause of a .NET bug report.
 *
 * Each task is a C# snippet with its exception text or symptom (benchmarks/dotnetdebug/tasks.json);
 * the expected answer is one label of the taxonomy in taxonomy.json. This file is all a benchmark needs:
 *
 *   - `tasks`   the dataset; every task has a unique `id` (the test name, so `-t dnd-01` selects tasks),
 *               an `input`, the `expected` label, a `task_type` and, here, `fix_keywords`.
 *   - `skill`   the seed skill the optimizer starts from (and that `skillopt test` evaluates by default).
 *   - `scorer`  hard = the right label (found in free text); soft adds credit for naming the fix.
 *               The feedback strings are what the optimizer reads when it reflects on failures.
 *   - `messages` how a task is shown to the target model.
 *   - `gate`    the suite gate `skillopt test` enforces: below it the run exits 1 and a failing
 *               "suite gate" case shows up in JUnit; individual misses are then recorded, not failed.
 *
 * Splits, the model endpoints and the skill under test come from the config (configs/dotnetdebug/*.yaml)
 * and the command line, never from this file.
 */
import { defineSkillSuite, includesAll, label, weighted, type SkillTask } from 'skillopt';
import taxonomy from './taxonomy.json' with { type: 'json' };

type Task = SkillTask<string> & { fix_keywords: string[] };

const rootCause = label({ labels: taxonomy.map((t) => t.label) });
const namesTheFix = includesAll((task) => (task as Task).fix_keywords);

defineSkillSuite<string>({
  name: 'dotnetdebug',
  tasks: 'benchmarks/dotnetdebug/tasks.json',
  skill: 'skills/dotnetdebug/initial.md',
  // soft = 0.8 × label + 0.2 × share of fix keywords; hard = soft ≥ 0.8, i.e. exactly "the label is right".
  scorer: weighted(
    [
      { scorer: rootCause, weight: 0.8 },
      { scorer: namesTheFix, weight: 0.2 },
    ],
    { threshold: 0.8 },
  ),
  messages: (skill, task) => [
    { role: 'system', content: skill },
    { role: 'user', content: `Find the root cause of this .NET problem.\n\n${task.input}` },
  ],
  gate: { minPassRate: 0.8 },
  // presentation 'agent' (configs/dotnetdebug/agent.yaml): skills listed beside this one, by name and description
  distractors: ['python-debugging', 'dotnet-build', 'incident-postmortem', 'sql-tuning'].map(
    (name) => `benchmarks/skill-routing/skills/${name}/SKILL.md`,
  ),
});
