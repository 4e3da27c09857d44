/**
 * The wire format of optimizer prompts: how the engine (and the judge scorer) lays out a stage's user
 * message, and how a reader (the simulated model, tests) finds the pieces again. Real models simply read
 * it as structured markdown.
 *
 * A user message is:
 *   # SkillOpt stage: <stage>
 *   <current_skill>…</current_skill>          (the skill, stated once)
 *   <edit_budget>N</edit_budget>               (analysts: per-analyst cap; ranking: how many to select)
 *   <trajectories> ```json {…} ``` … </trajectories>   (one fenced JSON block per trajectory)
 *   <patches> ```json […] ``` </patches>       (merges)
 *   <edit_pool> ```json […] ``` </edit_pool>   (ranking / autonomous LR)
 *   …any other <tag>…</tag> sections a stage needs (step_buffer, meta_skill, comparison, expected, output).
 */

export const STAGE_HEADER_PREFIX = '# SkillOpt stage: ';

/** One scored rollout as the optimizer sees it. */
export interface Trajectory {
  id: string;
  task_type?: string | null;
  input: string;
  output: string;
  expected: unknown;
  score: { hard: number; soft: number };
  feedback: string;
  /**
   * The case's tool-using trajectory, compact (src/optimizer/reflect.ts `compactSteps`): only on cases that
   * made tool calls or ran a tool loop; a case without one carries no `steps` key at all.
   */
  steps?: EvidenceStep[];
  /**
   * A run over several target models (docs/optimizer.md#several-models): the model this trajectory is
   * from, on which models the case failed (`sim-small only`, `both`, `every model`, `sim-small, sim-medium`)
   * and each model's outcome. Absent in a run of one model.
   */
  model?: string;
  fails_on?: string;
  models?: ModelOutcome[];
}

/** One model's outcome of a case, beside the trajectory the analyst reads. */
export interface ModelOutcome {
  model: string;
  pass: boolean;
  output: string;
}

/**
 * One step of a trajectory as the analyst sees it: a call with its arguments and its clipped result, or
 * the final answer; `issue` marks where it went wrong (a scorer finding pointing at this step, a failed
 * call). `omitted` stands for steps cut to fit the token budget.
 */
export interface EvidenceStep {
  turn?: number;
  call?: string;
  args?: unknown;
  ok?: boolean;
  result?: string;
  say?: string;
  answer?: string;
  issue?: string;
  omitted?: number;
}

export function stageHeader(stage: string): string {
  return `${STAGE_HEADER_PREFIX}${stage}`;
}

/** The stage named by the first header line, or null. */
export function readStageHeader(text: string): string | null {
  const m = /^# SkillOpt stage: ([A-Za-z0-9_]+)\s*$/m.exec(text);
  return m ? m[1]! : null;
}

export function tag(name: string, body: string): string {
  return `<${name}>\n${body.replace(/\n+$/, '')}\n</${name}>`;
}

/** Inner text of the first `<name>…</name>` section (without the surrounding newlines), or null. */
export function readTag(text: string, name: string): string | null {
  const open = `<${name}>`;
  const close = `</${name}>`;
  const start = text.indexOf(open);
  if (start < 0) return null;
  const end = text.lastIndexOf(close);
  if (end < start) return null;
  return text
    .slice(start + open.length, end)
    .replace(/^\n/, '')
    .replace(/\n$/, '');
}

/** A fenced ```json block; the fence grows when the JSON itself contains a run of backticks. */
export function jsonBlock(value: unknown): string {
  const body = JSON.stringify(value, null, 2);
  let fence = '```';
  while (body.includes(fence)) fence += '`';
  return `${fence}json\n${body}\n${fence}`;
}

/** Every fenced ```json block of a text, parsed; blocks that do not parse are skipped. */
export function readJsonBlocks(text: string): unknown[] {
  const out: unknown[] = [];
  const re = /(^|\n)(`{3,})json[^\n]*\n([\s\S]*?)\n\2(?=\n|$)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    try {
      out.push(JSON.parse(m[3]!));
    } catch {
      // not JSON: a reader of this protocol ignores it
    }
  }
  return out;
}

export function skillSection(skill: string): string {
  return tag('current_skill', skill);
}

export function budgetSection(n: number): string {
  return tag('edit_budget', String(n));
}

export function readBudget(text: string): number | null {
  const raw = readTag(text, 'edit_budget');
  if (raw === null) return null;
  const n = Number.parseInt(raw.trim(), 10);
  return Number.isFinite(n) ? n : null;
}

export function trajectoriesSection(trajectories: Trajectory[]): string {
  return tag('trajectories', trajectories.map(jsonBlock).join('\n\n'));
}

export function readTrajectories(text: string): Trajectory[] {
  const body = readTag(text, 'trajectories');
  if (body === null) return [];
  return readJsonBlocks(body).filter(isTrajectory);
}

function isTrajectory(v: unknown): v is Trajectory {
  if (!v || typeof v !== 'object') return false;
  const t = v as Record<string, unknown>;
  return typeof t.id === 'string' && typeof t.input === 'string' && 'expected' in t;
}

/** A `<name>` section holding one fenced JSON value. */
export function jsonSection(name: string, value: unknown): string {
  return tag(name, jsonBlock(value));
}

export function readJsonSection(text: string, name: string): unknown {
  const body = readTag(text, name);
  if (body === null) return undefined;
  return readJsonBlocks(body)[0];
}
