/** A score for humans: three decimals, or an em dash when there is none. */
export function score3(x: number | null | undefined): string {
  return x === null || x === undefined ? '—' : x.toFixed(3);
}

/** A token count for a person: `1234`, `12.3k`, `1.23M`. */
export function kTok(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}
