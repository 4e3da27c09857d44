/**
 * One row of results.jsonl: one case (one trial of it), as the reporter collected it. `compare` needs only
 * `suite`, `id` and `pass`, and reads `split`, `hard`, `soft`, `trial`, `error_kind` and `usage` when they
 * are there, so hand-written rows with just those fields compare. Every other field is kept as written.
 */
import { z } from 'zod';
import { schemaVersion } from './version.ts';

export const CallUsageSchema = z.looseObject({
  calls: z.number(),
  attempts: z.number(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  cache_hits: z.number().optional(),
  cache_misses: z.number().optional(),
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
  error_kind: z.string().nullable().optional(),
  usage: CallUsageSchema.partial().optional(),
});
export type ResultRow = z.infer<typeof ResultRowSchema>;
