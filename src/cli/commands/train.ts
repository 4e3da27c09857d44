/**
 * `skillopt train`: the SkillOpt training run (epochs × steps, upstream semantics: every configured
 * step runs unless `train.target_pass_rate`, `train.patience` or a budget stops it). Same engine as
 * `skillopt test --optimize`. Rerun with the same `env.out_root` to resume.
 */
import { runOptimize } from '../optimize.ts';
import { defineCommand, helpText, noOperands, parseFlags } from '../args.ts';
import { CONFIG_FLAGS } from '../common.ts';
import type { Command } from '../command.ts';
import { OPTIMIZE_MODEL_FLAGS } from '../matrix-flags.ts';

const SPEC = defineCommand({
  name: 'train',
  flags: {
    config: { ...CONFIG_FLAGS.config, required: true },
    'cfg-options': CONFIG_FLAGS['cfg-options'],
    'model-cache': CONFIG_FLAGS['model-cache'],
    skill: { type: 'string', arg: 'S', help: "the skill to start from (default: the suite's seed skill)" },
    models: {
      type: 'list',
      arg: 'A,B',
      help: "optimize for several target models at once: names of the config's models: entries, or model ids (train.models; docs/optimizer.md#several-models)",
    },
    ...OPTIMIZE_MODEL_FLAGS,
  },
  notes: `  Smoke run:  skillopt train --config configs/dotnetdebug/sim.yaml --cfg-options train.num_epochs=1 \\
                train.batch_size=2 gradient.analyst_workers=1 gradient.minibatch_size=2 env.workers=1 \\
                env.limit=2 optimizer.learning_rate=2 env.out_root=outputs/dotnetdebug_smoke
  Outputs:    <env.out_root>/{best_skill.md, best_skill.diff, summary.json, history.json, steps/…}
  Resume:     rerun the same command with the same env.out_root.`,
});

export const command: Command = {
  usage: helpText(SPEC),
  run(argv) {
    const { values, positionals } = parseFlags(SPEC, argv);
    noOperands(SPEC, positionals);
    return runOptimize({ ...values, trials: undefined }, [], { stopAtTarget: false });
  },
};
