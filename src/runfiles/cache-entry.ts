/**
 * One model-call cache entry file. `v` is the store's layout version (the `v1/` folder); `sum` the
 * SHA-256 of the entry's JSON without it (absent in entries written before checksums).
 */
import { z } from 'zod';
import { schemaVersion } from './version.ts';

export const CacheEntrySchema = z.looseObject({
  schema_version: schemaVersion,
  v: z.literal(1),
  key: z.string(),
  kind: z.string(),
  role: z.string(),
  stage: z.string(),
  created: z.string(),
  value: z.looseObject({}),
  sum: z.string().optional(),
});
export type CacheEntryFile = z.infer<typeof CacheEntrySchema>;
