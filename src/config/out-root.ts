/** Where a run writes: `env.out_root`, or upstream's timestamped `outputs/<prefix>_<env>_…_<stamp>`. */
import { join, resolve } from 'node:path';
import type { SkillOptConfig } from './schema.ts';

function timestamp(date = new Date()): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);
}

/** `env.out_root` when set, else `outputs/<prefix>_<env>_<stamp>` (upstream's auto out_root). */
export function outRoot(config: SkillOptConfig, prefix: string, extra?: string): string {
  if (config.env.out_root) return resolve(config.env.out_root);
  const parts = [prefix, config.env.name || 'skills', extra, timestamp()].filter(Boolean);
  return resolve(join('outputs', parts.join('_').replace(/[^\w.-]+/g, '-')));
}
