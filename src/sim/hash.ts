/**
 * Seeded, order-independent randomness for the simulated model: every "random" decision is a hash of
 * the seed, the model, a purpose salt and what the decision depends on (for the target: the case's
 * input, the answer its rules give, the sample), never a counter, because requests arrive concurrently
 * and must get the same reply whatever the order.
 */
import { createHash } from 'node:crypto';

/** SHA-256 of a JSON rendering of `parts`, as hex. */
export function digest(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** A number in [0, 1) derived from `parts` (48 bits of the digest). */
export function unitHash(parts: readonly unknown[]): number {
  return Number.parseInt(digest(parts).slice(0, 12), 16) / 2 ** 48;
}

/** An integer in [0, n) derived from `parts`; 0 when n <= 1. */
export function indexHash(parts: readonly unknown[], n: number): number {
  if (n <= 1) return 0;
  return Number.parseInt(digest(parts).slice(12, 24), 16) % n;
}

/**
 * The item with the highest `unitHash([...parts, key(item)])` (rendezvous hashing): a seeded choice that
 * changes only when the chosen item leaves the list or a new one outranks it, not when unrelated items
 * come or go. Null for an empty list.
 */
export function rendezvous<T>(items: readonly T[], key: (item: T) => unknown, parts: readonly unknown[]): T | null {
  let best: T | null = null;
  let bestScore = -1;
  for (const item of items) {
    const score = unitHash([...parts, key(item)]);
    if (score > bestScore) {
      best = item;
      bestScore = score;
    }
  }
  return best;
}
