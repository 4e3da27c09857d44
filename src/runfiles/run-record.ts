/**
 * run.json: what run a folder holds — its kind and the fingerprint a resume or a new run into the same
 * folder is checked against. `version` is the fingerprint's own format (kept for older readers). Readers
 * need only `kind`; the rest is typed when present.
 */
import { z } from 'zod';
import { schemaVersion } from './version.ts';

export const RUN_KINDS = ['test', 'eval', 'optimize'] as const;

const json: z.ZodType<unknown> = z.json();

export const RunRecordSchema = z.looseObject({
  schema_version: schemaVersion,
  version: z.number().optional(),
  kind: z.enum(RUN_KINDS),
  skillopt_version: z.string().optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
  fingerprint: z.record(z.string(), json).optional(),
  about: z.record(z.string(), z.string()).optional(),
  may_differ_on_resume: z.array(z.string()).optional(),
});
export type RunRecordFile = z.infer<typeof RunRecordSchema>;
