/**
 * The one rule for many tests at once (docs/statistics.md "Many cases, one rule"): the Benjamini–Hochberg
 * step-up adjustment (1995), which controls the false discovery rate. Of the members called significant,
 * the expected share that did not change is at most α; and when nothing changed at all, the chance that
 * any member is called significant is at most α. Its tests must be independent or positively dependent:
 * a comparison's cases are independent given their pooled trials.
 *
 * A family is every test of one question over one comparison (for `compare`: one direction, "got worse"
 * or "got better", over the comparison's paired cases). A member whose own test cannot reach α at all,
 * whatever it observed, is left out of the family (Tarone 1990; Gilbert 2005 for the false discovery
 * rate): which members those are depends only on what the tests condition on (a case's pooled trials),
 * never on their outcome, so the guarantee holds over the members that remain, and a suite of many cases
 * that cannot move does not dilute the few that can.
 */

/**
 * Benjamini–Hochberg adjusted p-values, in the order given: with the m p-values sorted, p₍ᵢ₎ becomes
 * min over j ≥ i of min(1, m·p₍ⱼ₎ / j). A member is significant at α exactly when its adjusted p is
 * below α.
 */
export function adjustedPValues(ps: readonly number[]): number[] {
  const m = ps.length;
  for (const p of ps)
    if (!(p >= 0 && p <= 1)) throw new RangeError(`adjustedPValues needs p-values in [0, 1], got ${p}`);
  const order = ps.map((_, i) => i).sort((a, b) => ps[a]! - ps[b]! || a - b);
  const adjusted = new Array<number>(m);
  let running = 1;
  for (let rank = m; rank >= 1; rank--) {
    const i = order[rank - 1]!;
    running = Math.min(running, (m * ps[i]!) / rank);
    adjusted[i] = Math.min(1, running);
  }
  return adjusted;
}

/** A member of a family: its p-value, and the smallest p-value its test could have given. */
export interface FamilyMember {
  p: number;
  attainable: number;
}

/**
 * Adjusted p-values of a family at level `alpha` (adjustedPValues over the members whose test can reach
 * `alpha`); a member that cannot is no part of the family and keeps its own p-value, which is at least
 * `alpha`.
 */
export function familyAdjusted(members: readonly FamilyMember[], alpha: number): number[] {
  const inFamily = members.map((m) => m.attainable < alpha);
  const adjusted = adjustedPValues(members.filter((_, i) => inFamily[i]).map((m) => m.p));
  let next = 0;
  return members.map((m, i) => (inFamily[i] ? adjusted[next++]! : m.p));
}
