import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CallOutcome } from '../../../src/fleet/client';
import { FleetLogSpec } from '../../../src/fleet/logspec';
import { NodeDirectory } from '../../../src/fleet/directory';
import { FilePutBackStore, PutBackPersistError } from '../../../src/fleet/putback-store';
import type { FleetEvent, FleetNode } from '../../../src/fleet/types';
import { DisabledProvider } from '../../../src/metrics/disabled/provider';
import type { Counter } from '../../../src/metrics/types';
import { CaptureLoggers } from '../../support/capture-logger';
import { FakeScheduler } from '../../support/fake-scheduler';

/**
 * The logspec logic with time in the test's hands. Nodes are a double of Fabric's /logspec (GET
 * answers the normalised spec, PUT 204 or 400, a stopped node refuses the connection); the same
 * paths run against real peers in test/integration/fleet/real-nodes.test.ts.
 */
class NodeDouble {
  spec = 'info';
  down = false;
  calls: string[] = [];
}

function setup(names: string[], directory?: NodeDirectory) {
  const scheduler = new FakeScheduler();
  const doubles = new Map(names.map((name) => [name, new NodeDouble()]));
  const nodes: FleetNode[] = names.map((name) => ({ name, url: `https://${name}:1`, dialect: 'peer', group: 'g', labels: {} }));
  const client = {
    call: (node: FleetNode, method: 'GET' | 'PUT', _path: string, body?: unknown): Promise<CallOutcome> => {
      const double = doubles.get(node.name)!;
      double.calls.push(method);
      if (double.down) return Promise.resolve({ ok: false, reason: 'unreachable', error: 'ECONNREFUSED', latencyMs: 0 });
      if (method === 'GET') return Promise.resolve({ ok: true, status: 200, body: { spec: double.spec }, text: '', latencyMs: 0 });
      double.spec = (body as { spec: string }).spec;
      return Promise.resolve({ ok: true, status: 204, body: undefined, text: '', latencyMs: 0 });
    },
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-logspec-'));
  const events: FleetEvent[] = [];
  const loggers = new CaptureLoggers();
  const logger = loggers.getLogger('operations.fleet');
  const lines = loggers.entries;
  const provider = new DisabledProvider();
  const counted: string[] = [];
  const countingPutBacks = { with: (labels: { result?: string }) => ({ add: () => void counted.push(labels.result ?? '') }) } as unknown as Counter;
  const make = (override?: NodeDirectory) =>
    new FleetLogSpec({
      nodes: override ?? directory ?? new NodeDirectory(nodes),
      client,
      concurrency: 4,
      scheduler,
      store: new FilePutBackStore(dir),
      logger,
      changes: provider.newCounter({ name: 'c', help: 'c', labelNames: ['result'] }),
      putBacks: countingPutBacks,
      emit: (event) => events.push(event),
      random: () => 0.5,
    });
  const manager = make();
  // An empty state directory: nothing to load (the load settles within the first await of a test).
  void manager.start();
  /** Lets queued work (promise chains) run after timers fired. */
  const settle = async (which: FleetLogSpec = manager) => {
    for (let i = 0; i < 20; i += 1) await Promise.resolve();
    await which.idle();
  };
  return { scheduler, doubles, manager, make, dir, events, lines, settle, nodes, counted };
}

describe('fleet logspec with an injected scheduler', () => {
  test('a second TTL keeps the spec from before the first: the put-back never restores debug', async () => {
    const { scheduler, doubles, manager, settle } = setup(['a']);
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 60_000 }, 'op');
    scheduler.advance(30_000);
    await manager.set({ spec: 'gossip=debug:info', selector: {}, ttlMs: 60_000 }, 'op');
    expect(manager.pendingPutBacks()).toMatchObject([{ node: 'a', previous: 'info', specs: ['debug', 'gossip=debug:info'] }]);
    scheduler.advance(59_000);
    await settle();
    expect(doubles.get('a')!.spec).toBe('gossip=debug:info');
    scheduler.advance(1_000);
    await settle();
    expect(doubles.get('a')!.spec).toBe('info');
    expect(manager.pendingPutBacks()).toEqual([]);
  });

  test('a node unreachable when its TTL ends is kept and tried again with backoff until it answers', async () => {
    const { scheduler, doubles, manager, settle, events } = setup(['a']);
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 10_000 }, 'op');
    doubles.get('a')!.down = true;
    scheduler.advance(10_000);
    await settle();
    expect(manager.pendingPutBacks()).toHaveLength(1);
    scheduler.advance(1_000); // first retry after 1 s (backoff, jitter at its middle)
    await settle();
    scheduler.advance(2_000);
    await settle();
    expect(doubles.get('a')!.calls.filter((call) => call === 'GET')).toHaveLength(4);
    doubles.get('a')!.down = false;
    scheduler.advance(4_000);
    await settle();
    expect(doubles.get('a')!.spec).toBe('info');
    expect(manager.pendingPutBacks()).toEqual([]);
    // Reported when it starts failing and when it ends, with the attempts: not at every retry.
    const results = events.filter((event) => event.type === 'fleet.logspec.putback').map((event) => [event.nodes[0]?.result, event.nodes[0]?.attempts]);
    expect(results).toEqual([
      ['failed', 1],
      ['restored', 4],
    ]);
  });

  test('a write without TTL makes the spec permanent: the earlier put-back is dropped', async () => {
    const { scheduler, doubles, manager, settle } = setup(['a']);
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 10_000 }, 'op');
    await manager.set({ spec: 'warning', selector: {} }, 'op');
    expect(manager.pendingPutBacks()).toEqual([]);
    scheduler.advance(20_000);
    await settle();
    expect(doubles.get('a')!.spec).toBe('warn');
  });

  test('put-backs that cannot be written: the request fails and no node is changed', async () => {
    const { doubles, manager, dir } = setup(['a', 'b']);
    // A directory where the state file goes: the rename fails (whoever runs the test, root included).
    mkdirSync(path.join(dir, 'fleet-putbacks.json'));
    await expect(manager.set({ spec: 'debug', selector: {}, ttlMs: 10_000 }, 'op')).rejects.toBeInstanceOf(PutBackPersistError);
    expect([doubles.get('a')!.spec, doubles.get('b')!.spec]).toEqual(['info', 'info']);
    expect(doubles.get('a')!.calls).toEqual(['GET']);
    expect(manager.pendingPutBacks()).toEqual([]);
  });

  test('the state file: atomic JSON, loaded by the next instance; a corrupt file stops the start naming it', async () => {
    const { manager, make, dir, scheduler, doubles, settle } = setup(['a']);
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 10_000 }, 'op');
    const file = path.join(dir, 'fleet-putbacks.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ version: 1, pending: [{ node: 'a', previous: 'info', specs: ['debug'], actor: 'op' }] });
    manager.stop();
    const next = make();
    await next.start();
    expect(next.pendingPutBacks()).toHaveLength(1);
    // Restarted before the TTL ended: the put-back fires when it was due, not at once.
    scheduler.advance(9_000);
    await settle(next);
    expect(doubles.get('a')!.spec).toBe('debug');
    scheduler.advance(1_000);
    await settle(next);
    expect(doubles.get('a')!.spec).toBe('info');
    expect(next.pendingPutBacks()).toEqual([]);
    next.stop();
    writeFileSync(file, '{"version":1,"pending":[{"node":');
    await expect(make().start()).rejects.toThrow(/fleet-putbacks\.json is not JSON/);
  });

  test('every write is one audit line with actor, selector, spec, TTL and each node result', async () => {
    const { manager, lines } = setup(['a', 'b']);
    await manager.set({ spec: 'gossip=debug', selector: { names: ['a', 'b'] }, ttlMs: 5_000 }, 'CN=operator');
    const audit = lines.filter((line) => line.fields?.audit === 'fleet.logspec.set');
    expect(audit).toHaveLength(1);
    expect(audit[0]?.fields).toMatchObject({
      actor: 'CN=operator',
      selector: { names: ['a', 'b'] },
      spec: 'gossip=debug:info',
      ttlMs: 5_000,
      nodes: [
        { name: 'a', result: 'applied', previous: 'info' },
        { name: 'b', result: 'applied', previous: 'info' },
      ],
    });
  });

  test('a selector naming a node, group or label the fleet does not have is refused before any node is touched', async () => {
    const { doubles, manager } = setup(['a', 'b']);
    await expect(manager.set({ spec: 'debug', selector: { names: ['a', 'typo'] } }, 'op')).rejects.toThrow('selector.names: no node named "typo" in the fleet');
    await expect(manager.set({ spec: 'debug', selector: { groups: ['org9'] } }, 'op')).rejects.toThrow('selector.groups: no group "org9" in the fleet');
    await expect(manager.set({ spec: 'debug', selector: { labels: { role: 'none' } } }, 'op')).rejects.toThrow(
      'selector.labels: no node of the fleet has the label "role"',
    );
    await expect(manager.restore({ labels: { constructor: 'x' } }, 'op')).rejects.toThrow('selector.labels: no node of the fleet has the label "constructor"');
    expect(doubles.get('a')!.calls).toEqual([]);
  });

  test('a put-back whose node discovery no longer lists is retried, then given up after 10 minutes: reported once at each end', async () => {
    const node: FleetNode = { name: 'a.fabric', url: 'https://a:1', dialect: 'peer', group: 'g', labels: {} };
    const directory = new NodeDirectory([], ['pods']);
    directory.replaceSource('pods', [node]);
    const { scheduler, manager, settle, events, lines, counted } = setup(['a.fabric'], directory);
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 10_000 }, 'op');
    directory.remove('pods', 'a.fabric');
    scheduler.advance(10_000);
    await settle();
    for (let elapsed = 0; elapsed < 11 * 60_000; elapsed += 5_000) {
      scheduler.advance(5_000);
      await settle();
    }
    expect(manager.pendingPutBacks()).toEqual([]);
    const reported = events.filter((event) => event.type === 'fleet.logspec.putback').map((event) => event.nodes[0]!);
    expect(reported).toHaveLength(2);
    expect(reported[0]).toMatchObject({ result: 'failed', attempts: 1, error: expect.stringContaining('is not in the fleet now') as string });
    expect(reported[1]).toMatchObject({
      name: 'a.fabric',
      result: 'failed',
      error: "node a.fabric has not been in the fleet for 10 minutes (discovery no longer lists it): its put-back to 'info' is given up",
    });
    expect(reported[1]!.attempts).toBeGreaterThan(5);
    expect(lines.filter((line) => line.fields?.audit === 'fleet.logspec.putback')).toHaveLength(2);
    // Every attempt is counted (the put-back alert watches the failures increase), none after the end.
    expect(counted.filter((result) => result === 'failed')).toHaveLength(reported[1]!.attempts!);
  });

  test('a put-back due before discovery has listed waits; a node back within the limit is put back', async () => {
    const node: FleetNode = { name: 'a.fabric', url: 'https://a:1', dialect: 'peer', group: 'g', labels: {} };
    const directory = new NodeDirectory([], ['pods']);
    directory.replaceSource('pods', [node]);
    const { scheduler, manager, settle, doubles, make } = setup(['a.fabric'], directory);
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 10_000 }, 'op');
    manager.stop();
    // A restart: a new directory, not listed yet.
    const fresh = new NodeDirectory([], ['pods']);
    const next = make(fresh);
    await next.start();
    scheduler.advance(60_000);
    await settle(next);
    expect(doubles.get('a.fabric')!.spec).toBe('debug');
    fresh.replaceSource('pods', []);
    await settle(next);
    scheduler.advance(60_000);
    await settle(next);
    expect(next.pendingPutBacks()).toHaveLength(1);
    fresh.upsert('pods', node);
    scheduler.advance(60_000);
    await settle(next);
    expect(doubles.get('a.fabric')!.spec).toBe('info');
    expect(next.pendingPutBacks()).toEqual([]);
  });
});
