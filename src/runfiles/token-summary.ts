/** A run's (or a step's) usage: call counters per stage or role (src/model/accounting.ts). */
import { z } from 'zod';

/** Per-stage (or per-role) call counters, keyed by stage; `_total` sums them. */
export const TokenSummarySchema = z.record(
  z.string(),
  z.object({
    calls: z.number(),
    attempts: z.number(),
    retries: z.number(),
    errors: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    // absent from summaries written before they were counted
    cached_prompt_tokens: z.number().default(0),
    reasoning_tokens: z.number().default(0),
    calls_without_usage: z.number().default(0),
    latency_ms: z.number(),
  }),
);
