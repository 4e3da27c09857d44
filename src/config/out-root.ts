/** Where a run writes: `env.out_root`, or upstream's timestamped `outputs/<prefix>_<env>_…_<stamp>`. */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { markCreatedRunDir } from '../util/lock.ts';
import type { SkillOptConfig } from './schema.ts';

function timestamp(date = new Date()): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);
}

/** Upstream's auto out_root name, `outputs/<prefix>_<env>[_<extra>]_<stamp>` (second resolution). */
export function defaultOutRootName(
  config: SkillOptConfig,
  prefix: string,
  extra?: string,
  now: Date = new Date(),
): string {
  const parts = [prefix, config.env.name || 'skills', extra, timestamp(now)].filter(Boolean);
  return parts.join('_').replace(/[^\w.-]+/g, '-');
}

/**
 * Create a new folder `<base>/<name>` exclusively; when it exists (another run started in the same
 * second, e.g. a shard of the same CI job), `<name>-2`, `<name>-3`, … Returns its absolute path.
 */
export function createFreshDir(base: string, name: string): string {
  mkdirSync(base, { recursive: true });
  for (let n = 1; ; n++) {
    const dir = resolve(base, n === 1 ? name : `${name}-${n}`);
    try {
      mkdirSync(dir);
      markCreatedRunDir(dir);
      return dir;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 10_000) throw e;
    }
  }
}

/**
 * `env.out_root` when set, else a new folder `outputs/<prefix>_<env>_<stamp>` (upstream's auto out_root),
 * created here so two runs started in the same second never share it.
 */
export function outRoot(
  config: SkillOptConfig,
  prefix: string,
  extra?: string,
  opts: { now?: () => Date; base?: string } = {},
): string {
  if (config.env.out_root) return resolve(config.env.out_root);
  return createFreshDir(
    resolve(opts.base ?? 'outputs'),
    defaultOutRootName(config, prefix, extra, opts.now?.() ?? new Date()),
  );
}
