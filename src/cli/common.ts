/** Pieces the run commands share: config from flags, the skill file, default output folders. */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { findConfigPath, PROJECT_CONFIG } from '../config/find.ts';
import { loadConfig } from '../config/load.ts';
import { CACHE_MODE_ALIASES, CACHE_MODES, normaliseAlias, type SkillOptConfig } from '../config/schema.ts';
import { SkillOptError } from '../util/errors.ts';
import { checkSkillFile } from '../skill/frontmatter.ts';
import { single, type SplitArgs } from './args.ts';

/** Flags every run command understands. `--model-cache M` is `cache.mode` (not `--cache`: Vitest owns that one). */
export const CONFIG_FLAGS = { valued: ['config', 'model-cache'], multi: ['cfg-options'] };

/**
 * The config: `--config`, else `SKILLOPT_CONFIG`, else `skillopt.yaml` in the current folder. A run that
 * calls a model needs one (it names the endpoint), so without any it stops before the first request.
 */
export function configFromArgs(args: SplitArgs, opts: { required: boolean }): { config: SkillOptConfig; files: string[] } {
  const path = findConfigPath(single(args, 'config'));
  if (!path && opts.required) {
    throw new SkillOptError(
      `no config: pass --config <file.yaml>, set SKILLOPT_CONFIG, or add ${PROJECT_CONFIG} to the project (it names the model endpoint; e.g. --config configs/dotnetdebug/sim.yaml runs offline on the simulated model)`,
    );
  }
  // `--trials k` is `--cfg-options env.trials=k`, and `--model-cache m` is `cache.mode=m`, applied last.
  const trials = single(args, 'trials');
  const cache = single(args, 'model-cache');
  if (cache !== undefined && !(CACHE_MODES as readonly string[]).includes(String(normaliseAlias(cache, CACHE_MODE_ALIASES)))) {
    throw new SkillOptError(`--model-cache ${cache}: expected one of ${CACHE_MODES.join(', ')}`);
  }
  const cfgOptions = [
    ...(args.flags.get('cfg-options') ?? []),
    ...(trials !== undefined ? [`env.trials=${trials}`] : []),
    ...(cache !== undefined ? [`cache.mode=${cache}`] : []),
  ];
  return loadConfig({ path, cfgOptions });
}

/** `--skill none`: the target gets the task alone (no system message), so `compare` shows the skill's lift. */
export const NO_SKILL = { text: '', path: 'none' } as const;

/** The skill a `--skill` flag names: a file, or `none` for the bare model. */
export function skillFromFlag(value: string): { text: string; path: string } {
  return value === NO_SKILL.path ? { ...NO_SKILL } : readSkillFile(value);
}

export function readSkillFile(path: string, what = 'skill'): { text: string; path: string } {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new SkillOptError(`${what} file not found: ${path}`);
  const text = readFileSync(abs, 'utf8');
  if (!text.trim()) throw new SkillOptError(`${what} file is empty: ${path}`);
  checkSkillFile(abs, text); // a SKILL.md (or any skill with frontmatter) follows the Agent Skills format
  return { text, path: abs };
}
