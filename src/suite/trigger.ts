/**
 * Trigger suites: does the right skill load for a prompt? `defineTriggerSuite` lists the
 * suite's skills (SKILL.md files) to the target as an agent would (src/suite/agent.ts) and asks, for each
 * case, which skill the model loads first with `load_skill`, if any. Each case is a Vitest test named by its
 * id; it passes when the model loaded the expected skill (or none, when none is expected). Near-misses —
 * prompts that sound related but must not trigger — are first-class through `kind`.
 *
 * The summary gives precision, recall and F1 per skill and the confusion table (summary.json `trigger`;
 * src/suite/trigger-metrics.ts). `skillopt test --optimize` on a trigger suite rewrites only the
 * `description` of the `optimize` skill (default the first; the others are fixed) and gates on that skill's
 * trigger F1 on the val prompts (src/optimizer/subject.ts).
 *
 * ```ts
 * defineTriggerSuite({
 *   name: 'skill-routing',
 *   skills: ['benchmarks/skill-routing/skills/dotnetdebug/SKILL.md', …],
 *   cases: 'benchmarks/skill-routing/cases.json', // [{ id, prompt, skill: 'dotnetdebug' | null, kind?, split? }]
 *   optimize: 'dotnetdebug',
 * });
 * ```
 */
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SkillTask, SplitName } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import type { GateThresholds } from '../contract/session.ts';
import {
  agentSkill,
  agentSystemPrompt,
  checkDistinct,
  readAgentSkill,
  runAgent,
  type AgentSkill,
  type SuiteKind,
} from './agent.ts';
import { DatasetError, describeSource, loadTasks, readTaskRows, type TaskSource } from './dataset.ts';
import { defineSuiteOfKind, type SkillSuite } from './define.ts';
import type { ScorerFn } from './scorers/types.ts';

/** One prompt of a trigger suite. */
export interface TriggerCase {
  /** Unique, filesystem-safe; the test name. */
  id: string;
  /** What the user asks. */
  prompt: string;
  /** The skill the prompt should load; null (or omitted) when it should load none. */
  skill?: string | null;
  /** `positive` (default when `skill` is set), `near-miss` (sounds related, must not trigger), `negative` (default otherwise), or any label. */
  kind?: string;
  /** A split the dataset ships (every case needs one for it to be used). */
  split?: SplitName;
}

export interface TriggerSuiteOptions {
  /** Suite name; configs select it with `env.name`. */
  name: string;
  /** The skills listed to the model (SKILL.md files), in listing order. */
  skills: Array<string | URL>;
  /** The prompts: a JSON/JSONL file (a list, or `{ "cases": [...] }`) or the cases themselves. */
  cases: string | URL | TriggerCase[];
  /** The skill whose description `--optimize` rewrites (its name); default the first skill. */
  optimize?: string;
  /** Suite gate defaults (pass rate = share of prompts routed right); the config's evaluation.* win. */
  gate?: Partial<GateThresholds>;
}

/** The label of "no skill" in outputs and the confusion table. */
export const NO_SKILL = 'none';

const pathOf = (p: string | URL) => (p instanceof URL ? fileURLToPath(p) : resolve(p));
const q = (s: string) => `'${s}'`;

/** The pass/fail of a routing decision, with feedback that says what went wrong for whom. */
export function triggerFeedback(
  expected: string | null,
  loaded: string | null,
  kind: string | null,
): { pass: boolean; feedback: string } {
  const nearMiss = kind === 'near-miss' ? ' (a near-miss: it sounds related but is not what that skill is for)' : '';
  if (expected === loaded) {
    return {
      pass: true,
      feedback: expected ? `loaded ${q(expected)} as expected` : `no skill loaded, as expected${nearMiss}`,
    };
  }
  if (expected === null) {
    return {
      pass: false,
      feedback: `false trigger: should load no skill but loaded ${q(loaded!)}${nearMiss}; the description of ${q(loaded!)} is too broad for this prompt`,
    };
  }
  if (loaded === null) {
    return {
      pass: false,
      feedback: `missed trigger: should load ${q(expected)} but loaded no skill; the description of ${q(expected)} did not match this prompt`,
    };
  }
  return {
    pass: false,
    feedback: `wrong skill: should load ${q(expected)} but loaded ${q(loaded)}; the description of ${q(loaded)} matched this prompt better than that of ${q(expected)}`,
  };
}

const scoreRouting: ScorerFn<string | null> = ({ task, output }) => {
  const loaded = output === NO_SKILL || output === '' ? null : output;
  const { pass, feedback } = triggerFeedback(task.expected ?? null, loaded, task.task_type ?? null);
  return { hard: pass ? 1 : 0, soft: pass ? 1 : 0, feedback };
};

/** The path of the skill `optimize` names: a SKILL.md's folder is its name (the format's rule), else read them. */
function optimizedPath(options: TriggerSuiteOptions): string | URL {
  if (options.skills.length === 0) throw new SkillOptError(`trigger suite '${options.name}': 'skills' lists no skill`);
  if (options.optimize === undefined) return options.skills[0]!;
  const byFolder = options.skills.find((s) => {
    const p = pathOf(s);
    return basename(p) === 'SKILL.md' && basename(dirname(p)) === options.optimize;
  });
  if (byFolder) return byFolder;
  const byName = options.skills.find((s) => readAgentSkill(s).name === options.optimize);
  if (!byName)
    throw new SkillOptError(`trigger suite '${options.name}': optimize '${options.optimize}' is not one of its skills`);
  return byName;
}

/**
 * Declare a trigger suite. Call it at the top level of a `*.skill.test.ts` file. The skill under test
 * (`--skill`, `env.skill_init`, the optimizer's candidates) replaces the `optimize` skill's SKILL.md.
 */
export function defineTriggerSuite(options: TriggerSuiteOptions): SkillSuite<string | null> {
  const seedPath = optimizedPath(options);
  let listed: AgentSkill[] | null = null;
  // read when the suite is selected (inside defineSkillSuite's error handling, so errors point at the suite file)
  const skills = (): AgentSkill[] => {
    if (!listed) {
      listed = options.skills.map((s) => readAgentSkill(s, `trigger suite '${options.name}': skill`));
      checkDistinct(listed, `trigger suite '${options.name}'`);
      const reserved = listed.find((s) => s.name === NO_SKILL);
      if (reserved)
        throw new SkillOptError(
          `trigger suite '${options.name}': a skill may not be named '${NO_SKILL}' (it labels "no skill")`,
        );
    }
    return listed;
  };
  const optimized = () => skills()[options.skills.indexOf(seedPath)]!;

  const kind: SuiteKind<string | null> = {
    loadTasks(source) {
      const names = skills().map((s) => s.name);
      const label = describeSource(source as TaskSource<unknown>, options.name);
      const raw = Array.isArray(source) ? (source as unknown[]) : readTaskRows(source as string | URL, label, 'cases');
      const rows = raw.map((item, i) => toTask(item, i, names, label));
      return loadTasks(rows, { suite: options.name }).map((t) => t as SkillTask<string | null>);
    },
    manifest: () => ({
      trigger: {
        optimize: optimized().name,
        skills: skills().map((s) => ({ name: s.name, description: s.description, path: s.path })),
      },
    }),
    runner(_session, skill) {
      const own = agentSkill(skill.path, skill.text);
      const target = optimized();
      if (own.name !== target.name) {
        throw new SkillOptError(
          `trigger suite '${options.name}': the skill under test is named '${own.name}' (${skill.path}), but the suite optimizes '${target.name}'`,
        );
      }
      const list = skills().map((s) => (s === target ? own : s));
      const names = list.map((s) => s.name);
      const system = agentSystemPrompt(list);
      return {
        messages: (_built, task) => [
          { role: 'system', content: system },
          { role: 'user', content: task.input },
        ],
        run: (runtime, messages, signal, trial) =>
          runAgent(runtime, messages, list, { signal, routeOnly: true, ...(trial !== undefined ? { trial } : {}) }),
        finish: (score, run, task) => ({
          score,
          extra: {
            skill_loaded: run.loaded[0] === own.name,
            loaded_skills: run.loaded,
            trigger: {
              expected: task.expected ?? null,
              loaded: run.loaded[0] ?? null,
              kind: task.task_type ?? null,
              skills: names,
            },
          },
        }),
      };
    },
  };
  return defineSuiteOfKind<string | null>(
    {
      name: options.name,
      tasks: options.cases as TaskSource<string | null>,
      skill: seedPath,
      scorer: scoreRouting,
      ...(options.gate ? { gate: options.gate } : {}),
    },
    kind,
  );
}

/** A case as a task: input = the prompt, expected = the skill (null: none), task_type = the kind. */
function toTask(item: unknown, index: number, names: readonly string[], label: string): SkillTask<string | null> {
  if (!item || typeof item !== 'object' || Array.isArray(item))
    throw new DatasetError(`${label}: case #${index + 1}: not an object`);
  const c = item as Record<string, unknown>;
  const where = typeof c.id === 'string' && c.id ? `case '${c.id}'` : `case #${index + 1}`;
  const prompt = c.prompt ?? c.input;
  if (typeof prompt !== 'string' || prompt.trim() === '')
    throw new DatasetError(`${label}: ${where}: missing prompt (a non-empty string)`);
  const raw = c.skill === undefined ? (c.expected ?? null) : c.skill;
  if (raw !== null && typeof raw !== 'string')
    throw new DatasetError(`${label}: ${where}: skill must be a skill name or null`);
  const skill = raw === null || raw === '' || raw === NO_SKILL ? null : raw;
  if (skill !== null && !names.includes(skill)) {
    throw new DatasetError(
      `${label}: ${where}: skill '${skill}' is not one of the suite's skills (${names.join(', ')})`,
    );
  }
  if (c.kind !== undefined && typeof c.kind !== 'string')
    throw new DatasetError(`${label}: ${where}: kind must be a string`);
  const kind = (c.kind as string | undefined) ?? (skill ? 'positive' : 'negative');
  const { prompt: _p, skill: _s, kind: _k, ...rest } = c;
  return { ...rest, id: c.id as string, input: prompt, expected: skill, task_type: kind };
}
