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
import { withProfilePrices } from '../../sim/profiles.ts';
import { displayPath } from '../../util/paths.ts';
import { defineCommand, helpText, parseFlags } from '../args.ts';
import { cfgOptionsFromFlags, CONFIG_FLAGS } from '../common.ts';
import type { Command } from '../command.ts';
import { printErr, printOut } from '../../util/print.ts';
import { printableJson } from '../../util/control-chars.ts';
import { currentEnv } from '../../util/io-context.ts';

const SPEC = defineCommand({
  name: 'config',
  flags: {
    config: { ...CONFIG_FLAGS.config, help: 'YAML config (its _base_ chain is followed); default: built-in defaults' },
    'cfg-options': {
      ...CONFIG_FLAGS['cfg-options'],
      help: 'override config keys (dotted section.key, or legacy flat keys like batch_size)',
    },
    'model-cache': CONFIG_FLAGS['model-cache'],
    json: { type: 'boolean', help: 'print JSON instead of YAML' },
  },
  notes:
    'Precedence: defaults < _base_ files < the config file < environment (OPENAI_COMPATIBLE_*, SKILLOPT_OUT_ROOT) < --cfg-options',
});

export const command: Command = {
  usage: helpText(SPEC),
  async run(argv) {
    const { values: args, positionals } = parseFlags(SPEC, argv);
    if (positionals.length > 0) {
      printErr(`skillopt config: unexpected argument '${positionals[0]}'\n\nUsage: ${helpText(SPEC)}`);
      return 2;
    }
    const env = currentEnv();
    const loaded = loadConfig({ path: args.config, cfgOptions: cfgOptionsFromFlags(args), env });
    const roles = resolveRoles(loaded.config, env, { sourceOf: loaded.sourceOf });
    for (const w of loaded.warnings) printErr(`${pc.yellow('skillopt: warning:')} ${w}`);
    // as a run resolves it: a simulated profile's model priced by its profile unless the config prices it
    const config = redactConfig(withProfilePrices(loaded.config));
    if (args.json) {
      printOut(printableJson(JSON.stringify(config, null, 2)));
      return 0;
    }
    const header = [
      '# skillopt resolved configuration (secrets redacted)',
      '# files, in inheritance order:',
      ...(loaded.files.length > 0
        ? loaded.files.map((f) => `#   ${displayPath(f)}`)
        : ['#   (none: built-in defaults)']),
      '# roles:',
      ...Object.values(roles).map(
        (r) =>
          `#   ${r.role}: ${r.backend} model=${r.model || '""'}` +
          (r.backend === 'simulated' ? ' (in-process simulated server)' : ` url=${r.baseURL} key-env=${r.apiKeyEnv}`),
      ),
    ];
    printOut(`${header.join('\n')}\n${stringify(config, { lineWidth: 0 })}`.trimEnd());
    return 0;
  },
};
