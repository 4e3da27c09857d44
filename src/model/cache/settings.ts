/** What the model-call cache is configured with: its own type, which config/schema.ts's `cache` and `model` sections satisfy. */

/** Read and write, read only, off, replay (no request leaves the process). */
export const CACHE_MODES = ['rw', 'ro', 'off', 'replay'] as const;
export type CacheMode = (typeof CACHE_MODES)[number];

export interface CacheSettings {
  cache: { mode: CacheMode; dir: string };
  /** The simulated model's knobs: they are part of every key, so a changed world misses. */
  model: { simulated: Readonly<Record<string, unknown>> };
}
