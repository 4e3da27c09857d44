/**
 * run.json: what run a folder holds — its kind and the fingerprint a resume or a new run into the same
 * folder is checked against. `version` is the fingerprint's own format (kept for older readers).
 */
import { z } from 'zod';
import { schemaVersion } from './version.ts';

export const RUN_KINDS = ['test', 'eval', 'optimize'] as const;

const json: z.ZodType<unknown> = z.json();

export const RunRecordSchema = z.looseObject({
  schema_version: schemaVersion,
  version: z.number(),
  kind: z.enum(RUN_KINDS),
  skillopt_version: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  fingerprint: z.record(z.string(), json),
  about: z.record(z.string(), z.string()),
  may_differ_on_resume: z.array(z.string()),
});
export type RunRecordFile = z.infer<typeof RunRecordSchema>;
