/**
 * Fleet channels (GET /fleet/channels, `fabric-ops fleet channels`; docs/fleet-channels.md) against
 * real Fabric nodes (opt-in suite: real binaries). The real-binary twin of
 * test/integration/fleet/channels.test.ts and channels-read.test.ts, which read the recorded
 * /metrics of doubles (test/support/fabric-double.ts).
 *
 * - The real network of test/support/fabric-network.ts (one orderer, one peer, channel `mychannel`;
 *   its release from FABRIC_HOME, else the first of FABRIC_HOMES), started with the prometheus
 *   metrics provider on both nodes, their operations endpoints plain HTTP as the harness runs them
 *   (operations TLS off, as in the sample configurations: /metrics needs no client certificate).
 *   Checked: each node's own /metrics has `ledger_blockchain_height{channel="mychannel"}`, 1 after
 *   the start (the genesis block); once peer and orderer give the same height on their own /metrics,
 *   before and after a fleet round, that round reports both `ok` on `mychannel` at that height, lag 0,
 *   the channel's highest that height, the fleet's series (`fleet_channel_height`, `_lag`,
 *   `_highest_height`, `fleet_node_channels_read`) and the command's rows saying the same, exit 0.
 *   Then two blocks are made (a chaincode definition approved, then committed, through the harness's
 *   deployCcaas: each a transaction, a block of its own), and the same is checked at the new height,
 *   the height read before plus 2.
 * - A real peer and a real orderer of the first release FABRIC_HOMES names, each alone on its
 *   release's sampleconfig (test/support/fabric-reference.ts), with prometheus metrics and operations
 *   mutual TLS: the fleet reads their real /metrics `ok`, with no channel (nodes alone join none).
 *
 * Not checked here: a node `behind` or `stalled` on a real chain (a peer stopped while blocks are
 * made, `behind` with its lag, then `ok` once it caught up): the network has one peer, the only
 * endorser of the channel, so no block is made while it is stopped; that needs a second endorsing
 * peer in the harness. The fleet over operations TLS to the network's nodes is not checked either
 * (their operations endpoints are plain HTTP); the lone nodes above cover mutual TLS. Those cases
 * are checked on the recorded networks' doubles (test/integration/fleet/channels.test.ts). Without
 * the binaries each test fails with "OPT-IN SUITE CANNOT RUN".
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fleetConfigFrom, fleetExtension, type FleetChannelReport } from '../../../src/fleet';
import { fleetCommandInProcess } from '../../integration/fleet/harness';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { channelName, startFabricNetwork, type FabricNetwork } from '../../support/fabric-network';
import { killAllFabricNodes, startFabricNode, writeNodeConfig, type FabricNode } from '../../support/fabric-reference';
import { request } from '../../support/http';
import { createTestPki, serverTls, type TestPki } from '../../support/pki';
import { freeTcpPort } from '../../support/ports';
import { requireFabricReleases } from '../../support/real-binaries';
import { waitFor } from '../../support/wait';

jest.setTimeout(240_000);

const quiet = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });

interface FleetNodeEntry {
  name: string;
  url: string;
  group: string;
  dialect: 'peer' | 'orderer';
}

type Groups = Record<string, { tls: { caFiles: string[]; certFile?: string; keyFile?: string } }>;

let pki: TestPki;
let stateDir: string;

beforeAll(async () => {
  pki = await createTestPki();
  stateDir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-channels-real-'));
});

afterAll(async () => {
  if (stateDir !== undefined) await rm(stateDir, { recursive: true, force: true });
  await pki?.cleanup();
});

/** A fleet server (mutual TLS of the test PKI, prometheus metrics) over these nodes: each step is one round, any lag is behind at once. */
async function startFleet(name: string, groups: Groups, nodes: FleetNodeEntry[]): Promise<OperationsSystem> {
  const config = fleetConfigFrom(
    {
      stateDirectory: path.join(stateDir, name),
      nodeTimeout: '5s',
      pollInterval: '0s',
      minRoundInterval: '0s',
      channels: { behindBlocks: 0, behindFor: '0s' },
      groups,
      nodes,
    },
    path.join(stateDir, `${name}.yaml`),
  );
  return startOperationsSystem({
    config: testConfig({ operations: { tls: serverTls(pki) }, metrics: { provider: 'prometheus' } }),
    logStream: quiet(),
    extensions: [fleetExtension(config)],
  });
}

async function channelsOf(fleet: OperationsSystem): Promise<FleetChannelReport> {
  const answer = await request(`${fleet.url}/fleet/channels`, { ca: pki.serverCA.certPem, client: pki.client });
  expect(answer.status).toBe(200);
  return answer.json as FleetChannelReport;
}

/** The samples of a metric on the fleet's own /metrics: `labels text -> value`. */
async function fleetSamples(fleet: OperationsSystem, metric: string): Promise<Record<string, string>> {
  const exposition = (await request(`${fleet.url}/metrics`, { ca: pki.serverCA.certPem, client: pki.client })).body;
  return Object.fromEntries([...exposition.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} (\\S+)$`, 'gm'))].map((match) => [match[1] ?? '', match[2] ?? '']));
}

/** `fabric-ops fleet channels ...args` run in this process against `fleet`: its exit code and output. */
function command(fleet: OperationsSystem, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return fleetCommandInProcess(['channels', ...args], {
    FABRIC_OPS_FLEET_URL: fleet.url,
    FABRIC_OPS_FLEET_CERT: pki.client.cert,
    FABRIC_OPS_FLEET_KEY: pki.client.key,
    FABRIC_OPS_FLEET_CACERT: pki.serverCA.cert,
    COLUMNS: '80',
  });
}

/** `ledger_blockchain_height{channel="mychannel"}` on a node's own /metrics, as a number; undefined when it has no such sample. */
async function ownHeight(node: FleetNodeEntry): Promise<number | undefined> {
  const answer = await request(`${node.url}/metrics`);
  if (answer.status !== 200) throw new Error(`${node.name}: ${node.url}/metrics answered ${answer.status}`);
  const sample = new RegExp(`^ledger_blockchain_height\\{channel="${channelName}"\\} (\\S+)$`, 'm').exec(answer.body)?.[1];
  return sample === undefined ? undefined : Number(sample);
}

/**
 * Waits until every node's own /metrics gives the same height of mychannel both before and after
 * one fleet round: a chain never shrinks, so that round read the very same height on every node.
 * Returns the height and the round's report (judged by the caller, so that a wrong report fails
 * with the report itself, not with a timeout).
 */
async function settled(fleet: OperationsSystem, nodes: FleetNodeEntry[]): Promise<{ height: number; report: FleetChannelReport }> {
  return waitFor(
    `every node at one height of ${channelName} on its own /metrics, before and after a fleet round`,
    async () => {
      const before = await Promise.all(nodes.map(ownHeight));
      const report = await channelsOf(fleet);
      const after = await Promise.all(nodes.map(ownHeight));
      const [height] = before;
      if (height === undefined || [...before, ...after].some((each) => each !== height)) {
        // The last of these is in the failure when the heights never meet.
        throw new Error(`heights (before, after the round): ${nodes.map((node, i) => `${node.name} ${before[i]}, ${after[i]}`).join('; ')}`);
      }
      return { height, report };
    },
    { timeoutMs: 60_000, everyMs: 250 },
  );
}

/** The whole report of a round with every node `ok` on mychannel at `height`. */
function expectAllOkAt(report: FleetChannelReport, nodes: FleetNodeEntry[], height: number): void {
  const entry = (node: FleetNodeEntry): Record<string, unknown> => ({
    name: node.name,
    group: node.group,
    dialect: node.dialect,
    status: 'ok',
    height,
    lag: 0,
  });
  expect(report.channels).toEqual([
    {
      channel: channelName,
      highest: height,
      orderers: nodes.filter((node) => node.dialect === 'orderer').map(entry),
      peers: nodes.filter((node) => node.dialect === 'peer').map(entry),
      others: [],
    },
  ]);
  expect(
    report.nodes.map((node) => ({ name: node.name, status: node.status, channels: node.channels, channelsDropped: node.channelsDropped, error: node.error })),
  ).toEqual(nodes.map((node) => ({ name: node.name, status: 'ok', channels: 1, channelsDropped: 0, error: undefined })));
  expect(report.summary).toEqual({ channels: 1, nodes: nodes.length, ok: nodes.length, behind: 0, stalled: 0, unreadable: 0, capped: 0 });
}

/** The fleet's own series after a round with every node ok on mychannel at `height`. */
async function expectSeriesAt(fleet: OperationsSystem, nodes: FleetNodeEntry[], height: number): Promise<void> {
  const perNode = (value: string): Record<string, string> =>
    Object.fromEntries(nodes.map((node) => [`channel="${channelName}",node="${node.name}",dialect="${node.dialect}"`, value]));
  expect(await fleetSamples(fleet, 'fleet_channel_height')).toEqual(perNode(String(height)));
  expect(await fleetSamples(fleet, 'fleet_channel_lag')).toEqual(perNode('0'));
  expect(await fleetSamples(fleet, 'fleet_channel_highest_height')).toEqual({ [`channel="${channelName}"`]: String(height) });
  expect(await fleetSamples(fleet, 'fleet_node_channels_read')).toEqual(
    Object.fromEntries(nodes.map((node) => [`node="${node.name}",group="${node.group}"`, '1'])),
  );
}

/** `fabric-ops fleet channels --wide`: one `ok` row per node at `height`, the verdict, exit 0. */
async function expectCommandAt(fleet: OperationsSystem, nodes: FleetNodeEntry[], height: number): Promise<void> {
  const run = await command(fleet, ['--wide']);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  for (const node of nodes) {
    const row = `^${channelName}\\s+${node.name.replace(/\./g, '\\.')}\\s+${node.group}\\s+${node.dialect}\\s+${height}\\s+0\\s+ok$`;
    expect(run.stdout).toMatch(new RegExp(row, 'm'));
  }
  expect(run.stdout).toContain(`1 channel on ${nodes.length} nodes: every node keeps up`);
}

describe('the real network of test/support/fabric-network.ts with the prometheus metrics provider: heights of mychannel', () => {
  let network: FabricNetwork;
  let fleet: OperationsSystem;
  let nodes: FleetNodeEntry[];

  beforeAll(async () => {
    network = await startFabricNetwork({ metricsProvider: 'prometheus' });
    // Plain HTTP: the harness leaves the sample configurations' operations TLS off, so /metrics
    // needs no client certificate. The fleet file asks each group for a CA all the same (its schema);
    // the org's TLS CA stands there, unused over HTTP.
    nodes = [
      { name: 'orderer.example.com', url: network.ordererOperationsUrl, group: 'ordererorg', dialect: 'orderer' },
      { name: 'peer0.org1.example.com', url: network.peerOperationsUrl, group: 'org1', dialect: 'peer' },
    ];
    fleet = await startFleet('network', { ordererorg: { tls: { caFiles: [network.ordererTlsCa] } }, org1: { tls: { caFiles: [network.peerTlsCa] } } }, nodes);
  });

  afterAll(async () => {
    await fleet?.stop(0);
    await network?.stop();
    if (network) await rm(network.dir, { recursive: true, force: true });
  });

  test(`each node serves /healthz, and /metrics with the height of ${channelName} (no client certificate over plain HTTP)`, async () => {
    for (const node of nodes) {
      const health = await request(`${node.url}/healthz`);
      expect({ node: node.name, status: health.status, body: health.json }).toEqual({
        node: node.name,
        status: 200,
        body: expect.objectContaining({ status: 'OK' }) as unknown,
      });
      const metrics = await request(`${node.url}/metrics`);
      expect({
        node: node.name,
        status: metrics.status,
        type: metrics.headers['content-type'],
        heights: metrics.body.match(/^ledger_blockchain_height\{.*$/gm) ?? [],
      }).toEqual({
        node: node.name,
        status: 200,
        type: expect.stringMatching(/^text\/plain/) as unknown,
        heights: [expect.stringMatching(new RegExp(`^ledger_blockchain_height\\{channel="${channelName}"\\} \\d+$`)) as unknown],
      });
    }
  });

  test(`GET /fleet/channels: both nodes ok on ${channelName} at the height of their own /metrics (1: the genesis block), lag 0; the fleet's series; the command exits 0`, async () => {
    const { height, report } = await settled(fleet, nodes);
    // The harness writes nothing on the channel after the joins: the genesis block only.
    expect(height).toBe(1);
    expectAllOkAt(report, nodes, height);
    await expectSeriesAt(fleet, nodes, height);
    await expectCommandAt(fleet, nodes, height);
  });

  test('two blocks made (a chaincode definition approved, then committed): the heights move on both nodes and in the report, every node ok again at the new height', async () => {
    const { height: before } = await settled(fleet, nodes);
    // The lifecycle's approve and commit are each a transaction the peer endorses and the orderer
    // orders, sequentially (each waits for its commit event): a block each. No chaincode runs for
    // them; nothing listens on the package's port (the peer's attempt to launch it only logs).
    const port = await freeTcpPort();
    await network.deployCcaas({ name: 'heights', port, tls: false, start: () => Promise.resolve() });
    const { height: after, report } = await settled(fleet, nodes);
    expect({ before, after }).toEqual({ before, after: before + 2 });
    expectAllOkAt(report, nodes, after);
    await expectSeriesAt(fleet, nodes, after);
    await expectCommandAt(fleet, nodes, after);
  });
});

describe('a real peer and a real orderer alone, prometheus metrics over operations mutual TLS (test/support/fabric-reference.ts)', () => {
  let dir: string;
  const started: FabricNode[] = [];
  let fleet: OperationsSystem;
  let nodes: FleetNodeEntry[];

  beforeAll(async () => {
    const [home = ''] = requireFabricReleases();
    dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-channels-nodes-'));
    const tls = { cert: pki.server.cert, key: pki.server.key, clientAuthRequired: false, clientRootCAs: [pki.clientCA.cert] };
    // As the compat suite starts an orderer: general TLS from the org CA (a cluster orderer refuses to start without it).
    const generalTls = { cert: pki.serverByOrgCA.cert, key: pki.serverByOrgCA.key, rootCA: pki.orgCA.cert };
    const peerConfig = await writeNodeConfig(dir, { kind: 'peer', home, vmEndpoint: '', tls, metrics: { provider: 'prometheus' } });
    const ordererConfig = await writeNodeConfig(dir, { kind: 'orderer', home, tls, metrics: { provider: 'prometheus' }, generalTls });
    for (const config of [ordererConfig, peerConfig]) started.push(await startFabricNode({ config }));
    nodes = started.map((node) => ({ name: `${node.kind}0`, url: `https://${node.url}`, group: 'ops', dialect: node.kind }));
    fleet = await startFleet('nodes', { ops: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } } }, nodes);
  });

  afterAll(async () => {
    await fleet?.stop(0);
    for (const node of started) await node.stop();
    await killAllFabricNodes();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  test('GET /fleet/channels: both read ok, with no channel, each /metrics read to its end; the command exits 0', async () => {
    const report = await channelsOf(fleet);
    expect(report.channels).toEqual([]);
    expect(report.summary).toEqual({ channels: 0, nodes: 2, ok: 0, behind: 0, stalled: 0, unreadable: 0, capped: 0 });
    for (const node of nodes) {
      const own = await request(`${node.url}/metrics`, { ca: pki.serverCA.certPem, client: pki.client });
      expect({ node: node.name, status: own.status, heights: own.body.match(/^ledger_blockchain_height\{/gm) ?? [] }).toEqual({
        node: node.name,
        status: 200,
        heights: [],
      });
      const read = report.nodes.find((entry) => entry.name === node.name);
      expect({ node: node.name, status: read?.status, channels: read?.channels, error: read?.error }).toEqual({
        node: node.name,
        status: 'ok',
        channels: 0,
        error: undefined,
      });
      // No height family to stop after: the body is read to its end (its size varies a little between two scrapes).
      expect(read?.bytesRead).toBeGreaterThan(own.body.length * 0.9);
      expect(read?.bytesRead).toBeLessThan(own.body.length * 1.1);
    }
    expect(await fleetSamples(fleet, 'fleet_node_channels_read')).toEqual({ 'node="orderer0",group="ops"': '1', 'node="peer0",group="ops"': '1' });
    const run = await command(fleet, []);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('answered with no channel: orderer0, peer0');
    expect(run.stdout).toContain('0 channels on 2 nodes: every node keeps up');
  });
});
