/** Items grouped by key, groups and their items in first-seen order. */
export function groupBy<T, K, V = T>(
  items: Iterable<T>,
  key: (item: T) => K,
  value: (item: T) => V = (i) => i as unknown as V,
): Map<K, V[]> {
  const groups = new Map<K, V[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(value(item));
    else groups.set(k, [value(item)]);
  }
  return groups;
}
