/**
 * `skillopt matrix DIR… [--out OUT] [--baseline B --fail-on-regression]` (docs/ci.md#one-job-per-model):
 * assemble one matrix folder from the matrix folders of separate runs (one CI job per model), then write
 * its statistics and report as a run with `--models` does, gated against a baseline matrix when one is
 * given. The assembly is src/matrix/assemble.ts; the end is ../matrix-report.ts.
 */
import { outRoot } from '../../config/out-root.ts';
import { assembleMatrix, readMatrixInput } from '../../matrix/assemble.ts';
import { matrixExitCode } from '../../suite/verdict.ts';
import { SkillOptError } from '../../util/errors.ts';
import { defineCommand, helpText, parseFlags } from '../args.ts';
import type { Command } from '../command.ts';
import { configFromArgs, CONFIG_FLAGS } from '../common.ts';
import { finishMatrix, matrixBaseline } from '../matrix-report.ts';

const SPEC = defineCommand({
  name: 'matrix',
  operands: 'DIR…',
  flags: {
    out: {
      type: 'string',
      arg: 'OUT',
      help: 'the matrix folder to write (new or empty; default env.out_root, else outputs/matrix_<env>_<time>)',
    },
    baseline: {
      type: 'string',
      arg: 'B',
      help: "a baseline matrix folder (main's): each cell is compared with its cell there",
    },
    'fail-on-regression': {
      type: 'boolean',
      help: "with --baseline: exit 1 when any model's cell regressed (adjusted across cells), 3 when inconclusive",
    },
    'max-regression': {
      type: 'number',
      arg: 'X',
      help: 'with --baseline: the tolerated drop in pass rate (default evaluation.max_regression)',
    },
    config: CONFIG_FLAGS.config,
    'cfg-options': CONFIG_FLAGS['cfg-options'],
  },
  about: `  DIR…  matrix folders of runs with --models (e.g. one CI job per model: eval|test --models <model>
        --skills …), of the same command, split and trials. Their cells are copied into OUT/cells/ and
        OUT gets matrix-run.json, matrix.json, matrix.md and matrix.html, as one run of every cell would
        (docs/matrix.md). evaluation.alpha and evaluation.max_errored come from --config.`,
});

export const command: Command = {
  usage: helpText(SPEC),
  async run(argv) {
    const { values: args, positionals } = parseFlags(SPEC, argv);
    if (positionals.length === 0)
      throw new SkillOptError('skillopt matrix needs the matrix folders to assemble: skillopt matrix DIR… --out OUT');
    if (!args.baseline && (args['fail-on-regression'] || args['max-regression'] !== undefined))
      throw new SkillOptError('--fail-on-regression and --max-regression need --baseline <matrix folder>');
    const { config } = configFromArgs({ ...args, 'model-cache': undefined }, { required: false });
    const inputs = positionals.map(readMatrixInput);
    const baseline = args.baseline
      ? matrixBaseline({
          arg: args.baseline,
          failOnRegression: args['fail-on-regression'],
          maxRegression: args['max-regression'] ?? config.evaluation.max_regression,
        })
      : null;
    const out = args.out ?? outRoot(config, 'matrix');
    const manifest = assembleMatrix(inputs, out);
    const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
    return finishMatrix({
      title: 'skillopt matrix',
      outDir: out,
      manifest,
      config,
      baseline,
      ownExit: matrixExitCode(manifest.cells.map((c) => c.exit_code ?? 3)),
      cells: `${manifest.cells.length} (${plural(manifest.models.length, 'model')} × ${plural(manifest.skills.length, 'skill')}) from ${plural(inputs.length, 'folder')}: ${inputs.map((i) => i.arg).join(', ')}`,
      simulated: inputs.some((i) => i.manifest.models.some((m) => m.backend === 'simulated')),
    });
  },
};
