/**
 * Fleet channels (GET /fleet/channels, `fabric-ops fleet channels`; docs/fleet-channels.md) against
 * real Fabric nodes (opt-in suite: real binaries). The real-binary twin of
 * test/integration/fleet/channels.test.ts and channels-read.test.ts, which read the recorded
 * /metrics of doubles (test/support/fabric-double.ts).
 *
 * NEVER RUN ON REAL BINARIES HERE: the project's machine has no Fabric binaries. These tests were
 * written by reading the harness (test/support/fabric-network.ts) line by line and Fabric's code
 * and documented behaviour (2.5.12, 3.0.0, 3.1.5); without the binaries each test fails with
 * "OPT-IN SUITE CANNOT RUN", which is all that was seen of them. Until they have run where
 * FABRIC_HOMES names a release, only the doubles back what they claim.
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
 * - The same network with a second peer of Org1 (`startFabricNetwork({ secondPeer })`):
 *   peer1.org1.example.com, joined to `mychannel` with the genesis block, as a non-leader
 *   (CORE_PEER_GOSSIP_USELEADERELECTION=false, CORE_PEER_GOSSIP_ORGLEADER=false) whose gossip
 *   bootstraps to itself only: it never hears of peer0 and opens no deliver stream to the orderer,
 *   so no block reaches it (a gossip partition, the issue's own example). Blocks are made through
 *   peer0 with the harness's makeBlocks: each one `peer lifecycle chaincode approveformyorg` of a
 *   chaincode name not used before (sequence 1, no package), endorsed by peer0 and ordered alone
 *   (`--waitForEvent`: the next is sent once peer0 has committed it), so each is exactly one block;
 *   nothing to install or run (invoking a chaincode would need a chaincode server built and
 *   started; a channel config update, configtxlator and signatures; approving one name with a
 *   growing sequence fails, sequence 2 before 1 is committed). The fleet judges with behindBlocks 1
 *   and behindFor 10s. Checked, in order, each round's own /metrics heights read before and after:
 *   1. all three at 1; 2 blocks made: orderer and peer0 at 3, peer1 at 1. The fleet's first round:
 *      peer1 `ok`, lag 2, laggingMs 0 (lagging, but for less than behindFor; not stalled, the
 *      highest has not moved since its height was first read); the command exits 0 with its row
 *      `lagging Ns/10s`. Rounds until behindFor has passed: each of them `ok`, lag 2; then
 *      `behind`, lag 2, laggingMs at least 10 s; the series (height 1, lag 2, highest 3, the
 *      threshold 1); the command exits 1, its row `behind`.
 *   2. 2 more blocks (orderer and peer0 at 5, peer1 still 1): `stalled`, lag 4, unchangedMs equal
 *      to laggingMs (both since the first round) and at least behindFor; peer1's /healthz still
 *      200; the series (lag 4, highest 5); the command exits 1, its row `stalled`.
 *   3. peer1 stopped and started again as org leader (CORE_PEER_GOSSIP_ORGLEADER=true, the same
 *      ledger folder): it pulls the missing blocks from the orderer (gossip still knows no one);
 *      once every node gives one height before and after a round: 5, every node `ok`, lag 0, the
 *      series at lag 0 and the command's rows `ok`, exit 0.
 * - A real peer and a real orderer of the first release FABRIC_HOMES names, each alone on its
 *   release's sampleconfig (test/support/fabric-reference.ts), with prometheus metrics and operations
 *   mutual TLS: the fleet reads their real /metrics `ok`, with no channel (nodes alone join none).
 *
 * Not checked here: a peer `behind` while it catches up block by block (peer1 pulls 4 blocks from
 * the orderer in well under a round; its `behind` is the one of a peer that lags and has not
 * moved on an idle channel); a node that is down (its reason with its last height: one test on
 * the doubles); a node leaving the fleet; the fleet over operations TLS to the network's nodes
 * (their operations endpoints are plain HTTP; the lone nodes above cover mutual TLS). Those cases
 * are checked on the recorded networks' doubles (test/integration/fleet/channels.test.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import { fleetConfigFrom, fleetExtension, type ChannelNodeHeight, type FleetChannelReport } from '../../../src/fleet';
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

/**
 * A fleet server (mutual TLS of the test PKI, prometheus metrics) over these nodes: no background
 * round, each call one round; `channels` the thresholds (default: any lag is behind at once).
 */
async function startFleet(
  name: string,
  groups: Groups,
  nodes: FleetNodeEntry[],
  channels: { behindBlocks: number; behindFor: string } = { behindBlocks: 0, behindFor: '0s' },
): Promise<OperationsSystem> {
  const config = fleetConfigFrom(
    {
      stateDirectory: path.join(stateDir, name),
      nodeTimeout: '5s',
      pollInterval: '0s',
      minRoundInterval: '0s',
      channels,
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

/** The fleet's own /metrics. */
async function fleetExposition(fleet: OperationsSystem): Promise<string> {
  return (await request(`${fleet.url}/metrics`, { ca: pki.serverCA.certPem, client: pki.client })).body;
}

/** The samples of a metric on the fleet's own /metrics: `labels text -> value`. */
async function fleetSamples(fleet: OperationsSystem, metric: string): Promise<Record<string, string>> {
  const exposition = await fleetExposition(fleet);
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

/** Each node's height of mychannel on its own /metrics, by name. */
async function ownHeights(nodes: FleetNodeEntry[]): Promise<Record<string, number | undefined>> {
  const heights = await Promise.all(nodes.map(ownHeight));
  return Object.fromEntries(nodes.map((node, i) => [node.name, heights[i]]));
}

/** Waits until each node's own /metrics gives the height `expected` names for it (the heights last seen in the failure). */
async function untilOwnHeights(nodes: FleetNodeEntry[], expected: Record<string, number>): Promise<void> {
  await waitFor(
    `the heights of ${channelName} on the nodes' own /metrics to be ${JSON.stringify(expected)}`,
    async () => {
      const heights = await ownHeights(nodes);
      if (!isDeepStrictEqual(heights, expected)) throw new Error(`heights: ${JSON.stringify(heights)}`);
      return true;
    },
    { timeoutMs: 60_000, everyMs: 250 },
  );
}

/** A node's entry under a channel, without the durations (laggingMs, unchangedMs). */
function entryOf(node: FleetNodeEntry, status: string, height: number, lag: number): Record<string, unknown> {
  return { name: node.name, group: node.group, dialect: node.dialect, status, height, lag };
}

/** `node`'s entry under mychannel in a report; throws (with the report's channels) when it has none. */
function entryIn(report: FleetChannelReport, node: FleetNodeEntry): ChannelNodeHeight {
  const channel = report.channels.find((entry) => entry.channel === channelName);
  const found = [...(channel?.orderers ?? []), ...(channel?.peers ?? []), ...(channel?.others ?? [])].find((entry) => entry.name === node.name);
  if (found === undefined) throw new Error(`${node.name} is not under ${channelName}: ${JSON.stringify(report.channels)}`);
  return found;
}

/** The command's `--wide` row of `node` on mychannel (DETAIL a pattern; none: an empty cell). */
function rowOf(node: FleetNodeEntry, height: number, lag: number, status: string, detail?: string): RegExp {
  const name = node.name.replace(/\./g, '\\.');
  return new RegExp(
    `^${channelName}\\s+${name}\\s+${node.group}\\s+${node.dialect}\\s+${height}\\s+${lag}\\s+${status}${detail === undefined ? '' : `\\s+${detail}`}$`,
    'm',
  );
}

/** The samples of a per-node channel series (`fleet_channel_height`, `_lag`) with these values, by node name. */
function perNodeSeries(nodes: FleetNodeEntry[], values: Record<string, number>): Record<string, string> {
  return Object.fromEntries(nodes.map((node) => [`channel="${channelName}",node="${node.name}",dialect="${node.dialect}"`, String(values[node.name])]));
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

describe('the real network with a second peer of Org1 cut off from gossip (startFabricNetwork({ secondPeer })): peer1 behind, stalled, then ok once it pulls from the orderer', () => {
  // More than 1 block below the highest lags: peer0 a block below the orderer while it commits stays
  // ok. behindFor 10s: the command's round right after the first is well within it, and the test
  // waits it out once.
  const behindBlocks = 1;
  const behindForMs = 10_000;
  let network: FabricNetwork;
  let fleet: OperationsSystem;
  let orderer: FleetNodeEntry;
  let peer0: FleetNodeEntry;
  let peer1: FleetNodeEntry;
  let nodes: FleetNodeEntry[];
  /** The heights of mychannel, by node name. */
  const heights = (ordererHeight: number, peer0Height: number, peer1Height: number): Record<string, number> => ({
    [orderer.name]: ordererHeight,
    [peer0.name]: peer0Height,
    [peer1.name]: peer1Height,
  });

  beforeAll(async () => {
    network = await startFabricNetwork({ metricsProvider: 'prometheus', secondPeer: { orgLeader: false } });
    orderer = { name: 'orderer.example.com', url: network.ordererOperationsUrl, group: 'ordererorg', dialect: 'orderer' };
    peer0 = { name: 'peer0.org1.example.com', url: network.peerOperationsUrl, group: 'org1', dialect: 'peer' };
    peer1 = { name: 'peer1.org1.example.com', url: network.peer1OperationsUrl, group: 'org1', dialect: 'peer' };
    nodes = [orderer, peer0, peer1];
    // No background round (pollInterval 0s): the fleet's first round is the first test's, after its blocks.
    fleet = await startFleet(
      'partition',
      { ordererorg: { tls: { caFiles: [network.ordererTlsCa] } }, org1: { tls: { caFiles: [network.peerTlsCa] } } },
      nodes,
      {
        behindBlocks,
        behindFor: '10s',
      },
    );
  });

  afterAll(async () => {
    await fleet?.stop(0);
    await network?.stop();
    if (network) await rm(network.dir, { recursive: true, force: true });
  });

  test('2 blocks made through peer0, none reaching peer1: first seen lagging by 2 on an idle channel it is ok for less than behindFor, then behind with lag 2; its series; the command exits 0, then 1', async () => {
    // Nothing written on the channel since the joins: the genesis block on every node.
    await untilOwnHeights(nodes, heights(1, 1, 1));
    await network.makeBlocks(2);
    // peer1 stays at 1: a peer that got the blocks fails this wait with its height.
    await untilOwnHeights(nodes, heights(3, 3, 1));

    // The fleet's first round: every height first read now, peer1 2 below the highest. The highest
    // has not moved since peer1's height was first read (the same round): not stalled; it has lagged
    // for 0 ms of behindFor: ok.
    const first = await channelsOf(fleet);
    expect(await ownHeights(nodes)).toEqual(heights(3, 3, 1));
    expect(first.settings).toEqual({ behindBlocks, behindForMs, maxChannels: 500 });
    expect(first.channels).toEqual([
      {
        channel: channelName,
        highest: 3,
        orderers: [entryOf(orderer, 'ok', 3, 0)],
        peers: [entryOf(peer0, 'ok', 3, 0), { ...entryOf(peer1, 'ok', 1, 2), laggingMs: 0 }],
        others: [],
      },
    ]);
    expect(first.summary).toEqual({ channels: 1, nodes: 3, ok: 3, behind: 0, stalled: 0, unreadable: 0, capped: 0 });

    // The command's own round, right after: still within behindFor, so every node keeps up (exit 0),
    // peer1's row saying how long it has lagged of behindFor.
    const within = await command(fleet, ['--wide']);
    expect({ code: within.code, stderr: within.stderr }).toEqual({ code: 0, stderr: '' });
    expect(within.stdout).toMatch(rowOf(peer1, 1, 2, 'ok', 'lagging \\d+s/10s'));
    expect(within.stdout).toContain('1 channel on 3 nodes: every node keeps up (behind: more than 1 block below the highest for 10s)');

    // No block is made meanwhile and none reaches peer1: rounds until behindFor has passed since the first.
    const earlier: ChannelNodeHeight[] = [];
    const behind = await waitFor(
      'the fleet to report peer1 behind',
      async () => {
        const report = await channelsOf(fleet);
        const entry = entryIn(report, peer1);
        if (entry.status === 'behind') return report;
        earlier.push(entry);
        return undefined;
      },
      { timeoutMs: behindForMs + 30_000, everyMs: 500 },
    );
    expect(
      earlier.map((entry) => ({ status: entry.status, height: entry.height, lag: entry.lag, within: (entry.laggingMs ?? Infinity) < behindForMs })),
    ).toEqual(earlier.map(() => ({ status: 'ok', height: 1, lag: 2, within: true })));
    expect(behind.channels).toEqual([
      {
        channel: channelName,
        highest: 3,
        orderers: [entryOf(orderer, 'ok', 3, 0)],
        peers: [entryOf(peer0, 'ok', 3, 0), { ...entryOf(peer1, 'behind', 1, 2), laggingMs: expect.any(Number) as unknown }],
        others: [],
      },
    ]);
    expect(entryIn(behind, peer1).laggingMs).toBeGreaterThanOrEqual(behindForMs);
    expect(behind.summary).toEqual({ channels: 1, nodes: 3, ok: 2, behind: 1, stalled: 0, unreadable: 0, capped: 0 });
    expect(await ownHeights(nodes)).toEqual(heights(3, 3, 1));

    expect(await fleetSamples(fleet, 'fleet_channel_height')).toEqual(perNodeSeries(nodes, heights(3, 3, 1)));
    expect(await fleetSamples(fleet, 'fleet_channel_lag')).toEqual(perNodeSeries(nodes, heights(0, 0, 2)));
    expect(await fleetSamples(fleet, 'fleet_channel_highest_height')).toEqual({ [`channel="${channelName}"`]: '3' });
    expect(await fleetSamples(fleet, 'fleet_node_channels_read')).toEqual(
      Object.fromEntries(nodes.map((node) => [`node="${node.name}",group="${node.group}"`, '1'])),
    );
    expect(await fleetExposition(fleet)).toMatch(/^fleet_channel_behind_threshold_blocks 1$/m);

    const late = await command(fleet, ['--wide']);
    expect({ code: late.code, stderr: late.stderr }).toEqual({ code: 1, stderr: '' });
    expect(late.stdout).toMatch(rowOf(orderer, 3, 0, 'ok'));
    expect(late.stdout).toMatch(rowOf(peer0, 3, 0, 'ok'));
    expect(late.stdout).toMatch(rowOf(peer1, 1, 2, 'behind', 'lagging \\S+'));
    expect(late.stdout).toContain('1 channel on 3 nodes: 1 behind (behind: more than 1 block below the highest for 10s)');
  });

  test('2 more blocks while peer1 is still cut off: stalled (its height unchanged while the highest moved), lag 4, its /healthz still 200; its series; the command exits 1', async () => {
    await network.makeBlocks(2);
    await untilOwnHeights(nodes, heights(5, 5, 1));

    const report = await channelsOf(fleet);
    expect(await ownHeights(nodes)).toEqual(heights(5, 5, 1));
    expect(report.channels).toEqual([
      {
        channel: channelName,
        highest: 5,
        orderers: [entryOf(orderer, 'ok', 5, 0)],
        peers: [
          entryOf(peer0, 'ok', 5, 0),
          { ...entryOf(peer1, 'stalled', 1, 4), laggingMs: expect.any(Number) as unknown, unchangedMs: expect.any(Number) as unknown },
        ],
        others: [],
      },
    ]);
    // Both since the fleet's first round: its height was first read there, and it has lagged since.
    const stalled = entryIn(report, peer1);
    expect(stalled.unchangedMs).toBe(stalled.laggingMs);
    expect(stalled.unchangedMs).toBeGreaterThanOrEqual(behindForMs);
    expect(report.summary).toEqual({ channels: 1, nodes: 3, ok: 2, behind: 0, stalled: 1, unreadable: 0, capped: 0 });

    // What the issue starts from: the peer falling behind still answers /healthz 200.
    const health = await request(`${peer1.url}/healthz`);
    expect({ status: health.status, body: health.json }).toEqual({ status: 200, body: expect.objectContaining({ status: 'OK' }) as unknown });

    expect(await fleetSamples(fleet, 'fleet_channel_height')).toEqual(perNodeSeries(nodes, heights(5, 5, 1)));
    expect(await fleetSamples(fleet, 'fleet_channel_lag')).toEqual(perNodeSeries(nodes, heights(0, 0, 4)));
    expect(await fleetSamples(fleet, 'fleet_channel_highest_height')).toEqual({ [`channel="${channelName}"`]: '5' });

    const run = await command(fleet, ['--wide']);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 1, stderr: '' });
    expect(run.stdout).toMatch(rowOf(orderer, 5, 0, 'ok'));
    expect(run.stdout).toMatch(rowOf(peer0, 5, 0, 'ok'));
    expect(run.stdout).toMatch(rowOf(peer1, 1, 4, 'stalled', 'unchanged \\S+'));
    expect(run.stdout).toContain('1 channel on 3 nodes: 1 stalled (behind: more than 1 block below the highest for 10s)');
  });

  test('peer1 started again as org leader (CORE_PEER_GOSSIP_ORGLEADER=true, its ledger kept): it pulls the missing blocks from the orderer; every node ok at 5, lag 0; the series; the command exits 0', async () => {
    await network.stopSecondPeer();
    await network.startSecondPeer({ orgLeader: true });
    // Gossip still knows no one (it bootstraps to itself): the blocks come from its deliver stream.
    const { height, report } = await settled(fleet, nodes);
    expect(height).toBe(5);
    expectAllOkAt(report, nodes, height);
    await expectSeriesAt(fleet, nodes, height);
    await expectCommandAt(fleet, nodes, height);
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
