/** A score for humans: three decimals, or an em dash when there is none. */
export function score3(x: number | null | undefined): string {
  return x === null || x === undefined ? '—' : x.toFixed(3);
}
