/**
 * Runs `work` over `items` with at most `limit` calls in flight, results in item order. A fleet of
 * 500 nodes is never asked all at once: sockets, TLS handshakes and buffers stay bounded.
 * `work` must not throw (node calls return their failure as a value).
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as T);
    }
  };
  const workers: Array<Promise<void>> = [];
  for (let count = 0; count < Math.min(Math.max(1, limit), items.length); count += 1) workers.push(worker());
  await Promise.all(workers);
  return results;
}
