/**
 * ② REFLECT: split a batch's results into failures and successes, shuffle each with the batch seed,
 * cut minibatches of `gradient.minibatch_size`, and ask one analyst per minibatch (in parallel, at most
 * `gradient.analyst_workers`) for at most L edits. Every minibatch's reply is saved as
 * `patches/minibatch_{fail,succ}_NNN.json` and reused on resume.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CaseRecord } from '../types.ts';
import { writeJsonAtomic } from '../util/atomic.ts';
import { mapPool } from '../util/pool.ts';
import { PyRandom } from '../util/rng.ts';
import { Accounting } from '../model/accounting.ts';
import type { KeptCosts } from './kept-cost.ts';
import { OptimizerLLM } from './llm.ts';
import { budgetSection, skillSection, trajectoriesSection, type Trajectory } from '../protocol/prompt.ts';
import { payloadKey, stageSuffix, type Item, type Patch, type SourceType, type UpdateMode } from './patch.ts';
import type { FailurePattern } from './step-buffer.ts';
import type { StageName } from '../protocol/schemas.ts';
import type { StepStage } from './subject.ts';
import { lastUserMessage } from '../util/messages.ts';

export function toTrajectory(r: CaseRecord): Trajectory {
  const user = lastUserMessage(r.messages);
  return {
    id: r.id,
    task_type: r.task_type,
    input: user,
    output: r.output,
    expected: r.expected,
    score: { hard: r.hard, soft: r.soft },
    feedback: r.feedback,
  };
}

const approxTokens = (t: Trajectory) => Math.ceil(JSON.stringify(t).length / 4);

const TRIMMABLE = ['input', 'output', 'feedback'] as const;
const MIN_TRIM_CHARS = 200;

/** The longest text field of a trajectory (the one a trim cuts). */
const longestField = (t: Trajectory) => TRIMMABLE.reduce((a, b) => (t[b].length > t[a].length ? b : a));

/**
 * Fit trajectories into a token budget (≈ chars/4): repeatedly halve the longest text field of the
 * longest trajectory that still has a long text field, marking the cut, until the total fits or nothing
 * long is left. (A trajectory that is long only through fields that are not trimmed, e.g. a big expected
 * answer, does not stop the others from being trimmed.)
 */
export function trimTrajectories(items: Trajectory[], tokenBudget: number): Trajectory[] {
  const out = items.map((t) => ({ ...t }));
  if (tokenBudget <= 0) return out;
  // Sizes are kept beside the trajectories and updated only for the one a pass trims.
  const sizes = out.map(approxTokens);
  let total = sizes.reduce((s, n) => s + n, 0);
  while (total > tokenBudget) {
    let longest = -1;
    for (let i = 0; i < out.length; i++) {
      const t = out[i]!;
      if (t[longestField(t)].length < MIN_TRIM_CHARS) continue;
      if (longest < 0 || sizes[i]! > sizes[longest]!) longest = i;
    }
    if (longest < 0) break;
    const t = out[longest]!;
    const field = longestField(t);
    const text = t[field];
    const keep = Math.floor(text.length / 2);
    t[field] = `${text.slice(0, keep)}\n… [trimmed ${text.length - keep} chars]`;
    const size = approxTokens(t);
    total -= sizes[longest]! - size;
    sizes[longest] = size;
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
}

export interface ReflectResult {
  failure: Patch[];
  success: Patch[];
  appendixNotes: string[];
  failurePatterns: FailurePattern[];
  /** Minibatches whose patch came from an earlier (interrupted) run. */
  reused: number;
}

interface MinibatchFile {
  tag: string;
  source_type: SourceType;
  ids: string[];
  reply: Record<string, unknown> | null;
  patch: Patch | null;
  appendix_notes: string[];
  failure_summary: FailurePattern[];
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
    ...chunk(failures, o.minibatchSize).map((items, i) => ({ items, source: 'failure' as const, tag: `minibatch_fail_${String(i).padStart(3, '0')}` })),
    ...chunk(successes, o.minibatchSize).map((items, i) => ({ items, source: 'success' as const, tag: `minibatch_succ_${String(i).padStart(3, '0')}` })),
  ];
  let reused = 0;
  const files = await mapPool(jobs, o.workers, async (job): Promise<MinibatchFile> => {
    const file = join(o.patchesDir, `${job.tag}.json`);
    if (existsSync(file)) {
      reused++;
      o.kept?.reused(file);
      return JSON.parse(readFileSync(file, 'utf8')) as MinibatchFile;
    }
    const stage = o.stages
      ? o.stages(job.source === 'failure' ? 'analyst_error' : 'analyst_success', o.mode)
      : (`analyst_${job.source === 'failure' ? 'error' : 'success'}${stageSuffix(o.mode)}` as StageName);
    const user = OptimizerLLM.user(stage, [
      skillSection(o.skill),
      budgetSection(o.maxEdits),
      ...o.context,
      trajectoriesSection(trimTrajectories(job.items.map(toTrajectory), o.tokenBudget)),
    ]);
    const wantsNotes = o.skillAware.enabled && (job.source === 'failure' || o.skillAware.source === 'both');
    const tap = new Accounting();
    const reply = (await o.llm.call(stage, user, {
      account: 'analyst',
      systemSuffix: wantsNotes ? o.skillAware.suffix : undefined,
      tap,
    })) as Record<string, unknown> | null;
    const result: MinibatchFile = {
      tag: job.tag,
      source_type: job.source,
      ids: job.items.map((r) => r.id),
      reply,
      patch: reply ? normalisePatch(reply, { tag: job.tag, source: job.source, mode: o.mode, maxEdits: o.maxEdits }) : null,
      appendix_notes: wantsNotes && reply && Array.isArray(reply.appendix_notes) ? (reply.appendix_notes as string[]) : [],
      failure_summary: reply && Array.isArray(reply.failure_summary)
        ? (reply.failure_summary as Array<{ failure_type: string; count: number; description: string }>).map((f) => ({ pattern: f.failure_type, description: f.description, count: f.count }))
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
