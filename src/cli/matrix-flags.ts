/** The flags `eval` and `test` take for a matrix run (docs/matrix.md); the run itself is cli/matrix.ts. */
import type { Flag } from './args.ts';

/** The flags `eval` and `test` take for a matrix run. */
export const MATRIX_FLAGS = {
  models: {
    type: 'list',
    arg: 'A,B',
    help: "run every model × skill cell: names of the config's models: entries, or model ids at the target endpoint (docs/matrix.md)",
  },
  skills: {
    type: 'list',
    arg: 'none,seed,S',
    help: "with --models: the cells' skills: none (the bare model), seed (the suite's own; the default) or skill files, NAME=FILE to name one; lifts are over the first",
  },
  'parallel-cells': {
    type: 'number',
    arg: 'N',
    default: 3,
    help: 'with --models: cells run at once (they share the endpoint limits)',
  },
} as const satisfies Record<string, Flag>;

/** The flags `train` and `test --optimize` take to optimize for several models (docs/optimizer.md#several-models). */
export const OPTIMIZE_MODEL_FLAGS = {
  objective: {
    type: 'string',
    arg: 'worst|mean',
    help: "with --models (train, test --optimize): what the gate and the best skill maximize, the worst model's val score (default) or the mean (train.objective)",
  },
  'transfer-models': {
    type: 'list',
    arg: 'C,…',
    help: 'with --models (train, test --optimize): models the seed and best skills are also scored on at the end, on test (train.transfer_models)',
  },
} as const satisfies Record<string, Flag>;
