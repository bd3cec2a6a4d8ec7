/**
 * `fn` over `items`, at most `limit` at a time (helm processes, API and Temporal requests: a
 * namespace of hundreds of objects must not open hundreds at once); results in `items`' order.
 */
export async function inTurns<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
