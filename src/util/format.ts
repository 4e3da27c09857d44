/** A score for humans: three decimals, or an em dash when there is none. */
export function score3(x: number | null | undefined): string {
  return x === null || x === undefined ? '—' : x.toFixed(3);
}

/** A token count for a person: `1234`, `12.3k`, `1.23M`. */
export function kTok(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}

/** A rate, fraction or difference as run files store it: six decimals (null stays null). */
export function round6<T extends number | null>(x: T): T {
  return (x === null ? null : Math.round(x * 1e6) / 1e6) as T;
}

/** An amount or p-value as run files store it: six significant digits, so small ones keep their size (null stays null). */
export function sig6<T extends number | null>(x: T): T {
  return (x === null ? null : Number(x.toPrecision(6))) as T;
}
