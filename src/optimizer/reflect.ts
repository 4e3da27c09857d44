/**
 * ② REFLECT: split a batch's results into failures and successes, shuffle each with the batch seed,
 * cut minibatches of `gradient.minibatch_size`, and ask one analyst per minibatch (in parallel, at most
 * `gradient.analyst_workers`) for at most L edits. Every minibatch's reply is saved as
 * `patches/minibatch_{fail,succ}_NNN.json` and reused on resume.
 */
import { join } from 'node:path';
import type { CaseRecord, TrajectoryStep } from '../types.ts';
import { writeJsonAtomic } from '../util/atomic.ts';
import { mapPool } from '../util/pool.ts';
import { displayPath } from '../util/paths.ts';
import { MinibatchFileSchema, readRunFile, type MinibatchFile } from '../runfiles/index.ts';
import { PyRandom } from '../util/rng.ts';
import { Accounting } from '../model/accounting.ts';
import type { KeptCosts } from './kept-cost.ts';
import { OptimizerLLM } from './llm.ts';
import {
  budgetSection,
  skillSection,
  trajectoriesSection,
  type EvidenceStep,
  type Trajectory,
} from '../protocol/prompt.ts';
import { parseCallFindings } from '../protocol/tool-feedback.ts';
import { payloadKey, stageSuffix, type Item, type Patch, type SourceType, type UpdateMode } from './patch.ts';
import type { FailurePattern } from './step-buffer.ts';
import type { StageName } from '../protocol/schemas.ts';
import type { StepStage } from './subject.ts';
import { lastUserMessage } from '../util/messages.ts';
import type { ModelLabels } from './model-labels.ts';

/** Clip length of a call's result, an assistant text and a final answer in the analyst's evidence. */
export const EVIDENCE_CLIP_CHARS = 300;

function clip(text: string, max = EVIDENCE_CLIP_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length} chars]`;
}

const sameArgs = (a: unknown, b: unknown) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});

/**
 * A case's trajectory as the analyst reads it (docs/optimizer.md, "Learning from trajectories"): each call
 * with its arguments and its result clipped to EVIDENCE_CLIP_CHARS, the assistant's text and final answer,
 * and an `issue` on the step the scorer's tool-call findings point at (a wrong, extra or out-of-order call;
 * a missing call is marked on the final answer, which came without it) or on a call that failed.
 */
export function compactSteps(trajectory: readonly TrajectoryStep[], feedback: string): EvidenceStep[] {
  const steps: EvidenceStep[] = [];
  const byCallId = new Map<string, EvidenceStep>();
  for (const s of trajectory) {
    if (s.kind === 'assistant') {
      const calls = s.tool_calls ?? [];
      const text = s.content?.trim() ?? '';
      if (calls.length === 0) {
        steps.push({ turn: s.turn, answer: clip(text) });
        continue;
      }
      if (text) steps.push({ turn: s.turn, say: clip(text) });
      for (const c of calls) {
        const step: EvidenceStep = { turn: s.turn, call: c.name, args: c.args };
        steps.push(step);
        byCallId.set(c.id, step);
      }
      continue;
    }
    if (!s.result) continue;
    const step = (s.tool_call_id !== undefined ? byCallId.get(s.tool_call_id) : undefined) ?? null;
    if (step && step.result === undefined) {
      step.ok = s.result.ok;
      step.result = clip(s.result.content);
    } else {
      steps.push({ turn: s.turn, call: s.result.name, ok: s.result.ok, result: clip(s.result.content) });
    }
  }
  const flag = (step: EvidenceStep | undefined, issue: string) => {
    if (!step) return;
    step.issue = step.issue ? `${step.issue}; ${issue}` : issue;
  };
  const callStep = (name: string, args: unknown) =>
    steps.find((x) => x.call === name && sameArgs(x.args, args)) ?? steps.find((x) => x.call === name);
  const finalStep = [...steps].reverse().find((x) => x.answer !== undefined) ?? steps[steps.length - 1];
  for (const f of parseCallFindings(feedback)) {
    if (f.kind === 'missing') flag(finalStep, `answered without calling ${f.name} ${JSON.stringify(f.args ?? {})}`);
    else if (f.kind === 'wrong')
      flag(callStep(f.name, f.args), `wrong arguments (expected ${JSON.stringify(f.expected ?? {})})`);
    else if (f.kind === 'extra') flag(callStep(f.name, f.args), 'extra call');
    else flag(callStep(f.name, f.args), `out of order (expected after ${f.after})`);
  }
  for (const x of steps) if (x.ok === false) x.issue = x.issue ? `the call failed; ${x.issue}` : 'the call failed';
  return steps;
}

/** A case's trajectory as the analysts read it; `labels`: a run over several models (model-labels.ts). */
export function toTrajectory(r: CaseRecord, labels?: ModelLabels): Trajectory {
  const user = lastUserMessage(r.messages);
  const t: Trajectory = {
    id: r.id,
    task_type: r.task_type,
    input: user,
    output: r.output,
    expected: r.expected,
    score: { hard: r.hard, soft: r.soft },
    feedback: r.feedback,
  };
  if (r.trajectory && r.trajectory.length > 0) t.steps = compactSteps(r.trajectory, r.feedback);
  return labels ? { ...t, ...labels } : t;
}

const approxTokens = (t: Trajectory) => Math.ceil(JSON.stringify(t).length / 4);

const TRIMMABLE = ['input', 'output', 'feedback'] as const;
const STEP_TEXTS = ['result', 'answer', 'say'] as const;
const MIN_TRIM_CHARS = 200;

/** A trimmable text of a trajectory: a top-level field, or a step's result, answer or text. */
interface Slot {
  text: string;
  set(text: string): void;
}

/** The longest text of a trajectory (the one a trim cuts): top-level fields first on a tie. */
function longestSlot(t: Trajectory): Slot {
  const field = TRIMMABLE.reduce((a, b) => (t[b].length > t[a].length ? b : a));
  let best: Slot = { text: t[field], set: (x) => (t[field] = x) };
  for (const step of t.steps ?? []) {
    for (const key of STEP_TEXTS) {
      const text = step[key];
      if (text !== undefined && text.length > best.text.length) best = { text, set: (x) => (step[key] = x) };
    }
  }
  return best;
}

/** The steps a step cut may omit: not the first, not the last, not one marked with an issue, not a marker. */
function droppable(steps: readonly EvidenceStep[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < steps.length - 1; i++) {
    const s = steps[i]!;
    if (s.issue === undefined && s.omitted === undefined) out.push(i);
  }
  return out;
}

/** Omit the middle half of the droppable steps, one `{ omitted: n }` marker per run of omitted steps. */
function omitSteps(t: Trajectory): void {
  const steps = t.steps!;
  const candidates = droppable(steps);
  const n = Math.ceil(candidates.length / 2);
  const from = Math.floor((candidates.length - n) / 2);
  const drop = new Set(candidates.slice(from, from + n));
  const out: EvidenceStep[] = [];
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    const omitted = drop.has(i) ? 1 : s.omitted;
    if (omitted === undefined) {
      out.push(s);
      continue;
    }
    const last = out[out.length - 1];
    if (last?.omitted !== undefined) last.omitted += omitted;
    else out.push({ omitted });
  }
  t.steps = out;
}

/**
 * Fit trajectories into a token budget (≈ chars/4): repeatedly halve the longest text of the longest
 * trajectory that still has a long text (a top-level field or a step's result), marking the cut, until the
 * total fits; then, while it still does not fit, omit the middle half of the steps of the longest
 * trajectory that has steps to spare (the first, the last and those marked with an issue stay). Stops
 * when nothing is left to cut. (A trajectory that is long only through fields that are not trimmed, e.g.
 * a big expected answer, does not stop the others from being trimmed.)
 */
export function trimTrajectories(items: Trajectory[], tokenBudget: number): Trajectory[] {
  const out = items.map((t) => ({ ...t, ...(t.steps ? { steps: t.steps.map((s) => ({ ...s })) } : {}) }));
  if (tokenBudget <= 0) return out;
  // Sizes are kept beside the trajectories and updated only for the one a pass trims.
  const sizes = out.map(approxTokens);
  let total = sizes.reduce((s, n) => s + n, 0);
  const resize = (i: number) => {
    const size = approxTokens(out[i]!);
    total -= sizes[i]! - size;
    sizes[i] = size;
  };
  while (total > tokenBudget) {
    let longest = -1;
    for (let i = 0; i < out.length; i++) {
      if (longestSlot(out[i]!).text.length < MIN_TRIM_CHARS) continue;
      if (longest < 0 || sizes[i]! > sizes[longest]!) longest = i;
    }
    if (longest >= 0) {
      const slot = longestSlot(out[longest]!);
      const keep = Math.floor(slot.text.length / 2);
      slot.set(`${slot.text.slice(0, keep)}\n… [trimmed ${slot.text.length - keep} chars]`);
      resize(longest);
      continue;
    }
    for (let i = 0; i < out.length; i++) {
      const steps = out[i]!.steps;
      if (!steps || droppable(steps).length < 2) continue;
      if (longest < 0 || sizes[i]! > sizes[longest]!) longest = i;
    }
    if (longest < 0) break;
    omitSteps(out[longest]!);
    resize(longest);
  }
  return out;
}

export interface ReflectOptions {
  records: CaseRecord[];
  skill: string;
  llm: OptimizerLLM;
  patchesDir: string;
  seed: number;
  /** Per-analyst edit cap L (= optimizer.learning_rate, the static max). */
  maxEdits: number;
  minibatchSize: number;
  workers: number;
  failureOnly: boolean;
  mode: UpdateMode;
  /** Extra prompt sections (step buffer, meta skill), already tagged. */
  context: Array<string | null>;
  tokenBudget: number;
  skillAware: { enabled: boolean; source: 'both' | 'failure_only'; suffix: string };
  /** The analysts' stage names (src/optimizer/subject.ts); default the update mode's. */
  stages?: (base: StepStage, mode: UpdateMode) => StageName;
  /** Where a kept patch's cost is recorded, and counted again when a resumed run reuses it. */
  kept?: KeptCosts;
  /** A run over several models: each record's labels by model (model-labels.ts). */
  labels?: ReadonlyMap<CaseRecord, ModelLabels>;
  /** A run over several models: the analysts' note on labelled failures (prompts/analyst_models.md), after their system prompt. */
  modelsSuffix?: string;
}

export interface ReflectResult {
  failure: Patch[];
  success: Patch[];
  appendixNotes: string[];
  failurePatterns: FailurePattern[];
  /** Minibatches whose patch came from an earlier (interrupted) run. */
  reused: number;
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Normalise an analyst reply into a Patch: the mode's payload list, capped at L, stamped. */
export function normalisePatch(
  reply: Record<string, unknown>,
  opts: { tag: string; source: SourceType; mode: UpdateMode; maxEdits: number },
): Patch | null {
  const inner = (reply.patch ?? {}) as Record<string, unknown>;
  const list = inner[payloadKey(opts.mode)];
  if (!Array.isArray(list) || list.length === 0) return null;
  const batchSize = typeof reply.batch_size === 'number' ? reply.batch_size : 1;
  const items = (list as Item[]).slice(0, opts.maxEdits).map((item) => ({
    ...item,
    source_type: opts.source,
    support_count: item.support_count ?? Math.max(batchSize, 1),
  }));
  if (items.length === 0) return null;
  return { tag: opts.tag, source_type: opts.source, reasoning: String(inner.reasoning ?? ''), items };
}

export async function reflect(o: ReflectOptions): Promise<ReflectResult> {
  const scored = o.records.filter((r) => r.error_kind === null);
  const failures = new PyRandom(o.seed).shuffle(scored.filter((r) => !r.pass));
  const successes = o.failureOnly ? [] : new PyRandom(o.seed + 1).shuffle(scored.filter((r) => r.pass));
  const jobs = [
    ...chunk(failures, o.minibatchSize).map((items, i) => ({
      items,
      source: 'failure' as const,
      tag: `minibatch_fail_${String(i).padStart(3, '0')}`,
    })),
    ...chunk(successes, o.minibatchSize).map((items, i) => ({
      items,
      source: 'success' as const,
      tag: `minibatch_succ_${String(i).padStart(3, '0')}`,
    })),
  ];
  let reused = 0;
  const files = await mapPool(jobs, o.workers, async (job): Promise<MinibatchFile> => {
    const file = join(o.patchesDir, `${job.tag}.json`);
    const saved = readRunFile(MinibatchFileSchema, file, displayPath(file));
    if (saved) {
      reused++;
      o.kept?.reused(file);
      return saved;
    }
    const stage = o.stages
      ? o.stages(job.source === 'failure' ? 'analyst_error' : 'analyst_success', o.mode)
      : (`analyst_${job.source === 'failure' ? 'error' : 'success'}${stageSuffix(o.mode)}` as StageName);
    const user = OptimizerLLM.user(stage, [
      skillSection(o.skill),
      budgetSection(o.maxEdits),
      ...o.context,
      trajectoriesSection(
        trimTrajectories(
          job.items.map((r) => toTrajectory(r, o.labels?.get(r))),
          o.tokenBudget,
        ),
      ),
    ]);
    const wantsNotes = o.skillAware.enabled && (job.source === 'failure' || o.skillAware.source === 'both');
    const tap = new Accounting();
    const suffix = [o.modelsSuffix, wantsNotes ? o.skillAware.suffix : undefined]
      .filter((x) => x !== undefined)
      .join('');
    const reply = (await o.llm.call(stage, user, {
      account: 'analyst',
      systemSuffix: suffix === '' ? undefined : suffix,
      tap,
    })) as Record<string, unknown> | null;
    const result: MinibatchFile = {
      tag: job.tag,
      source_type: job.source,
      ids: job.items.map((r) => r.id),
      reply,
      patch: reply
        ? normalisePatch(reply, { tag: job.tag, source: job.source, mode: o.mode, maxEdits: o.maxEdits })
        : null,
      appendix_notes:
        wantsNotes && reply && Array.isArray(reply.appendix_notes) ? (reply.appendix_notes as string[]) : [],
      failure_summary:
        reply && Array.isArray(reply.failure_summary)
          ? (reply.failure_summary as Array<{ failure_type: string; count: number; description: string }>).map((f) => ({
              pattern: f.failure_type,
              description: f.description,
              count: f.count,
            }))
          : [],
    };
    o.kept?.record(file, tap.snapshot());
    writeJsonAtomic(file, result);
    return result;
  });
  const byTag = (src: SourceType) => files.filter((f) => f.source_type === src && f.patch).map((f) => f.patch!);
  return {
    failure: byTag('failure'),
    success: byTag('success'),
    appendixNotes: files.flatMap((f) => f.appendix_notes),
    failurePatterns: files.flatMap((f) => f.failure_summary),
    reused,
  };
}
