import type { CallOutcome } from '../../../src/fleet/client';
import { NodeDirectory } from '../../../src/fleet/directory';
import { FleetLogSpec, maxAuditNodes, putBackBatchWindowMs } from '../../../src/fleet/logspec';
import type { PendingPutBack, PutBackStore } from '../../../src/fleet/putback-store';
import type { FleetEvent, FleetNode, NodePutBack } from '../../../src/fleet/types';
import { DisabledProvider } from '../../../src/metrics/disabled/provider';
import type { Counter } from '../../../src/metrics/types';
import { CaptureLoggers } from '../../support/capture-logger';
import { FakeScheduler } from '../../support/fake-scheduler';

/**
 * Put-backs that end together run together (issue 30 item 10): a TTL on N nodes ends in one
 * store write, one event (one Kubernetes Event) and one audit line, not N of each; every node's
 * result stays in the event and the metrics. Time is the test's (FakeScheduler); nodes are a
 * double of Fabric's /logspec as in logspec.test.ts; the store keeps what it is given and counts
 * the writes.
 */
class NodeDouble {
  spec = 'info';
  down = false;
}

class CountingStore implements PutBackStore {
  readonly where = 'the test store';
  readonly writes: PendingPutBack[][] = [];
  constructor(private readonly initial: PendingPutBack[] = []) {}
  load(): Promise<PendingPutBack[]> {
    return Promise.resolve(this.initial.map((entry) => ({ ...entry })));
  }
  save(pending: readonly PendingPutBack[]): Promise<void> {
    this.writes.push(pending.map((entry) => ({ ...entry })));
    return Promise.resolve();
  }
}

const names = (count: number, prefix = 'peer'): string[] => Array.from({ length: count }, (_, index) => `${prefix}${index}.org1`);

async function setup(nodeNames: string[], initial: PendingPutBack[] = []) {
  const scheduler = new FakeScheduler();
  const doubles = new Map(nodeNames.map((name) => [name, new NodeDouble()]));
  const nodes: FleetNode[] = nodeNames.map((name) => ({ name, url: `https://${name}:1`, dialect: 'peer', group: 'org1', labels: {} }));
  const client = {
    call: (node: FleetNode, method: 'GET' | 'PUT', _path: string, body?: unknown): Promise<CallOutcome> => {
      const double = doubles.get(node.name)!;
      if (double.down) return Promise.resolve({ ok: false, reason: 'unreachable', error: 'connect ECONNREFUSED', latencyMs: 0 });
      if (method === 'GET') return Promise.resolve({ ok: true, status: 200, body: { spec: double.spec }, text: '', latencyMs: 0 });
      double.spec = (body as { spec: string }).spec;
      return Promise.resolve({ ok: true, status: 204, body: undefined, text: '', latencyMs: 0 });
    },
  };
  const store = new CountingStore(initial);
  const events: FleetEvent[] = [];
  const loggers = new CaptureLoggers();
  const counted: string[] = [];
  const putBacks = { with: (labels: { result?: string }) => ({ add: () => void counted.push(labels.result ?? '') }) } as unknown as Counter;
  const manager = new FleetLogSpec({
    nodes: new NodeDirectory(nodes),
    client,
    concurrency: 4,
    scheduler,
    store,
    logger: loggers.getLogger('operations.fleet'),
    changes: new DisabledProvider().newCounter({ name: 'c', help: 'c', labelNames: ['result'] }),
    putBacks,
    emit: (event) => events.push(event),
    random: () => 0.5,
  });
  await manager.start();
  /** Moves time on and lets the queued put-backs run. */
  const advance = async (ms: number): Promise<void> => {
    scheduler.advance(ms);
    for (let i = 0; i < 20; i += 1) await Promise.resolve();
    await manager.idle();
  };
  const putBackEvents = (): Array<Extract<FleetEvent, { type: 'fleet.logspec.putback' }>> =>
    events.filter((event): event is Extract<FleetEvent, { type: 'fleet.logspec.putback' }> => event.type === 'fleet.logspec.putback');
  const auditLines = () => loggers.entries.filter((line) => line.fields.audit === 'fleet.logspec.putback');
  return { scheduler, doubles, manager, store, events, putBackEvents, auditLines, counted, advance };
}

const specs = (doubles: Map<string, NodeDouble>): string[] => [...doubles.values()].map((double) => double.spec);

describe('put-backs that end together run together', () => {
  test('a TTL on 5 nodes ends: 1 store write, 1 event with the 5 nodes, 1 audit line naming them; each node counted', async () => {
    const nodeNames = names(5);
    const { manager, doubles, store, putBackEvents, auditLines, counted, advance } = await setup(nodeNames);
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 60_000 }, 'CN=operator');
    expect(specs(doubles)).toEqual(Array(5).fill('debug'));
    const writesBefore = store.writes.length;

    await advance(60_000);
    expect(specs(doubles)).toEqual(Array(5).fill('info'));
    expect(store.writes.slice(writesBefore)).toEqual([[]]);
    expect(putBackEvents()).toEqual([
      {
        type: 'fleet.logspec.putback',
        actor: 'ttl of CN=operator',
        trigger: 'ttl',
        nodes: nodeNames.map((name) => ({ name, result: 'restored', spec: 'info' })),
      },
    ]);
    const lines = auditLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('info');
    expect(lines[0]!.msg).toBe(
      `fleet logging specification put back (ttl) by ttl of CN=operator: 5 of 5 nodes restored: ${nodeNames.map((name) => `${name}=restored`).join(', ')}`,
    );
    expect(lines[0]!.fields).toMatchObject({ actor: 'ttl of CN=operator', trigger: 'ttl', nodeCount: 5, restored: 5 });
    expect(counted).toEqual(Array(5).fill('restored'));
    expect(manager.pendingPutBacks()).toEqual([]);
  });

  test(`TTLs of two writes ending within ${putBackBatchWindowMs} ms of each other run as one batch at the first's end; one due later runs on its own`, async () => {
    const { manager, doubles, store, putBackEvents, scheduler, advance } = await setup(['a', 'b', 'c', 'd']);
    await manager.set({ spec: 'debug', selector: { names: ['a', 'b'] }, ttlMs: 10_000 }, 'op');
    scheduler.advance(400);
    await manager.set({ spec: 'debug', selector: { names: ['c'] }, ttlMs: 10_000 }, 'op');
    scheduler.advance(600 + putBackBatchWindowMs);
    await manager.set({ spec: 'debug', selector: { names: ['d'] }, ttlMs: 10_000 }, 'op');
    const writesBefore = store.writes.length;

    await advance(10_000 - 400 - 600 - putBackBatchWindowMs);
    expect(specs(doubles)).toEqual(['info', 'info', 'info', 'debug']);
    expect(putBackEvents().map((event) => event.nodes.map((node) => node.name))).toEqual([['a', 'b', 'c']]);
    expect(store.writes.slice(writesBefore).map((pending) => pending.map((entry) => entry.node))).toEqual([['d']]);

    await advance(400 + 600 + putBackBatchWindowMs);
    expect(specs(doubles)).toEqual(['info', 'info', 'info', 'info']);
    expect(putBackEvents().map((event) => event.nodes.map((node) => node.name))).toEqual([['a', 'b', 'c'], ['d']]);
    expect(store.writes.slice(writesBefore).map((pending) => pending.map((entry) => entry.node))).toEqual([['d'], []]);
  });

  test('a put-back is never run later than its due time, and not earlier than the batch window', async () => {
    const { manager, doubles, advance } = await setup(['a', 'b']);
    await manager.set({ spec: 'debug', selector: { names: ['a'] }, ttlMs: 10_000 }, 'op');
    await manager.set({ spec: 'debug', selector: { names: ['b'] }, ttlMs: 10_000 + putBackBatchWindowMs + 1 }, 'op');
    await advance(10_000);
    expect(specs(doubles)).toEqual(['info', 'debug']);
    await advance(putBackBatchWindowMs);
    expect(specs(doubles)).toEqual(['info', 'debug']);
    await advance(1);
    expect(specs(doubles)).toEqual(['info', 'info']);
  });

  test('overdue put-backs found at start run as one batch', async () => {
    const nodeNames = names(5);
    const initial = nodeNames.map((node, index) => ({ node, previous: 'info', specs: ['debug'], dueAt: -10_000 + index * 100, actor: 'CN=operator' }));
    const { doubles, store, putBackEvents, auditLines, advance } = await setup(nodeNames, initial);
    for (const double of doubles.values()) double.spec = 'debug';
    await advance(0);
    expect(specs(doubles)).toEqual(Array(5).fill('info'));
    expect(store.writes).toEqual([[]]);
    expect(putBackEvents()).toHaveLength(1);
    expect(putBackEvents()[0]!.nodes.map((node) => node.name)).toEqual(nodeNames);
    expect(auditLines()).toHaveLength(1);
  });

  test('nodes that do not answer: one failing batch, their retries together, one batch when they are back; every attempt counted', async () => {
    const nodeNames = names(3);
    const { manager, doubles, store, putBackEvents, auditLines, counted, advance } = await setup(nodeNames);
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 10_000 }, 'op');
    for (const double of doubles.values()) double.down = true;
    const writesBefore = store.writes.length;

    await advance(10_000);
    expect(putBackEvents()).toHaveLength(1);
    expect(putBackEvents()[0]!.nodes).toEqual(
      nodeNames.map((name) => ({ name, result: 'failed', attempts: 1, error: 'reading the current spec: connect ECONNREFUSED' })),
    );
    expect(auditLines()).toHaveLength(1);
    expect(auditLines()[0]!.level).toBe('warn');
    expect(auditLines()[0]!.msg).toContain('0 of 3 nodes restored');
    // Nothing changed in the pending list: nothing written.
    expect(store.writes.length).toBe(writesBefore);

    await advance(1_000); // the first retry (backoff 1 s, jitter at its middle): all three together, not reported
    expect(putBackEvents()).toHaveLength(1);
    for (const double of doubles.values()) double.down = false;
    await advance(2_000);
    expect(specs(doubles)).toEqual(Array(3).fill('info'));
    expect(putBackEvents()).toHaveLength(2);
    expect(putBackEvents()[1]!.nodes).toEqual(nodeNames.map((name) => ({ name, result: 'restored', attempts: 3, spec: 'info' })));
    expect(store.writes.slice(writesBefore)).toEqual([[]]);
    expect(auditLines()).toHaveLength(2);
    expect(counted).toEqual([...Array(6).fill('failed'), ...Array(3).fill('restored')]);
  });

  test(`the audit line of a large batch names ${maxAuditNodes} nodes, those not restored first, and counts the rest; the event carries every node`, async () => {
    const nodeNames = names(30);
    const { manager, doubles, putBackEvents, auditLines, counted, advance } = await setup(nodeNames);
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 10_000 }, 'op');
    doubles.get('peer25.org1')!.spec = 'warning';
    doubles.get('peer27.org1')!.down = true;

    await advance(10_000);
    const line = auditLines()[0]!;
    expect(auditLines()).toHaveLength(1);
    expect(line.level).toBe('warn');
    const named = line.fields.nodes as NodePutBack[];
    expect(named.map((node) => node.name)).toEqual([
      'peer25.org1',
      'peer27.org1',
      ...nodeNames.filter((name) => !['peer25.org1', 'peer27.org1'].includes(name)).slice(0, maxAuditNodes - 2),
    ]);
    expect(line.fields).toMatchObject({ nodeCount: 30, restored: 28, omittedNodes: 30 - maxAuditNodes });
    expect(line.msg).toMatch(
      new RegExp(
        `^fleet logging specification put back \\(ttl\\) by ttl of op: 28 of 30 nodes restored: peer25\\.org1=skipped_changed, peer27\\.org1=failed \\(.*\\), peer0\\.org1=restored, .*, \\.\\.\\. and ${30 - maxAuditNodes} more$`,
      ),
    );
    expect(putBackEvents()).toHaveLength(1);
    expect(putBackEvents()[0]!.nodes).toHaveLength(30);
    expect(counted.filter((result) => result === 'restored')).toHaveLength(28);
  });

  test('put-backs of two writers ending together: one store write, one event and audit line per writer', async () => {
    const { manager, store, putBackEvents, auditLines, advance } = await setup(['a', 'b', 'c']);
    await manager.set({ spec: 'debug', selector: { names: ['a', 'b'] }, ttlMs: 10_000 }, 'CN=alice');
    await manager.set({ spec: 'debug', selector: { names: ['c'] }, ttlMs: 10_000 }, 'CN=bob');
    const writesBefore = store.writes.length;
    await advance(10_000);
    expect(store.writes.slice(writesBefore)).toEqual([[]]);
    expect(putBackEvents().map((event) => [event.actor, event.nodes.map((node) => node.name)])).toEqual([
      ['ttl of CN=alice', ['a', 'b']],
      ['ttl of CN=bob', ['c']],
    ]);
    expect(auditLines().map((line) => line.fields.actor)).toEqual(['ttl of CN=alice', 'ttl of CN=bob']);
  });
});
