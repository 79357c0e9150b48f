/**
 * A round's bound (issue 28, item 9): 160 nodes that accept and never answer, beside four healthy
 * fabric-ops nodes, concurrency 16, nodeTimeout 1 s. Asked one after the other in waves of 16, the
 * hung nodes made every GET /fleet/healthz take ceil(160 / 16) x 1 s = 10 s, and the healthy nodes
 * waited behind the nodes that had timed out the round before. Now a round ends at its deadline
 * (roundTimeout, default 2 x nodeTimeout + 1 s = 3 s), each node still reported with its own
 * status, and the nodes that timed out are asked in their own lane, never in front of the others.
 *
 * Each round's test has a jest timeout between the bound (3 s) and the 10 s a round took before:
 * that is where it fails on the old code; the assertions read the answer's own round report.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fleetConfigFrom, fleetExtension } from '../../../src/fleet';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, serverTls, type TestPki } from '../../support/pki';
import { hungServer } from './harness';

const hungCount = 160;
/** The hung nodes listed before the healthy ones: the first wave of a round in configuration order reaches the healthy ones. */
const hungFirst = 12;
const concurrency = 16;
const nodeTimeoutMs = 1000;
/** The default roundTimeout for nodeTimeout 1s. */
const roundTimeoutMs = 2 * nodeTimeoutMs + 1000;
/** A round's test: the bound with room for a loaded machine, and well under the 10 s a round took before. */
const roundTestTimeoutMs = 7000;

jest.setTimeout(60_000);

let pki: TestPki;
let stateDir: string;
let fleet: OperationsSystem;
const healthy: OperationsSystem[] = [];
const hung: Array<{ url: string; close(): Promise<void> }> = [];

const devNull = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });

function fleetCall(pathName: string): Promise<HttpAnswer> {
  return request(`${fleet.url}${pathName}`, { ca: pki.serverCA.certPem, client: pki.client, timeoutMs: 30_000 });
}

interface HealthAnswer {
  status: string;
  healthy: number;
  total: number;
  round: { started: string; durationMs: number; deadlineMs: number; cut: number; notAsked: number };
  nodes: Array<{ name: string; status: string; error?: string }>;
}

const hungName = (index: number): string => `hung${String(index).padStart(3, '0')}`;
const healthyNames = ['ops0', 'ops1', 'ops2', 'ops3'];

beforeAll(async () => {
  pki = await createTestPki();
  stateDir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-round-'));
  for (let index = 0; index < hungCount; index += 1) hung.push(await hungServer());
  for (let index = 0; index < healthyNames.length; index += 1) {
    healthy.push(await startOperationsSystem({ config: testConfig({ operations: { tls: serverTls(pki) } }), logStream: devNull() }));
  }
  const hungNodes = hung.map((server, index) => ({ name: hungName(index), url: server.url, group: 'ops' }));
  const healthyNodes = healthy.map((system, index) => ({ name: healthyNames[index] as string, url: system.url, group: 'ops' }));
  const config = fleetConfigFrom(
    {
      stateDirectory: stateDir,
      nodeTimeout: `${nodeTimeoutMs}ms`,
      concurrency,
      pollInterval: '0s',
      minRoundInterval: '0s',
      healthy: { minCount: healthyNames.length },
      groups: { ops: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } } },
      nodes: [...hungNodes.slice(0, hungFirst), ...healthyNodes, ...hungNodes.slice(hungFirst)],
    },
    path.join(stateDir, 'fleet.yaml'),
  );
  expect(config.roundTimeoutMs).toBe(roundTimeoutMs);
  fleet = await startOperationsSystem({
    config: testConfig({ operations: { tls: serverTls(pki) } }),
    logStream: devNull(),
    extensions: [fleetExtension(config)],
  });
});

afterAll(async () => {
  await fleet?.stop(0);
  await Promise.all(healthy.map((system) => system.stop(0)));
  await Promise.all(hung.map((server) => server.close()));
  await rm(stateDir, { recursive: true, force: true });
  await pki?.cleanup();
});

/** Every node's own status, and the round's report checked against itself and its bound. */
function checkRound(answer: HttpAnswer): HealthAnswer {
  const body = answer.json as HealthAnswer;
  const byStatus = (status: string): string[] => body.nodes.filter((node) => node.status === status).map((node) => node.name);
  expect(answer.status).toBe(200);
  expect({ total: body.total, healthy: body.healthy, status: body.status }).toEqual({ total: hungCount + healthyNames.length, healthy: 4, status: 'OK' });
  expect(byStatus('ok')).toEqual(healthyNames);
  expect(byStatus('timeout')).toEqual(hung.map((_server, index) => hungName(index)).sort());
  // 160 hung nodes at 16 a wave need 10 s: the deadline (3 s) ended this round, and the report says how.
  expect(body.round.deadlineMs).toBe(roundTimeoutMs);
  expect(body.round.durationMs).toBeGreaterThanOrEqual(roundTimeoutMs);
  // The answer did not wait for the calls it cut to time out on their own (a whole nodeTimeout more).
  expect(body.round.durationMs).toBeLessThan(roundTimeoutMs + nodeTimeoutMs);
  // Per node: each hung node either timed out on its own, or names the deadline (its call cut, or not made).
  const ownTimeout = body.nodes.filter((node) => node.error === `no complete answer within ${nodeTimeoutMs} ms`);
  const cut = body.nodes.filter((node) => /^the round's deadline \(roundTimeout 3000 ms\) passed: the call was cut after \d+ ms$/.test(node.error ?? ''));
  const notAsked = body.nodes.filter((node) => node.error === "the round's deadline (roundTimeout 3000 ms) passed: not asked");
  expect([ownTimeout.length + cut.length + notAsked.length, cut.length, notAsked.length]).toEqual([hungCount, body.round.cut, body.round.notAsked]);
  // In 3 s, 16 workers end at most 3 waves of 1 s timeouts: most hung nodes could not be asked.
  expect(ownTimeout.length).toBeLessThanOrEqual(concurrency * (roundTimeoutMs / nodeTimeoutMs));
  return body;
}

test(
  'the first round answers at its deadline: every hung node timeout, every healthy node ok',
  async () => {
    checkRound(await fleetCall('/fleet/healthz'));
  },
  roundTestTimeoutMs,
);

test(
  'the second round asks the healthy nodes beside the nodes that timed out, not after them',
  async () => {
    // The old order (slowest of the last round first) put the nodes that had timed out (dozens) in
    // front of the healthy ones: these then waited 3 s or more, past the deadline, and were not asked.
    checkRound(await fleetCall('/fleet/healthz'));
  },
  roundTestTimeoutMs,
);

test(
  'a version round has the same deadline: the healthy nodes answer, every hung node is listed with timeout',
  async () => {
    const answer = await fleetCall('/fleet/version');
    expect(answer.status).toBe(200);
    const body = answer.json as { versions: Array<{ nodes: string[] }>; unreachable: Array<{ name: string; reason: string }> };
    expect(body.versions.flatMap((group) => group.nodes)).toEqual(healthyNames);
    expect(body.unreachable.map((node) => node.reason)).toEqual(new Array<string>(hungCount).fill('timeout'));
  },
  roundTestTimeoutMs,
);
