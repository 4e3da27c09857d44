/** compare.json: `skillopt compare`'s verdict on two runs, with both sides and the case lists. */
import { z } from 'zod';
import { interval, rate, schemaVersion } from './version.ts';

export const CompareSideSchema = z.looseObject({
  source: z.string(),
  arg: z.string().optional(),
  kind: z.string().nullable().optional(),
  suite: z.string().nullable().optional(),
  split: z.string().nullable().optional(),
  cases: z.number(),
  scored: z.number().optional(),
  errored: z.number().optional(),
  pass_rate: rate,
  interval: interval.optional(),
});

export const CompareFileSchema = z.looseObject({
  schema_version: schemaVersion,
  version: z.number().optional(),
  verdict: z.string(),
  rule: z.string(),
  reason: z.string(),
  exit_code: z.number(),
  method: z.string(),
  method_detail: z.string().optional(),
  n_paired: z.number(),
  baseline: CompareSideSchema,
  candidate: CompareSideSchema,
  delta: rate,
  interval: interval,
  counts: z.record(z.string(), z.number()),
  regressed: z.array(z.unknown()),
  fixed: z.array(z.unknown()),
  simulated: z.boolean().optional(),
});
export type CompareFile = z.infer<typeof CompareFileSchema>;
