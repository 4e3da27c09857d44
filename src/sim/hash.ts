/**
 * Seeded, order-independent randomness for the simulated model: every "random" decision is a hash of
 * (seed, model, the full request messages, a purpose salt), never a counter, because requests arrive
 * concurrently and must get the same reply whatever the order.
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
