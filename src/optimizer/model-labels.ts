/**
 * What the analysts read in a run over several target models (docs/optimizer.md#several-models): a train
 * batch ran on every model, and each case (each trial) becomes one trajectory labelled by model — the
 * trajectory of the first model it failed on (of the first model when it passed on every one), with
 * `fails_on` (`sim-small only`, `both`, `every model`, or the list) and each model's pass and output. A
 * case is a failure when it failed on any model, a success when it passed on all of them.
 */
import type { ModelOutcome, Trajectory } from '../protocol/prompt.ts';
import type { CaseRecord } from '../types.ts';
import { clip } from '../util/clip.ts';

export type ModelLabels = Pick<Trajectory, 'model' | 'fails_on' | 'models'>;

/**
 * Where a case failed, in words: `sim-small only`, `both` (of two), `every model`, or the names. `scored`:
 * the models that scored it (default all): a case that errored on a model is never `only` or `every`.
 */
export function failsOn(failing: readonly string[], all: readonly string[], scored: readonly string[] = all): string {
  const whole = scored.length === all.length;
  if (failing.length === 1 && whole) return `${failing[0]} only`;
  if (failing.length === all.length) return all.length === 2 ? 'both' : 'every model';
  return failing.join(', ');
}

/** Clip of a model's output beside the trajectory (the trajectory itself carries the shown model's). */
const OUTPUT_CLIP = 300;

/**
 * One record per case and trial of a batch run on every model (`byModel`, in the run's model order, each
 * model's records in the batch's order), and the labels of each. A case errored on every model keeps its
 * errored record (the analysts skip it); a model on which it errored is left out of its labels.
 */
export function labelledRecords(byModel: ReadonlyArray<readonly [string, readonly CaseRecord[]]>): {
  records: CaseRecord[];
  labels: Map<CaseRecord, ModelLabels>;
} {
  const names = byModel.map(([name]) => name);
  const key = (r: CaseRecord) => `${r.id}\u0000${r.trial ?? ''}`;
  const order: string[] = [];
  const rows = new Map<string, Array<CaseRecord | undefined>>();
  byModel.forEach(([, records], i) => {
    for (const r of records) {
      const k = key(r);
      let list = rows.get(k);
      if (!list) {
        rows.set(k, (list = new Array<CaseRecord | undefined>(names.length).fill(undefined)));
        order.push(k);
      }
      list[i] = r;
    }
  });
  const records: CaseRecord[] = [];
  const labels = new Map<CaseRecord, ModelLabels>();
  for (const k of order) {
    const list = rows.get(k)!;
    const scored = list
      .map((r, i) => (r && r.error_kind === null ? { r, name: names[i]! } : null))
      .filter((x): x is { r: CaseRecord; name: string } => x !== null);
    if (scored.length === 0) {
      records.push(list.find((r) => r !== undefined)!);
      continue;
    }
    const failing = scored.filter((x) => !x.r.pass);
    const shown = failing[0] ?? scored[0]!;
    const models: ModelOutcome[] = scored.map((x) => ({
      model: x.name,
      pass: x.r.pass,
      output: clip(x.r.output, OUTPUT_CLIP),
    }));
    records.push(shown.r);
    labels.set(shown.r, {
      model: shown.name,
      ...(failing.length > 0
        ? {
            fails_on: failsOn(
              failing.map((x) => x.name),
              names,
              scored.map((x) => x.name),
            ),
          }
        : {}),
      models,
    });
  }
  return { records, labels };
}
