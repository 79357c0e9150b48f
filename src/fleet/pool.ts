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

/**
 * Pure: how many of `limit` workers take nodes of the probe lane first: a quarter, at least one
 * (none with a single worker, which takes the main lane first).
 */
export function probeSlots(limit: number): number {
  return limit < 2 ? 0 : Math.max(1, Math.floor(limit / 4));
}

/**
 * Runs `work` over two lanes with at most `limit` calls in flight in all, results in each lane's
 * order. probeSlots(limit) workers take from `probe` first, the others from `main` first; a worker
 * whose lane is empty helps the other. So an item of `main` never queues behind one of `probe`:
 * while `main` has items, at least limit - probeSlots(limit) workers serve it, and a worker takes
 * a `probe` item before a `main` one only if it is one of the probe lane's own. `work` must not throw.
 */
export async function mapLanes<T, R>(
  lanes: { main: readonly T[]; probe: readonly T[] },
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<{ main: R[]; probe: R[] }> {
  interface Queue {
    items: readonly T[];
    next: number;
    results: R[];
  }
  const main: Queue = { items: lanes.main, next: 0, results: new Array<R>(lanes.main.length) };
  const probe: Queue = { items: lanes.probe, next: 0, results: new Array<R>(lanes.probe.length) };
  const worker = async (order: readonly [Queue, Queue]): Promise<void> => {
    for (;;) {
      const queue = order.find((candidate) => candidate.next < candidate.items.length);
      if (queue === undefined) return;
      const index = queue.next;
      queue.next += 1;
      queue.results[index] = await work(queue.items[index] as T);
    }
  };
  const total = lanes.main.length + lanes.probe.length;
  const workers = Math.min(Math.max(1, limit), total);
  const probeFirst = Math.min(probeSlots(limit), lanes.probe.length, workers);
  const running: Array<Promise<void>> = [];
  for (let count = 0; count < workers; count += 1) running.push(worker(count < probeFirst ? [probe, main] : [main, probe]));
  await Promise.all(running);
  return { main: main.results, probe: probe.results };
}

/** What the last round learnt of a node, for the next round's lanes. */
export interface LastCall {
  /** It answered (any HTTP answer, or a TLS refusal) within half of nodeTimeout. */
  quick: boolean;
  /** The round that asked it (rounds are numbered from 1). */
  round: number;
}

/**
 * Pure: the next round's lanes. `main`: the nodes whose last call answered quickly; `probe`: the
 * others (never asked, timed out, unreachable, slow), which then hold at most probeSlots of the
 * workers while `main` has nodes. In each lane, the least recently asked first (never asked before
 * any), else in the given order: nodes a deadline left unasked are asked first next time.
 */
export function planLanes<T extends { name: string }>(nodes: readonly T[], last: (name: string) => LastCall | undefined): { main: T[]; probe: T[] } {
  const entries = nodes.map((node, index) => ({ node, index, last: last(node.name) }));
  entries.sort((a, b) => (a.last?.round ?? 0) - (b.last?.round ?? 0) || a.index - b.index);
  return {
    main: entries.filter((entry) => entry.last?.quick === true).map((entry) => entry.node),
    probe: entries.filter((entry) => entry.last?.quick !== true).map((entry) => entry.node),
  };
}

/**
 * Pure: what a call tells of its node for the lanes; null when it tells nothing (not asked, or
 * cut by the round's deadline before half of nodeTimeout: the node had no fair chance).
 */
export function lastCallFrom(
  outcome: { ok: boolean; reason?: string; latencyMs: number },
  state: { asked: boolean; cut: boolean; nodeTimeoutMs: number; round: number },
): LastCall | null {
  if (!state.asked) return null;
  const slow = outcome.latencyMs >= state.nodeTimeoutMs / 2;
  if (state.cut && !outcome.ok && !slow) return null;
  const failed = !outcome.ok && (outcome.reason === 'timeout' || outcome.reason === 'unreachable');
  return { quick: !failed && !slow, round: state.round };
}
