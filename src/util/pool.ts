/** Run `fn` over `items` with at most `workers` in flight; results keep the input order. */
export async function mapPool<T, R>(
  items: readonly T[],
  workers: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed: unknown;
  const lane = async () => {
    while (failed === undefined && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(workers, items.length)) }, lane));
  if (failed !== undefined) throw failed;
  return results;
}
