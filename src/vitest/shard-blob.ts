/** The blob file a Vitest shard writes, kept when skillopt takes `--shard` over (the CLI and the reporter both do). */
import type { ShardSpec } from '../contract/session.ts';

/**
 * Vitest names a shard's blob `.vitest-reports/blob-<i>-<n>.json` after `--shard`, which skillopt takes
 * over (it shards by task): `outputFile` with that name added unless a blob file is named already.
 */
export function withShardBlob(outputFile: unknown, shard: ShardSpec): Record<string, unknown> | string {
  if (typeof outputFile === 'string') return outputFile;
  const files = (outputFile ?? {}) as Record<string, unknown>;
  return files.blob ? files : { ...files, blob: `.vitest-reports/blob-${shard.index}-${shard.count}.json` };
}
