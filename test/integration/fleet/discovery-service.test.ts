import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fleetConfigFrom, type FleetConfig } from '../../../src/fleet/config';
import type { ObjectHandler, SourceWatch, SourceWatchFactory, WatchSpec } from '../../../src/fleet/discovery/kubernetes';
import { FleetNotReadyError } from '../../../src/fleet/logspec';
import type { PendingPutBack, PutBackStore } from '../../../src/fleet/putback-store';
import { FleetService } from '../../../src/fleet/service';
import { PrometheusProvider } from '../../../src/metrics/prometheus/provider';
import { CaptureLoggers } from '../../support/capture-logger';
import { createTestPki, type TestPki } from '../../support/pki';
import { FakeScheduler } from '../../support/fake-scheduler';
import { delay, waitFor } from '../../support/wait';

/**
 * FleetService with discovery, the list+watch of each source a double of src/kubernetes'
 * Reflector (it lists when the test says, fails with the API server's message, re-lists), and
 * real nodes: small HTTP servers on loopback answering /healthz, /version and /logspec as Fabric does.
 */
class WatchDouble implements SourceWatch {
  started = false;
  stopped = false;
  problem: string | null = null;
  constructor(
    readonly spec: WatchSpec,
    readonly handler: ObjectHandler,
  ) {}
  get synced(): boolean {
    return this.listed;
  }
  listed = false;
  start(): void {
    this.started = true;
  }
  stop(): void {
    this.stopped = true;
  }
  list(objects: unknown[]): void {
    this.listed = true;
    this.problem = null;
    this.handler.replace(objects);
  }
}

interface NodeServer {
  url: string;
  port: number;
  spec: string;
  calls: string[];
  close(): Promise<void>;
}

async function nodeServer(): Promise<NodeServer> {
  const node = { spec: 'info', calls: [] as string[] } as NodeServer;
  const server = http.createServer((req, res) => {
    node.calls.push(`${req.method} ${req.url}`);
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/healthz') res.end(JSON.stringify({ status: 'OK' }));
      else if (req.url === '/version') res.end(JSON.stringify({ Version: '2.5.12', CommitSHA: 'af0b647' }));
      else if (req.method === 'GET') res.end(JSON.stringify({ spec: node.spec }));
      else {
        node.spec = (JSON.parse(body) as { spec: string }).spec;
        res.statusCode = 204;
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  node.port = (server.address() as AddressInfo).port;
  node.url = `http://127.0.0.1:${node.port}`;
  node.close = () => new Promise((resolve) => server.close(() => resolve()));
  return node;
}

/** A Pod of the source, reached at 127.0.0.1 on the node server's port. */
function podAt(name: string, port: number, labels: Record<string, string> = { app: 'peer' }): unknown {
  return {
    metadata: { name, namespace: 'fabric', labels },
    spec: { containers: [{ name: 'peer', ports: [{ name: 'operations', containerPort: port }] }] },
    status: { podIP: '127.0.0.1', phase: 'Running' },
  };
}

function memoryStore(entries: PendingPutBack[] = []): PutBackStore & { saved: PendingPutBack[][] } {
  const saved: PendingPutBack[][] = [];
  return { where: 'memory', saved, load: () => Promise.resolve(entries), save: (pending) => Promise.resolve(void saved.push([...pending])) };
}

function config(extra: Record<string, unknown> = {}): FleetConfig {
  return fleetConfigFrom(
    {
      stateDirectory: mkdtempSync(path.join(tmpdir(), 'fleet-discovery-')),
      pollInterval: '0s',
      minRoundInterval: '0s',
      nodeTimeout: '2s',
      groups: { org1: { tls: { caFiles: [caFile] } } },
      discovery: { kubernetes: [{ kind: 'Pod', selector: 'app=peer', port: 'operations', group: 'org1', scheme: 'http' }] },
      ...extra,
    },
    '/etc/fleet.yaml',
  );
}

function setup(options: { config?: FleetConfig; store?: PutBackStore; scheduler?: FakeScheduler } = {}) {
  const watches: WatchDouble[] = [];
  const factory: SourceWatchFactory = (spec, handler) => {
    const watch = new WatchDouble(spec, handler);
    watches.push(watch);
    return watch;
  };
  const loggers = new CaptureLoggers();
  const provider = new PrometheusProvider({ defaultMetrics: false });
  const fleet = new FleetService(
    options.config ?? config(),
    { logger: loggers.getLogger('operations.fleet'), metrics: provider },
    {
      watchSource: factory,
      kubernetes: { namespace: 'fabric', server: 'https://api', transport: undefined as never },
      store: options.store ?? memoryStore(),
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    },
  );
  const metrics = async (): Promise<string> => (await provider.render(undefined)).body;
  return { fleet, watches, loggers, metrics };
}

const servers: NodeServer[] = [];
let pki: TestPki;
let caFile: string;
beforeAll(async () => {
  pki = await createTestPki();
  caFile = path.join(pki.dir, 'ca.pem');
  fs.writeFileSync(caFile, pki.serverCA.certPem);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await pki.cleanup();
});
async function nodes(count: number): Promise<NodeServer[]> {
  const made = await Promise.all(Array.from({ length: count }, () => nodeServer()));
  servers.push(...made);
  return made;
}

describe('fleet discovery: the node set follows the sources', () => {
  test('until the source has listed, /fleet/healthz is 503 with each source, its problem and why; then the listed nodes', async () => {
    const [a, b] = await nodes(2);
    const { fleet, watches } = setup();
    await fleet.start();
    expect(watches).toHaveLength(1);
    expect(watches[0]!.spec).toEqual({
      resource: 'pods',
      namespace: 'fabric',
      labelSelector: 'app=peer',
      source: 'discovery.kubernetes[0] (Pods app=peer in namespace fabric)',
    });
    expect(watches[0]!.started).toBe(true);
    watches[0]!.problem = 'pods is forbidden: User "system:serviceaccount:fabric:fabric-ops" cannot list resource "pods"';
    const before = await fleet.health();
    expect(before.status).toBe('Service Unavailable');
    expect(before.discovery).toEqual([{ source: 'discovery.kubernetes[0] (Pods app=peer in namespace fabric)', synced: false, problem: watches[0]!.problem }]);
    expect(before.reason).toContain('discovery has not listed every source yet');
    expect(before.reason).toContain('pods is forbidden');
    await expect(fleet.setLogSpec({ spec: 'debug', selector: {} }, 'op')).rejects.toBeInstanceOf(FleetNotReadyError);

    watches[0]!.list([podAt('peer0', a!.port), podAt('peer1', b!.port)]);
    const after = await fleet.health();
    expect(after).toMatchObject({ status: 'OK', healthy: 2, total: 2, discovery: [{ synced: true, problem: null }] });
    expect(after.reason).toBeUndefined();
    expect(after.nodes.map((node) => [node.name, node.url])).toEqual([
      ['peer0.fabric', a!.url],
      ['peer1.fabric', b!.url],
    ]);
    await fleet.stop();
    expect(watches[0]!.stopped).toBe(true);
  });

  test('a node that leaves is gone from health, versions and /metrics; fleet_nodes_known follows; one log line per join and leave', async () => {
    const [a, b] = await nodes(2);
    const { fleet, watches, loggers, metrics } = setup();
    await fleet.start();
    watches[0]!.list([podAt('peer0', a!.port)]);
    watches[0]!.handler.upsert(podAt('peer1', b!.port));
    // The same object again (a status update): no change, no line.
    watches[0]!.handler.upsert(podAt('peer1', b!.port));
    await fleet.health();
    await fleet.versions();
    let text = await metrics();
    expect(text).toContain('fleet_nodes_known 2');
    expect(text).toContain('fleet_node_up{node="peer1.fabric",group="org1"} 1');
    expect(text).toContain('fleet_node_version_info{node="peer1.fabric",version="2.5.12",commit="af0b647"} 1');
    expect(loggers.find('info', /fleet node peer1\.fabric joined/)).toHaveLength(1);

    watches[0]!.handler.remove(podAt('peer1', b!.port));
    text = await metrics();
    expect(text).toContain('fleet_nodes_known 1');
    expect(text).not.toContain('peer1.fabric');
    expect(text).toContain('fleet_node_up{node="peer0.fabric",group="org1"} 1');
    expect((await fleet.health()).nodes.map((node) => node.name)).toEqual(['peer0.fabric']);
    expect((await fleet.versions()).versions[0]!.nodes).toEqual(['peer0.fabric']);
    const left = loggers.find('info', /fleet node peer1\.fabric left/);
    expect(left).toHaveLength(1);
    expect(left[0]!.fields).toMatchObject({ node: 'peer1.fabric', url: b!.url, group: 'org1' });

    // A Pod that starts terminating leaves; a re-list without peer0 (after a 410) removes it too.
    watches[0]!.handler.upsert(podAt('peer1', b!.port));
    watches[0]!.handler.upsert({
      ...(podAt('peer1', b!.port) as object),
      metadata: { name: 'peer1', namespace: 'fabric', deletionTimestamp: '2026-01-01T00:00:00Z' },
    });
    watches[0]!.list([]);
    expect((await fleet.health()).nodes).toEqual([]);
    expect(await metrics()).toContain('fleet_nodes_known 0');
    expect(await metrics()).not.toContain('node="peer0.fabric"');
    await fleet.stop();
  });

  test('an object that cannot be a node is warned about once, not at every event; a name the configuration holds is kept', async () => {
    const [a] = await nodes(1);
    const { fleet, watches, loggers } = setup({
      config: config({ nodes: [{ name: 'peer0.fabric', url: a!.url, group: 'org1' }] }),
    });
    await fleet.start();
    const portless = { metadata: { name: 'couch', namespace: 'fabric', labels: {} }, spec: { containers: [] }, status: { podIP: '10.0.0.9' } };
    watches[0]!.list([portless, podAt('peer0', 1)]);
    watches[0]!.handler.upsert(portless);
    watches[0]!.handler.upsert(portless);
    watches[0]!.list([portless, podAt('peer0', 1)]);
    expect(loggers.find('warn', /Pod fabric\/couch is not a node: no container of the Pod has a port named "operations"/)).toHaveLength(1);
    expect(loggers.find('warn', /Pod fabric\/peer0 is not a node: its name peer0\.fabric is a node of the configuration/)).toHaveLength(1);
    expect(fleet.directory.byName('peer0.fabric')?.url).toBe(a!.url);
    await fleet.stop();
  });

  test('a pending put-back loaded at start waits until discovery has listed, then puts its node back', async () => {
    const [a] = await nodes(1);
    a!.spec = 'debug';
    const store = memoryStore([{ node: 'peer0.fabric', previous: 'info', specs: ['debug'], dueAt: 0, actor: 'op' }]);
    const { fleet, watches } = setup({ store });
    await fleet.start();
    // Not listed yet: nothing is put back meanwhile.
    await delay(50);
    expect(a!.calls).toEqual([]);
    expect(fleet.pendingPutBacks()).toHaveLength(1);
    watches[0]!.list([podAt('peer0', a!.port)]);
    await waitFor('the put-back after the list', () => fleet.pendingPutBacks().length === 0, { everyMs: 10 });
    expect(a!.spec).toBe('info');
    expect(fleet.pendingPutBacks()).toEqual([]);
    await fleet.stop();
  });
});

describe('fleet defects', () => {
  function tlsConfig(nodeUrls: string[]): FleetConfig {
    const dir = pki.dir;
    return fleetConfigFrom(
      {
        stateDirectory: mkdtempSync(path.join(tmpdir(), 'fleet-defects-')),
        pollInterval: '0s',
        minRoundInterval: '0s',
        nodeTimeout: '500ms',
        groups: { org1: { tls: { caFiles: [caFile] } } },
        nodes: nodeUrls.map((url, index) => ({ name: `n${index}`, url, group: 'org1' })),
      },
      path.join(dir, 'fleet.yaml'),
    );
  }

  test('group credentials are looked at (stat) at most once a second per group, not at every node call', async () => {
    const scheduler = new FakeScheduler();
    const urls = Array.from({ length: 20 }, (_, index) => `https://127.0.0.1:${1 + index}`);
    const fleet = new FleetService(
      tlsConfig(urls),
      { logger: new CaptureLoggers().getLogger('f'), metrics: new PrometheusProvider({ defaultMetrics: false }) },
      { scheduler },
    );
    const stat = jest.spyOn(fs, 'statSync');
    try {
      await fleet.health();
      await fleet.health();
      expect(stat).toHaveBeenCalledTimes(0);
      scheduler.advance(1000);
      await fleet.health();
      // One check of the group's one file after a second: 1, where every call made 20 per round before.
      expect(stat).toHaveBeenCalledTimes(1);
    } finally {
      stat.mockRestore();
    }
  });

  test('stop() waits for a round in flight (bounded by nodeTimeout)', async () => {
    // A node that accepts and never answers: the round ends at nodeTimeout (500 ms).
    let asked = false;
    const hung = https.createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, () => {
      asked = true;
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    const fleet = new FleetService(tlsConfig([url]), {
      logger: new CaptureLoggers().getLogger('f'),
      metrics: new PrometheusProvider({ defaultMetrics: false }),
    });
    try {
      let ended = false;
      const round = fleet.health().then(() => (ended = true));
      await waitFor('the round to ask the hung node', () => asked, { everyMs: 10 });
      await fleet.stop();
      expect(ended).toBe(true);
      await round;
    } finally {
      hung.closeAllConnections();
      await new Promise((resolve) => hung.close(resolve));
    }
  });

  test('node latency is taken on the injected clock, not the wall clock', async () => {
    const [a] = await nodes(1);
    let time = 0;
    const clock = { now: () => (time += 250) };
    const fleet = new FleetService(
      fleetConfigFrom(
        { stateDirectory: tmpdir(), pollInterval: '0s', groups: { g: { tls: { caFiles: [caFile] } } }, nodes: [{ name: 'a', url: a!.url, group: 'g' }] },
        '/f.yaml',
      ),
      { logger: new CaptureLoggers().getLogger('f'), metrics: new PrometheusProvider({ defaultMetrics: false }) },
      { clock },
    );
    expect((await fleet.health()).nodes[0]!.latencyMs).toBe(250);
  });

  test('tlsServerName: the node certificate is verified against that name, not the URL host', async () => {
    const server = https.createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (_req, res) => res.end('{"status":"OK"}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const fleet = new FleetService(tlsConfig([url]), {
      logger: new CaptureLoggers().getLogger('f'),
      metrics: new PrometheusProvider({ defaultMetrics: false }),
    });
    try {
      const client = (
        fleet as unknown as { client: { call(node: object, method: string, path: string): Promise<{ ok: boolean; reason?: string; error?: string }> } }
      ).client;
      const node = { name: 'n', url, dialect: 'unknown', group: 'org1', labels: {} };
      // The certificate names localhost and 127.0.0.1, not peer0.fabric.svc.
      expect(await client.call({ ...node, tlsServerName: 'localhost' }, 'GET', '/healthz')).toMatchObject({ ok: true });
      const refused = await client.call({ ...node, tlsServerName: 'peer0.fabric.svc' }, 'GET', '/healthz');
      expect(refused).toMatchObject({ ok: false, reason: 'tls' });
      expect(refused.error).toContain('peer0.fabric.svc');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
