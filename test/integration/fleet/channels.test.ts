/**
 * GET /fleet/channels, its metrics and `fabric-ops fleet channels` (docs/fleet-channels.md)
 * against doubles of the real Fabric 2.5.12, 3.0.0 and 3.1.5 peers and orderers recorded in
 * ../shared/fixtures/fabric-recorded (test/support/fabric-double.ts: their own /metrics, step by
 * step, over mutual TLS with each org's operations CA): every node at the same height; a peer
 * stopped while the others move and back (its reason while down, behind with the right lag while it
 * catches up, ok after); a peer that answers but whose height stops while the others move (stalled);
 * a node that leaves the fleet (its series gone); and nodes whose /metrics is huge, endless, not the
 * Prometheus text, or has thousands of channels (bounded and reported, the others read in the same round).
 */
import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fleetConfigFrom, fleetExtension, type FleetChannelReport } from '../../../src/fleet';
import type { ObjectHandler, SourceWatch, SourceWatchFactory, WatchSpec } from '../../../src/fleet/discovery/kubernetes';
import { FleetService } from '../../../src/fleet/service';
import { PrometheusProvider } from '../../../src/metrics/prometheus/provider';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { CaptureLoggers } from '../../support/capture-logger';
import { testConfig } from '../../support/config';
import { recordedReleases } from '../../support/fabric-double';
import { request } from '../../support/http';
import { createTestPki, serverTls, type TestPki } from '../../support/pki';
import { FabricNodes, fleetCommandInProcess } from './harness';

jest.setTimeout(180_000);

const quiet = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });

let pki: TestPki;
let stateDir: string;

beforeAll(async () => {
  pki = await createTestPki();
  stateDir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-channels-'));
});

afterAll(async () => {
  await rm(stateDir, { recursive: true, force: true });
  await pki?.cleanup();
});

/** Each org of the network as a fleet group: its operations CA, its operator's client certificate. */
function groupsOf(fabric: FabricNodes): Record<string, { tls: { caFiles: string[]; certFile: string; keyFile: string } }> {
  const groups: Record<string, { tls: { caFiles: string[]; certFile: string; keyFile: string } }> = {};
  for (const node of fabric.nodes) groups[node.org] = { tls: { caFiles: [node.caFile], certFile: node.clientCertFile, keyFile: node.clientKeyFile } };
  return groups;
}

/** channel -> node -> [status, height, lag], orderers then peers. */
function table(report: FleetChannelReport): Record<string, Record<string, [string, number, number]>> {
  return Object.fromEntries(
    report.channels.map((entry) => [
      entry.channel,
      Object.fromEntries(
        [...entry.orderers, ...entry.peers, ...entry.others].map((node) => [node.name, [node.status, node.height, node.lag] as [string, number, number]]),
      ),
    ]),
  );
}

/** Every node of the recorded network at these heights, all ok. */
function allAt(heights: Record<string, number>, nodes: readonly string[]): Record<string, Record<string, [string, number, number]>> {
  return Object.fromEntries(Object.entries(heights).map(([channel, height]) => [channel, Object.fromEntries(nodes.map((name) => [name, ['ok', height, 0]]))]));
}

/** The samples of a metric on an exposition: `labels text -> value`. */
function samples(exposition: string, metric: string): Record<string, string> {
  return Object.fromEntries([...exposition.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} (\\S+)$`, 'gm'))].map((match) => [match[1] ?? '', match[2] ?? '']));
}

describe.each(recordedReleases.map((release) => [release]))('the recorded %s network, step by step', (release) => {
  let fabric: FabricNodes;
  let fleet: OperationsSystem;
  let names: string[];

  const channels = async (): Promise<FleetChannelReport> => {
    const answer = await request(`${fleet.url}/fleet/channels`, { ca: pki.serverCA.certPem, client: pki.client });
    expect(answer.status).toBe(200);
    return answer.json as FleetChannelReport;
  };
  const exposition = async (): Promise<string> => (await request(`${fleet.url}/metrics`, { ca: pki.serverCA.certPem, client: pki.client })).body;
  const command = (args: string[]) =>
    fleetCommandInProcess(['channels', ...args], {
      FABRIC_OPS_FLEET_URL: fleet.url,
      FABRIC_OPS_FLEET_CERT: pki.client.cert,
      FABRIC_OPS_FLEET_KEY: pki.client.key,
      FABRIC_OPS_FLEET_CACERT: pki.serverCA.cert,
      COLUMNS: '80',
    });

  beforeAll(async () => {
    fabric = await FabricNodes.start(release, { orgs: 2, peersPerOrg: 1, orderers: 3 });
    names = ['orderer0.ordererorg', 'orderer1.ordererorg', 'orderer2.ordererorg', 'peer0.org1', 'peer0.org2'];
    const config = fleetConfigFrom(
      {
        stateDirectory: path.join(stateDir, release),
        nodeTimeout: '2s',
        pollInterval: '0s',
        minRoundInterval: '0s',
        // Any lag is behind at once: each step is one round.
        channels: { behindBlocks: 0, behindFor: '0s' },
        groups: groupsOf(fabric),
        nodes: fabric.nodes.map((node) => ({ name: node.name, url: node.url, group: node.org, dialect: node.dialect })),
      },
      path.join(stateDir, `${release}.yaml`),
    );
    fleet = await startOperationsSystem({
      config: testConfig({ operations: { tls: serverTls(pki) }, metrics: { provider: 'prometheus' } }),
      logStream: quiet(),
      extensions: [fleetExtension(config)],
    });
  });

  afterAll(async () => {
    await fleet?.stop(0);
    await fabric?.cleanup();
  });

  test('step 0, then step 1: every node ok at the same height, peers and orderers apart; the command exits 0', async () => {
    let report = await channels();
    expect(table(report)).toEqual(allAt({ ch1: 1, ch2: 1 }, names));
    await fabric.setStep(1);
    report = await channels();
    expect(table(report)).toEqual(allAt({ ch1: 4, ch2: 2 }, names));
    expect(
      report.channels.map((entry) => [entry.channel, entry.highest, entry.orderers.map((node) => node.name), entry.peers.map((node) => node.name)]),
    ).toEqual([
      ['ch1', 4, names.slice(0, 3), names.slice(3)],
      ['ch2', 2, names.slice(0, 3), names.slice(3)],
    ]);
    expect(report.summary).toEqual({ channels: 2, nodes: 5, ok: 10, behind: 0, stalled: 0, unreadable: 0, capped: 0 });
    for (const node of report.nodes) {
      // Read up to the end of the height family at most (a loopback answer of 20-45 KB may come in one piece).
      const whole = (await fabric.request(node.name, '/metrics')).body.length;
      expect({ node: node.name, status: node.status, read: (node.bytesRead ?? Infinity) <= whole }).toEqual({ node: node.name, status: 'ok', read: true });
    }
    const run = await command([]);
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n').filter((line) => line.length > 80)).toEqual([]);
    expect(run.stdout).toMatch(/^ch1\s+orderer0\.ordererorg\s+orderer\s+4\s+0\s+ok$/m);
    expect(run.stdout).toContain('2 channels on 5 nodes: every node keeps up');
  });

  test('step 2, peer0.org1 stuck at 4 and peer0.org2 stopped while the others reach 6: peer0.org1 stalled, peer0.org2 unreachable with its last height; exit 1', async () => {
    fabric.double('peer0.org1').setHeight('ch1', 4);
    await fabric.setStep(2);
    const report = await channels();
    expect(table(report)).toEqual({
      ch1: {
        'orderer0.ordererorg': ['ok', 6, 0],
        'orderer1.ordererorg': ['ok', 6, 0],
        'orderer2.ordererorg': ['ok', 6, 0],
        'peer0.org1': ['stalled', 4, 2],
        'peer0.org2': ['unreachable', 4, 2],
      },
      ch2: { ...allAt({ ch2: 2 }, names.slice(0, 4)).ch2, 'peer0.org2': ['unreachable', 2, 0] },
    });
    expect(report.summary).toMatchObject({ stalled: 1, unreadable: 1, behind: 0 });
    expect(report.channels[0]?.peers[1]?.error).toMatch(/^ECONNREFUSED/);
    const metrics = await exposition();
    expect(samples(metrics, 'fleet_channel_lag')).toMatchObject({
      'channel="ch1",node="peer0.org1",dialect="peer"': '2',
      'channel="ch1",node="peer0.org2",dialect="peer"': '2',
    });
    expect(samples(metrics, 'fleet_node_channels_read')).toMatchObject({ 'node="peer0.org2",group="org2"': '0', 'node="peer0.org1",group="org1"': '1' });
    const run = await command([]);
    expect(run.code).toBe(1);
    // At 80 columns the error's width leaves the DIALECT column out.
    expect(run.stdout).toMatch(/^ch1\s+peer0\.org1\s+4\s+2\s+stalled\s+unchanged \S+$/m);
    expect(run.stdout).toMatch(/^ch1\s+peer0\.org2\s+4\s+2\s+unreachable\s+ECONNREFUSED/m);
    expect(run.stdout.split('\n').filter((line) => line.length > 80)).toEqual([]);
    expect(run.stdout).toContain('2 channels on 5 nodes: 1 stalled, 1 node not read');
  });

  test('step 3, peer0.org2 back but catching up (ch1 at 5): behind with lag 1, and its metrics; then ok at 6', async () => {
    fabric.double('peer0.org1').setHeight('ch1', null);
    fabric.double('peer0.org2').setHeight('ch1', 5);
    await fabric.setStep(3);
    let report = await channels();
    expect(table(report).ch1).toEqual({ ...allAt({ ch1: 6 }, names.slice(0, 4)).ch1, 'peer0.org2': ['behind', 5, 1] });
    expect(table(report).ch2).toEqual(allAt({ ch2: 2 }, names).ch2);
    const metrics = await exposition();
    expect(samples(metrics, 'fleet_channel_height')['channel="ch1",node="peer0.org2",dialect="peer"']).toBe('5');
    expect(samples(metrics, 'fleet_channel_lag')['channel="ch1",node="peer0.org2",dialect="peer"']).toBe('1');
    expect(samples(metrics, 'fleet_channel_highest_height')).toEqual({ 'channel="ch1"': '6', 'channel="ch2"': '2' });
    expect(metrics).toMatch(/^fleet_channel_behind_threshold_blocks 0$/m);
    expect((await command([])).code).toBe(1);

    fabric.double('peer0.org2').setHeight('ch1', null);
    report = await channels();
    expect(table(report)).toEqual(allAt({ ch1: 6, ch2: 2 }, names));
    const json = await command(['--json']);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as FleetChannelReport).summary).toMatchObject({ ok: 10, behind: 0, stalled: 0, unreadable: 0 });
  });

  test('one-shot (--fleet-config): one read, so a lagging node is behind at once whatever behindFor says; exit 1, then 0', async () => {
    const file = path.join(stateDir, `${release}-one-shot.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({
        stateDirectory: path.join(stateDir, `${release}-one-shot`),
        channels: { behindBlocks: 0, behindFor: '1h' },
        groups: groupsOf(fabric),
        nodes: fabric.nodes.map((node) => ({ name: node.name, url: node.url, group: node.org, dialect: node.dialect })),
      }),
    );
    fabric.double('peer0.org1').setHeight('ch2', 1);
    const lagging = await fleetCommandInProcess(['channels', '--fleet-config', file], { COLUMNS: '80' });
    expect(lagging.code).toBe(1);
    expect(lagging.stdout).toMatch(/^ch2\s+peer0\.org1\s+peer\s+1\s+1\s+behind\s+lagging 0s$/m);
    fabric.double('peer0.org1').setHeight('ch2', null);
    const caughtUp = await fleetCommandInProcess(['channels', '--fleet-config', file], { COLUMNS: '80' });
    expect(caughtUp.code).toBe(0);
    // The verdict names the behindFor applied: none, one read.
    expect(caughtUp.stdout).toMatch(/^2 channels on 5 nodes: every node keeps up \(behind: more than 0 blocks below the\nhighest for 0s\)$/m);
  });
});

/** A list+watch of a discovery source that lists when the test says (src/kubernetes' Reflector in production). */
class WatchDouble implements SourceWatch {
  listed = false;
  problem: string | null = null;
  constructor(
    readonly spec: WatchSpec,
    readonly handler: ObjectHandler,
  ) {}
  get synced(): boolean {
    return this.listed;
  }
  start(): void {}
  stop(): void {}
  list(objects: unknown[]): void {
    this.listed = true;
    this.handler.replace(objects);
  }
}

describe('a node that leaves the fleet', () => {
  test('its series go at once, and a channel no node has any more takes its own', async () => {
    const fabric = await FabricNodes.start('3.1.5', { orgs: 0, peersPerOrg: 0, orderers: 3 });
    const watches: WatchDouble[] = [];
    const factory: SourceWatchFactory = (spec, handler) => {
      const watch = new WatchDouble(spec, handler);
      watches.push(watch);
      return watch;
    };
    const pod = (name: string): unknown => ({
      metadata: { name, namespace: 'fabric', labels: { app: 'orderer' } },
      spec: { containers: [{ name: 'orderer', ports: [{ name: 'operations', containerPort: Number(new URL(fabric.node(name).url).port) }] }] },
      status: { podIP: '127.0.0.1', phase: 'Running' },
    });
    const provider = new PrometheusProvider({ defaultMetrics: false });
    const orderer = fabric.nodes[0];
    if (orderer === undefined) throw new Error('no orderer started');
    const service = new FleetService(
      fleetConfigFrom(
        {
          stateDirectory: path.join(stateDir, 'discovery'),
          pollInterval: '0s',
          minRoundInterval: '0s',
          groups: { ordererorg: { tls: { caFiles: [orderer.caFile], certFile: orderer.clientCertFile, keyFile: orderer.clientKeyFile } } },
          discovery: { kubernetes: [{ kind: 'Pod', selector: 'app=orderer', port: 'operations', group: 'ordererorg', dialect: 'orderer' }] },
        },
        path.join(stateDir, 'discovery.yaml'),
      ),
      { logger: new CaptureLoggers().getLogger('operations.fleet'), metrics: provider },
      { watchSource: factory, kubernetes: { namespace: 'fabric', server: 'https://api', transport: undefined as never } },
    );
    const series = async (): Promise<string[]> =>
      (await provider.render(undefined)).body
        .split('\n')
        .filter((line) => /^fleet_(channel|node_channels)/.test(line))
        .map((line) => line.replace(/ \S+$/, ''))
        .sort();
    try {
      await service.start();
      await fabric.setStep(1);
      watches[0]?.list(['orderer0.ordererorg', 'orderer1.ordererorg', 'orderer2.ordererorg'].map(pod));
      const first = await service.channels();
      expect(first.summary).toMatchObject({ channels: 2, nodes: 3, ok: 6 });
      expect((await series()).filter((line) => line.includes('orderer2'))).toEqual([
        'fleet_channel_height{channel="ch1",node="orderer2.ordererorg.fabric",dialect="orderer"}',
        'fleet_channel_height{channel="ch2",node="orderer2.ordererorg.fabric",dialect="orderer"}',
        'fleet_channel_lag{channel="ch1",node="orderer2.ordererorg.fabric",dialect="orderer"}',
        'fleet_channel_lag{channel="ch2",node="orderer2.ordererorg.fabric",dialect="orderer"}',
        'fleet_node_channels_read{node="orderer2.ordererorg.fabric",group="ordererorg"}',
      ]);
      watches[0]?.handler.remove(pod('orderer2.ordererorg'));
      // At once, before any round.
      expect((await series()).filter((line) => line.includes('orderer2'))).toEqual([]);
      const after = await service.channels();
      expect(after.nodes.map((node) => node.name)).toEqual(['orderer0.ordererorg.fabric', 'orderer1.ordererorg.fabric']);
      expect((await series()).filter((line) => line.includes('orderer2'))).toEqual([]);
      expect((await series()).filter((line) => line.startsWith('fleet_channel_highest_height'))).toEqual([
        'fleet_channel_highest_height{channel="ch1"}',
        'fleet_channel_highest_height{channel="ch2"}',
      ]);
      watches[0]?.list([]);
      await service.channels();
      expect((await series()).filter((line) => !line.startsWith('fleet_channel_behind_threshold_blocks'))).toEqual([]);
    } finally {
      await service.stop();
      await fabric.cleanup();
    }
  });
});

describe('bad /metrics: bounded, reported, nothing else stalls', () => {
  interface BadNode {
    url: string;
    /** Bytes it wrote of its body. */
    sent: () => number;
    close(): Promise<void>;
  }

  /** An HTTPS node of the test PKI answering /metrics with `answer`. */
  async function badNode(answer: (res: import('node:http').ServerResponse, count: (bytes: number) => void) => void): Promise<BadNode> {
    let sent = 0;
    const server = https.createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (_req, res) => answer(res, (bytes) => (sent += bytes)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      sent: () => sent,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  /** Writes `line` until `limit` bytes or the connection is gone, with the socket's back-pressure. */
  function pump(res: import('node:http').ServerResponse, line: string, limit: number, count: (bytes: number) => void, end?: string): void {
    const chunk = Buffer.from(line.repeat(Math.max(1, Math.floor(65_536 / line.length))));
    let written = 0;
    const more = (): void => {
      while (written < limit && !res.destroyed) {
        written += chunk.length;
        count(chunk.length);
        if (!res.write(chunk)) {
          res.once('drain', more);
          return;
        }
      }
      if (!res.destroyed) res.end(end);
    };
    more();
  }

  test('huge, endless, not Prometheus text, thousands of channels: each its reason or its cap; the recorded nodes read in the same round', async () => {
    const fabric = await FabricNodes.start('2.5.12', { orgs: 1, peersPerOrg: 1, orderers: 1 });
    const maxMetricsBytes = 1024 * 1024;
    const bad: Record<string, BadNode> = {
      // 64 MiB of valid comments before any height: over channels.maxMetricsBytes.
      huge: await badNode((res, count) => {
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
        pump(res, `# HELP filler ${'x'.repeat(200)}\n`, 64 * 1024 * 1024, count, 'ledger_blockchain_height{channel="ch1"} 1\n');
      }),
      // A line a second, never ending: the node's timeout.
      endless: await badNode((res, count) => {
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
        const timer = setInterval(() => {
          if (res.destroyed) clearInterval(timer);
          else {
            count(10);
            res.write('# tick ...\n');
          }
        }, 200);
        res.on('close', () => clearInterval(timer));
      }),
      html: await badNode((res, count) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        count(18);
        res.end('<html>hello</html>');
      }),
      json: await badNode((res, count) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        count(15);
        res.end('{"status":"OK"}');
      }),
      thousands: await badNode((res, count) => {
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
        const body = Array.from({ length: 5000 }, (_, index) => `ledger_blockchain_height{channel="t${index}"} ${index + 1}\n`).join('') + 'go_goroutines 12\n';
        count(body.length);
        res.end(body);
      }),
    };
    const provider = new PrometheusProvider({ defaultMetrics: false });
    const groups = { ...groupsOf(fabric), test: { tls: { caFiles: [pki.serverCA.cert] } } };
    const service = new FleetService(
      fleetConfigFrom(
        {
          stateDirectory: path.join(stateDir, 'bad'),
          nodeTimeout: '1s',
          pollInterval: '0s',
          minRoundInterval: '0s',
          concurrency: 4,
          channels: { maxChannels: 100, maxMetricsBytes },
          groups,
          nodes: [
            ...Object.entries(bad).map(([name, node]) => ({ name, url: node.url, group: 'test' })),
            ...fabric.nodes.map((node) => ({ name: node.name, url: node.url, group: node.org, dialect: node.dialect })),
          ],
        },
        path.join(stateDir, 'bad.yaml'),
      ),
      { logger: new CaptureLoggers().getLogger('operations.fleet'), metrics: provider },
    );
    try {
      await service.start();
      const report = await service.channels();
      const byName = Object.fromEntries(report.nodes.map((node) => [node.name, node]));
      expect(Object.fromEntries(report.nodes.map((node) => [node.name, node.status]))).toEqual({
        huge: 'bad_response',
        endless: 'timeout',
        html: 'bad_response',
        json: 'bad_response',
        thousands: 'ok',
        'peer0.org1': 'ok',
        'orderer0.ordererorg': 'ok',
      });
      expect(byName.huge?.error).toBe(`/metrics is larger than channels.maxMetricsBytes (${maxMetricsBytes} bytes); not read further`);
      // The huge node wrote what the socket buffers took past the cap, not its 64 MiB.
      expect(bad.huge?.sent()).toBeLessThan(maxMetricsBytes + 16 * 1024 * 1024);
      expect(byName.endless?.error).toBe('no complete answer within 1000 ms');
      expect(byName.html?.error).toBe(
        '/metrics answered Content-Type "text/html", not the Prometheus text format (text/plain or application/openmetrics-text)',
      );
      expect(byName.json?.error).toBe('/metrics is not the Prometheus text format: line 1 is neither a comment nor a sample: "{\\"status\\":\\"OK\\"}"');
      expect(byName.thousands).toMatchObject({ channels: 100, channelsDropped: 4900 });
      expect(report.summary).toMatchObject({ unreadable: 4, capped: 1 });
      // The recorded nodes were read in this round, beside the bad ones: no cut, nobody left unasked.
      expect(table(report).ch1).toMatchObject({ 'peer0.org1': ['ok', 1, 0], 'orderer0.ordererorg': ['ok', 1, 0] });
      expect(report.round).toMatchObject({ cut: 0, notAsked: 0 });
      // Series: the capped node's 100 channels, and the recorded nodes' two.
      const lines = (await provider.render(undefined)).body.split('\n').filter((line) => line.startsWith('fleet_channel_height{'));
      expect(lines.filter((line) => line.includes('node="thousands"'))).toHaveLength(100);
      expect(lines.filter((line) => !line.includes('node="thousands"'))).toHaveLength(4);
    } finally {
      await service.stop();
      await Promise.all(Object.values(bad).map((node) => node.close()));
      await fabric.cleanup();
      fs.rmSync(path.join(stateDir, 'bad'), { recursive: true, force: true });
    }
  });
});
