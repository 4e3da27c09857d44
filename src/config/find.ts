/** Which config file a run reads (a module of its own: the suites' workers ask it without loading the config parser). */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { currentEnv } from '../util/io-context.ts';

/** The project's default config, used when neither --config nor SKILLOPT_CONFIG names one. */
export const PROJECT_CONFIG = 'skillopt.yaml';

/**
 * Which config file a run reads: the one named (`--config`, the plugin's `config` option), else
 * `SKILLOPT_CONFIG`, else `skillopt.yaml` in the folder the command runs in. `skillopt test` and plain
 * `vitest run` both ask here, so both find the same file. Undefined when there is none.
 */
export function findConfigPath(named?: string, env: NodeJS.ProcessEnv = currentEnv()): string | undefined {
  return named || env.SKILLOPT_CONFIG || (existsSync(resolve(PROJECT_CONFIG)) ? PROJECT_CONFIG : undefined);
}
