/**
 * One row of results.jsonl: one case (one trial of it), as the reporter collected it. `compare` needs only
 * `suite`, `id` and `pass`, and reads `split`, `hard`, `soft`, `trial`, `error_kind` and `usage` when they
 * are there, so hand-written rows with just those fields compare. A tool-using case's `trajectory`, `turns` and
 * `tool_calls` are checked when present. Every other field is kept as written.
 */
import { z } from 'zod';
import { schemaVersion } from './version.ts';

/** A case's use of one role (CallUsage of src/types.ts; docs/accounting.md): tokens null when a reply had no `usage`. */
export const CallUsageSchema = z.looseObject({
  calls: z.number(),
  attempts: z.number(),
  prompt_tokens: z.number().nullable(),
  completion_tokens: z.number().nullable(),
  cached_prompt_tokens: z.number().nullable().optional(),
  reasoning_tokens: z.number().nullable().optional(),
  cost: z.number().nullable().optional(),
  call_ms: z.number().optional(),
  cache_hits: z.number().optional(),
  cache_misses: z.number().optional(),
  from_cache: z
    .looseObject({
      prompt_tokens: z.number(),
      cached_prompt_tokens: z.number(),
      completion_tokens: z.number(),
      cost: z.number().nullable(),
    })
    .optional(),
});

/** One step of a case's trajectory (docs/agents.md; the TrajectoryStep type of src/types.ts). */
export const TrajectoryStepSchema = z.looseObject({
  turn: z.int().min(1),
  kind: z.enum(['assistant', 'tool']),
  content: z.string().optional(),
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string(),
        name: z.string(),
        args: z.unknown(),
        mcp: z.object({ server: z.string(), tool: z.string() }).optional(),
      }),
    )
    .optional(),
  tool_call_id: z.string().optional(),
  result: z.looseObject({ name: z.string(), ok: z.boolean(), content: z.string(), ms: z.number().min(0) }).optional(),
});

export const ResultRowSchema = z.looseObject({
  schema_version: schemaVersion,
  suite: z.string(),
  id: z.string().min(1),
  split: z.string().nullable().optional(),
  pass: z.boolean(),
  hard: z.number().optional(),
  soft: z.number().optional(),
  trial: z.int().min(0).optional(),
  /** An optimize run over several target models: the model that answered (docs/optimizer.md#several-models). */
  model: z.string().optional(),
  error_kind: z.string().nullable().optional(),
  usage: CallUsageSchema.partial().optional(),
  /** Tool-using cases: every model turn and tool result (docs/agents.md). */
  trajectory: z.array(TrajectoryStepSchema).optional(),
  turns: z.int().min(0).optional(),
  tool_calls: z.int().min(0).optional(),
});
export type ResultRow = z.infer<typeof ResultRowSchema>;
