/**
 * Two things an optimize run says about its inputs before it spends anything:
 *
 * - `valCoverageWarning`: a validation split that cannot show every label of the dataset. The gate only
 *   sees the labels its val tasks expect, so an edit that teaches a label no val task has cannot raise
 *   the val score (a 40-task, 10-label dataset split 2:1:7 got 8 val tasks and stalled at 0.375).
 * - `evalCfgOptions`: the `--cfg-options` an eval of the best skill must repeat to score the same tasks
 *   the same way (the suggested `next:` command used to drop them, e.g. env.data_path).
 */
import { routeFlatKey } from '../config/keys.ts';
import { isResumableKey } from '../rundir/fingerprint.ts';

/**
 * Labels: tasks whose `expected` is a short string, when there are clearly fewer distinct values than
 * tasks (a classification set, not free-text answers). Returns null when the dataset has no labels or
 * the val split shows them all.
 */
export function valCoverageWarning(
  labels: Record<string, string | null> | undefined,
  valIds: readonly string[],
  trainIds: readonly string[],
): string | null {
  if (!labels) return null;
  const values = Object.values(labels);
  const all = new Set(values.filter((v): v is string => v !== null));
  if (all.size < 2 || values.some((v) => v === null) || all.size > values.length / 2) return null;
  const inVal = new Set(valIds.map((id) => labels[id]).filter((v): v is string => typeof v === 'string'));
  const inTrain = new Set(trainIds.map((id) => labels[id]).filter((v): v is string => typeof v === 'string'));
  const missing = [...all].filter((l) => !inVal.has(l)).sort();
  if (missing.length === 0) return null;
  const n = missing.length;
  const taught = missing.filter((l) => inTrain.has(l));
  const them = taught.length === 1 ? 'it' : 'them';
  const teaches =
    taught.length === 0
      ? `the train split teaches ${n === 1 ? 'it' : 'none of them'} either, and the gate cannot see ${n === 1 ? 'it' : 'them'}`
      : `${taught.length === n ? (n === 1 ? 'the train split teaches it' : `the train split teaches all ${n}`) : `the train split teaches ${taught.length} of the ${n} (${listed(taught)})`}: ` +
        `an edit for ${them} cannot raise the val score, so the gate rejects it`;
  return (
    `the validation split cannot cover the labels: ${values.length} tasks with ${all.size} labels, ${valIds.length} val tasks showing ${inVal.size} of them ` +
    `(${n} missing: ${listed(missing)}); ${teaches} — ` +
    `give val a larger share (env.split_ratio, e.g. 4:4:2) or ship a split field with every label in val`
  );
}

/** At most 8 labels, then how many more. */
function listed(labels: readonly string[]): string {
  return labels.length > 8 ? `${labels.slice(0, 8).join(', ')}, … ${labels.length - 8} more` : labels.join(', ');
}

/** Config keys an eval never reads (the optimizer's sections) or that do not change what it scores (out_root, workers, timeouts…). */
function mattersForEval(path: string): boolean {
  const section = path.slice(0, path.indexOf('.') >= 0 ? path.indexOf('.') : path.length);
  if (['train', 'gradient', 'optimizer'].includes(section)) return false;
  return !isResumableKey(path);
}

/** The `--cfg-options` items (as typed) an eval of this run's skill must repeat. */
export function evalCfgOptions(items: readonly string[]): string[] {
  const out: string[] = [];
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    const key = item.slice(0, eq).trim();
    let path = key;
    if (!key.includes('.')) {
      const routed = routeFlatKey(key);
      if (!('path' in routed)) continue;
      path = routed.path.join('.');
    }
    if (mattersForEval(path)) out.push(item);
  }
  return out;
}

/** A shell word as typed in a suggested command. */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
