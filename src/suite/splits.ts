/**
 * Data splits and batch plans, reproducing upstream `skillopt/datasets/base.py` bit for
 * bit where upstream is deterministic (same seeds → same shuffles, via the Python-compatible
 * `PyRandom`), and failing loudly where upstream silently guesses.
 *
 * Conventions:
 * - Epochs are **1-indexed** (upstream's trainer loops `for epoch in 1..num_epochs`), so epoch 1 of
 *   seed 42 shuffles with `Random(42 + 1000)`.
 * - Every function copies its input; the caller's arrays are never reordered.
 */
import type { SkillTask, SplitName, SplitSelector } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import { PyRandom } from '../util/rng.ts';

export const SPLIT_NAMES: readonly SplitName[] = ['train', 'val', 'test'];

const SPLIT_ALIASES: Readonly<Record<string, SplitSelector>> = {
  train: 'train',
  val: 'val',
  valid_seen: 'val',
  selection: 'val',
  validation: 'val',
  test: 'test',
  valid_unseen: 'test',
  all: 'all',
};

/**
 * Canonical split name for a user-supplied one (trimmed, case-insensitive): `train`;
 * `val` ← val/valid_seen/selection/validation; `test` ← test/valid_unseen; `all`.
 * Unknown names throw a one-line error listing the accepted names (upstream silently used `val`).
 */
export function normalizeSplit(name: string): SplitSelector {
  const key = String(name ?? '')
    .trim()
    .toLowerCase();
  const canonical = SPLIT_ALIASES[key];
  if (canonical === undefined) {
    throw new SkillOptError(`unknown split "${String(name)}" (accepted: ${Object.keys(SPLIT_ALIASES).join(', ')})`);
  }
  return canonical;
}

export interface SplitCounts {
  train: number;
  val: number;
  test: number;
}

/** Parse "train:val:test" into three positive integers (as upstream `_parse_split_ratio`). */
export function parseRatio(ratio: string): [number, number, number] {
  const parts = String(ratio ?? '')
    .split(':')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (parts.length !== 3)
    throw new SkillOptError(`split ratio must look like train:val:test (e.g. "2:1:7"), got "${ratio}"`);
  const nums = parts.map((p) => (/^[+]?\d+$/.test(p) ? Number(p) : Number.NaN));
  if (nums.some((n) => !Number.isSafeInteger(n)))
    throw new SkillOptError(`split ratio parts must be integers, got "${ratio}"`);
  if (nums.some((n) => n <= 0)) throw new SkillOptError(`split ratio parts must be positive, got "${ratio}"`);
  return [nums[0]!, nums[1]!, nums[2]!];
}

/**
 * Largest-remainder split sizes for `n` items and a "train:val:test" ratio, exactly as upstream
 * `_compute_split_counts`: each share `n·w/Σw` (computed in doubles, as Python does) is floored,
 * then the leftover items go one each to the splits with the largest fractional part.
 *
 * Tie rule (upstream's sort key `(fraction, weight)` descending, stable): equal fractional parts go
 * to the split with the **larger ratio weight** first, and only when the weights are also equal to
 * the **earlier** split (train before val before test). E.g. n=4, "1:3:4" → fractions .5/.5/0 →
 * the extra item goes to val (weight 3), giving 0:2:2.
 */
export function ratioCounts(n: number, ratio: string): SplitCounts {
  if (!Number.isSafeInteger(n) || n < 0) throw new SkillOptError(`split size must be a non-negative integer, got ${n}`);
  const weights = parseRatio(ratio);
  const denom = weights[0] + weights[1] + weights[2];
  const raw = weights.map((w) => (n * w) / denom);
  const counts = raw.map((r) => Math.floor(r));
  const remaining = n - (counts[0]! + counts[1]! + counts[2]!);
  const order = [0, 1, 2].sort((a, b) => {
    const fa = raw[a]! - counts[a]!;
    const fb = raw[b]! - counts[b]!;
    if (fa !== fb) return fb - fa;
    if (weights[a] !== weights[b]) return weights[b]! - weights[a]!;
    return a - b;
  });
  for (const idx of order.slice(0, remaining)) counts[idx]! += 1;
  return { train: counts[0]!, val: counts[1]!, test: counts[2]! };
}

export interface SplitManifest {
  /** `ratio`: shuffled and cut here; `shipped`: every task carried its own `split`. */
  mode: 'ratio' | 'shipped';
  ratio: string | null;
  seed: number | null;
  counts: SplitCounts;
  ids: { train: string[]; val: string[]; test: string[] };
}

export interface Splits<T> {
  train: T[];
  val: T[];
  test: T[];
  manifest: SplitManifest;
}

function manifestOf<T extends { id: string }>(
  mode: SplitManifest['mode'],
  ratio: string | null,
  seed: number | null,
  parts: { train: T[]; val: T[]; test: T[] },
): SplitManifest {
  return {
    mode,
    ratio,
    seed,
    counts: { train: parts.train.length, val: parts.val.length, test: parts.test.length },
    ids: { train: parts.train.map((t) => t.id), val: parts.val.map((t) => t.id), test: parts.test.map((t) => t.id) },
  };
}

/**
 * Deterministic ratio split (upstream `split_mode: ratio`): copy, shuffle with `PyRandom(seed)`,
 * cut train, val, test in that order by `ratioCounts`.
 */
export function splitByRatio<T extends { id: string }>(tasks: readonly T[], ratio: string, seed: number): Splits<T> {
  const counts = ratioCounts(tasks.length, ratio);
  const shuffled = new PyRandom(seed).shuffle(tasks.slice());
  const train = shuffled.slice(0, counts.train);
  const val = shuffled.slice(counts.train, counts.train + counts.val);
  const test = shuffled.slice(counts.train + counts.val, counts.train + counts.val + counts.test);
  return { train, val, test, manifest: manifestOf('ratio', ratio, seed, { train, val, test }) };
}

/**
 * The splits of a dataset: if every task has a `split` field, those shipped splits are used (aliases
 * normalised, dataset order kept); if only some do, a one-line error names the first task without
 * one; if none do, `splitByRatio(tasks, ratio, seed)`. Duplicate ids and a shipped split of `all`
 * are errors too.
 */
export function resolveSplits<T extends SkillTask>(
  tasks: readonly T[],
  options: { ratio: string; seed: number },
): Splits<T> {
  const seen = new Set<string>();
  for (const task of tasks) {
    if (seen.has(task.id)) throw new SkillOptError(`duplicate task id "${task.id}" in the dataset`);
    seen.add(task.id);
  }
  const hasSplit = (t: T): boolean => t.split !== undefined && t.split !== null && String(t.split).trim() !== '';
  const withSplit = tasks.filter(hasSplit).length;
  if (withSplit === 0) return splitByRatio(tasks, options.ratio, options.seed);
  if (withSplit < tasks.length) {
    const missing = tasks.find((t) => !hasSplit(t))!;
    throw new SkillOptError(
      `task "${missing.id}" has no split while ${withSplit} of ${tasks.length} tasks have one (give every task a split, or none to use the ratio split)`,
    );
  }
  const parts: { train: T[]; val: T[]; test: T[] } = { train: [], val: [], test: [] };
  for (const task of tasks) {
    let split: SplitSelector;
    try {
      split = normalizeSplit(String(task.split));
    } catch (err) {
      throw new SkillOptError(`task "${task.id}": ${(err as Error).message}`);
    }
    if (split === 'all')
      throw new SkillOptError(`task "${task.id}" has split "all"; a task belongs to train, val or test`);
    parts[split].push(task);
  }
  return { ...parts, manifest: manifestOf('shipped', null, null, parts) };
}

/** `env.limit`: limit > 0 keeps the first `limit` items; 0 (or less) keeps all. */
export function applyLimit<T>(items: readonly T[], limit: number): T[] {
  return limit > 0 ? items.slice(0, limit) : items.slice();
}

/** Eval batches are the first `n` items of the split (no sampling); n = 0 → all (upstream `env_num`). */
export function evalPrefix<T>(items: readonly T[], n: number): T[] {
  return n > 0 ? items.slice(0, n) : items.slice();
}

/** `ceil(trainSize / (batchSize · accumulation))`; 0 for an empty train split. */
export function stepsPerEpoch(trainSize: number, batchSize: number, accumulation: number): number {
  assertPositiveInt(batchSize, 'batch_size');
  assertPositiveInt(accumulation, 'accumulation');
  if (!Number.isSafeInteger(trainSize) || trainSize < 0)
    throw new SkillOptError(`train size must be a non-negative integer, got ${trainSize}`);
  return Math.ceil(trainSize / (batchSize * accumulation));
}

export interface TrainBatch<T> {
  /** 0-based batch index within the epoch (step = floor(index / accumulation)). */
  index: number;
  /** `seed + epoch·1000 + index + 1`, used to shuffle the batch's minibatches. */
  seed: number;
  items: T[];
}

export interface PlanTrainEpochOptions {
  batchSize: number;
  seed: number;
  /** 1-indexed epoch. */
  epoch: number;
  accumulation: number;
  /** Override of the steps per epoch (defaults to `stepsPerEpoch(train.length, batchSize, accumulation)`). */
  stepsPerEpoch?: number;
}

/**
 * One epoch of training batches (upstream `SplitDataLoader.plan_train_epoch`):
 * shuffle a copy of all train items with `PyRandom(seed + epoch·1000)` and cut `stepsPerEpoch ·
 * accumulation` consecutive chunks of `batchSize` — every item is seen once per epoch and the last
 * non-empty chunk may be short (107 / 40 → 40, 40, 27).
 *
 * Refill rule (tiny datasets with accumulation > 1, where the cursor runs out before the planned
 * number of batches): a batch that would be empty is instead the first `batchSize` items of the
 * **epoch-shuffled** list reshuffled with `PyRandom(batch seed)`, i.e. `PyRandom(seed + epoch·1000 +
 * index + 1)`. Short (non-empty) batches are never topped up. An empty train split gives empty batches.
 */
export function planTrainEpoch<T>(train: readonly T[], options: PlanTrainEpochOptions): TrainBatch<T>[] {
  const { batchSize, seed, epoch, accumulation } = options;
  assertPositiveInt(batchSize, 'batch_size');
  assertPositiveInt(accumulation, 'accumulation');
  assertPositiveInt(epoch, 'epoch (1-indexed)');
  if (!Number.isSafeInteger(seed)) throw new SkillOptError(`seed must be an integer, got ${seed}`);
  const steps = options.stepsPerEpoch ?? stepsPerEpoch(train.length, batchSize, accumulation);
  if (!Number.isSafeInteger(steps) || steps < 0)
    throw new SkillOptError(`steps_per_epoch must be a non-negative integer, got ${steps}`);

  const epochSeed = seed + epoch * 1000;
  const items = new PyRandom(epochSeed).shuffle(train.slice());
  const total = steps * accumulation;
  const batches: TrainBatch<T>[] = [];
  let cursor = 0;
  for (let index = 0; index < total; index++) {
    const batchSeed = epochSeed + index + 1;
    let batchItems = items.slice(cursor, cursor + batchSize);
    cursor += batchItems.length;
    if (batchItems.length === 0 && items.length > 0) {
      batchItems = new PyRandom(batchSeed).shuffle(items.slice()).slice(0, batchSize);
    }
    batches.push({ index, seed: batchSeed, items: batchItems });
  }
  return batches;
}

/**
 * A random sample of the train split (upstream `build_train_batch`): shuffle a copy with
 * `PyRandom(seed)` and take the first `n` (all when n ≥ size). Slow update and meta skill call it
 * with `seed + epoch·2000`.
 */
export function sampleTrain<T>(train: readonly T[], n: number, seed: number): T[] {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new SkillOptError(`sample size must be a non-negative integer, got ${n}`);
  return new PyRandom(seed).shuffle(train.slice()).slice(0, n);
}

function assertPositiveInt(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new SkillOptError(`${name} must be a positive integer, got ${String(value)}`);
}
