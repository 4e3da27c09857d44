/**
 * The models of a matrix run (docs/matrix.md#models): each name of `--models` is a named entry of the
 * config's `models:` section, or else a model id at the target role's endpoint. Each resolves to the run
 * config of a cell whose target is that model: the target role's settings of `model.*`, with what the
 * entry sets in their place. The optimizer and the judge keep theirs.
 */
import { resolveRoleBackends } from '../config/roles.ts';
import type { SkillOptConfig } from '../config/schema.ts';
import { SkillOptError } from '../util/errors.ts';
import { withProfilePrices } from '../sim/profiles.ts';
import { folderLabel } from '../util/paths.ts';

export interface MatrixModel {
  /** As given on `--models`: an entry's name, or a model id. */
  name: string;
  /** The folder-safe form of the name (a cell folder's first part). */
  label: string;
  /** The model id sent in requests. */
  model: string;
  /** `named`: an entry of the config's `models:`; `target`: a model id at the target role's endpoint. */
  source: 'named' | 'target';
  /** The run config of a cell with this model as its target. */
  config: SkillOptConfig;
}

export { folderLabel } from '../util/paths.ts';

/** The names of a `--models` value: comma-separated, repeatable, trimmed; at least one, none twice. */
export function parseModelList(values: readonly string[]): string[] {
  const names = values
    .flatMap((v) => v.split(','))
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (names.length === 0)
    throw new SkillOptError('--models needs at least one model name or id, e.g. --models sim-small,sim-large');
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new SkillOptError(`--models names ${twice} twice`);
  return names;
}

/** The config of a cell whose target is `name` (see the module comment). */
export function modelConfig(
  config: SkillOptConfig,
  name: string,
): { model: string; source: MatrixModel['source']; config: SkillOptConfig } {
  const entry = Object.hasOwn(config.models, name) ? config.models[name]! : null;
  const m = config.model;
  const model = entry?.model ?? name;
  const target: Partial<SkillOptConfig['model']> = { target: model };
  if (entry?.base_url !== undefined)
    Object.assign(target, { target_backend: 'openai_compat', target_base_url: entry.base_url });
  if (entry?.api_key_env !== undefined) target.target_api_key_env = entry.api_key_env;
  if (entry?.temperature !== undefined) target.target_temperature = entry.temperature;
  if (entry?.max_tokens !== undefined) target.target_max_tokens = entry.max_tokens;
  const pricing = entry?.pricing ? { ...m.pricing, [model]: entry.pricing } : m.pricing;
  // a cell's identity holds its own model's simulated settings, not those of the other models
  const profiles =
    m.simulated.profiles && Object.hasOwn(m.simulated.profiles, model)
      ? { [model]: m.simulated.profiles[model]! }
      : undefined;
  const { profiles: _all, ...simulated } = m.simulated;
  const cell: SkillOptConfig = {
    ...config,
    model: { ...m, ...target, pricing, simulated: { ...simulated, ...(profiles ? { profiles } : {}) } },
    models: {},
  };
  const simulatedTarget = resolveRoleBackends(cell.model).target === 'simulated';
  return { model, source: entry ? 'named' : 'target', config: simulatedTarget ? withProfilePrices(cell) : cell };
}

/** Every `--models` name resolved; two names whose folder labels coincide are refused. */
export function resolveMatrixModels(config: SkillOptConfig, names: readonly string[]): MatrixModel[] {
  const models = names.map((name) => ({ name, label: folderLabel(name), ...modelConfig(config, name) }));
  for (const [i, a] of models.entries()) {
    const b = models.slice(i + 1).find((x) => x.label === a.label);
    if (b)
      throw new SkillOptError(
        `--models ${a.name} and ${b.name} would share the cell folder name ${a.label}: rename one (a models: entry's name is free)`,
      );
  }
  return models;
}
