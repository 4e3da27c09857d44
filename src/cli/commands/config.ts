/**
 * `skillopt config`: print the resolved, redacted configuration (YAML, or JSON with --json), after
 * inheritance, the environment layer and --cfg-options. An invalid config (unknown key, wrong type,
 * unsupported backend for a role) throws a one-line ConfigError that main prints (exit 2).
 */
import pc from 'picocolors';
import { stringify } from 'yaml';
import { loadConfig } from '../../config/load.ts';
import { redactConfig } from '../../config/redact.ts';
import { resolveRoles } from '../../config/roles.ts';
import { displayPath } from '../../util/paths.ts';
import { redactText } from '../../util/redact.ts';
import { single, takeFlags } from '../args.ts';
import { CONFIG_FLAGS } from '../common.ts';
import type { Command } from '../command.ts';

const USAGE = `skillopt config [--config C] [--cfg-options k=v ...] [--json]

  --config C          YAML config (its _base_ chain is followed); default: built-in defaults
  --cfg-options k=v   override config keys (dotted section.key, or legacy flat keys like batch_size)
  --json              print JSON instead of YAML
Precedence: defaults < _base_ files < the config file < environment (OPENAI_COMPATIBLE_*, SKILLOPT_OUT_ROOT) < --cfg-options`;

export const command: Command = {
  usage: USAGE,
  async run(argv) {
    const args = takeFlags(argv, { ...CONFIG_FLAGS, switches: ['json'] });
    if (args.rest.length > 0) {
      console.error(redactText(`skillopt config: unexpected argument '${args.rest[0]}'\n\nUsage: ${USAGE}`));
      return 2;
    }
    const env = process.env;
    const loaded = loadConfig({ path: single(args, 'config'), cfgOptions: args.flags.get('cfg-options') ?? [], env });
    const roles = resolveRoles(loaded.config, env, { sourceOf: loaded.sourceOf });
    for (const w of loaded.warnings) console.error(redactText(`${pc.yellow('skillopt: warning:')} ${w}`));
    const config = redactConfig(loaded.config);
    if (args.switches.has('json')) {
      console.log(redactText(JSON.stringify(config, null, 2)));
      return 0;
    }
    const header = [
      '# skillopt resolved configuration (secrets redacted)',
      '# files, in inheritance order:',
      ...(loaded.files.length > 0 ? loaded.files.map((f) => `#   ${displayPath(f)}`) : ['#   (none: built-in defaults)']),
      '# roles:',
      ...Object.values(roles).map(
        (r) =>
          `#   ${r.role}: ${r.backend} model=${r.model || '""'}` +
          (r.backend === 'simulated' ? ' (in-process simulated server)' : ` url=${r.baseURL} key-env=${r.apiKeyEnv}`),
      ),
    ];
    console.log(redactText(`${header.join('\n')}\n${stringify(config, { lineWidth: 0 })}`.trimEnd()));
    return 0;
  },
};
