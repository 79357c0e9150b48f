/**
 * Companion mode, the node's log level (issue 29, item 3; docs/companion.md, "The node's log
 * level"): fabric-ops' own /logspec reads and sets the node's, over the node's operations endpoint
 * (address and TLS from its core.yaml). A write with a TTL is put back under the fleet's rules:
 * only if the node still holds it, persisted in the state directory (a restarted companion still
 * puts back), retried while the node is down. Writes need fabric-ops' TLS and a client certificate.
 * The node is the double of a recorded Fabric 2.5.12 peer (test/support/fabric-double.ts: its mTLS
 * rules, its /logspec grammar and answers, its recorded spec again after a restart).
 */
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { companionOfDoubleEnv, companionServerEnv, companionWritesEnv } from '../../support/companion';
import { FabricNetwork, releaseDir, type FabricDouble } from '../../support/fabric-double';
import { request, type HttpAnswer } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type KeyPair, type TestPki } from '../../support/pki';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

let network: FabricNetwork;
let peer: FabricDouble;
let pki: TestPki;
let dir: string;
/** The org's operator certificate: what a person changing the node's own /logspec presents. */
let operator: KeyPair;
const running = new Set<OperationsSystem>();

const recordedSpec = 'info';

function portOf(url: string): number {
  return Number(new URL(url).port);
}

interface Companion {
  system: OperationsSystem;
  log: LogCapture;
  stateDir: string;
}

/** A companion of `peer` with fabric-ops' own TLS (client CAs: the test client CA), writable, keeping put-backs in `stateDir`. */
async function companion(overrides: NodeJS.ProcessEnv = {}, stateDir?: string): Promise<Companion> {
  const state = stateDir ?? (await mkdtemp(path.join(dir, 'state-')));
  const recorded = path.join(releaseDir('2.5.12'), 'crypto', 'peerOrganizations', 'org1', 'peers', 'peer0.org1');
  const log = new LogCapture();
  const system = await startOperationsSystem({
    configFile: path.join(dir, 'core.yaml'),
    logStream: log,
    env: {
      ...companionServerEnv(pki),
      ...companionWritesEnv(state),
      ...companionOfDoubleEnv(peer),
      CORE_PEER_MSPCONFIGPATH: path.join(recorded, 'msp'),
      ...overrides,
    },
  });
  running.add(system);
  return { system, log, stateDir: state };
}

async function stopCompanion(system: OperationsSystem): Promise<void> {
  running.delete(system);
  await system.stop(0);
}

/** A call to the companion's server, as the operator with the test client certificate (or `client`; null: none). */
function call(system: OperationsSystem, method: 'GET' | 'PUT', body?: unknown, client: KeyPair | null = pki.client, target = '/logspec'): Promise<HttpAnswer> {
  return request(`${system.url}${target}`, {
    method,
    ca: pki.serverCA.certPem,
    ...(client === null ? {} : { client }),
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
}

/** A PUT on the node's own /logspec, with the org's operator certificate: someone changing the node without the companion. */
async function putOnNode(spec: string): Promise<void> {
  const answer = await request(`${peer.url.replace('127.0.0.1', 'localhost')}/logspec`, {
    method: 'PUT',
    ca: readFileSync(peer.caFile, 'utf8'),
    client: operator,
    body: JSON.stringify({ spec }),
  });
  expect(answer.status).toBe(204);
}

interface StateFile {
  version: number;
  pending: Array<{ node: string; previous: string; specs: string[]; dueAt: number; actor: string }>;
}

async function stateOf(stateDir: string): Promise<StateFile> {
  return JSON.parse(await readFile(path.join(stateDir, 'companion-putbacks.json'), 'utf8')) as StateFile;
}

beforeAll(async () => {
  network = await FabricNetwork.open('2.5.12');
  peer = network.node('peer0.org1');
  await peer.start();
  pki = await createTestPki();
  dir = await mkdtemp(path.join(os.tmpdir(), 'companion-logspec-'));
  await copyFile(path.join(releaseDir('2.5.12'), 'sampleconfig', 'core.yaml'), path.join(dir, 'core.yaml'));
  operator = {
    cert: peer.clientCertFile,
    key: peer.clientKeyFile,
    certPem: readFileSync(peer.clientCertFile, 'utf8'),
    keyPem: readFileSync(peer.clientKeyFile, 'utf8'),
  };
});

afterEach(async () => {
  for (const system of [...running]) await stopCompanion(system);
  // Every test starts from a node at its recorded spec.
  if (!peer.running) await peer.start();
  if (peer.spec !== recordedSpec) await putOnNode(recordedSpec);
});

afterAll(async () => {
  await network?.close();
  await pki?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe("the companion's /logspec is the node's", () => {
  test("GET answers the node's spec, as Fabric answers it", async () => {
    const { system } = await companion();
    await putOnNode('gossip=warn:info');
    const answer = await call(system, 'GET');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ spec: 'gossip=warn:info' });
    // fabric-ops' own loggers are not what it answers, and are untouched.
    expect(system.getLogSpec()).toBe('info');
  });

  test("PUT sets the node's spec (204, as Fabric); the audit line names the client certificate's subject", async () => {
    const { system, log } = await companion();
    const answer = await call(system, 'PUT', { spec: 'gossip=debug:info' });
    expect(answer.status).toBe(204);
    expect(answer.body).toBe('');
    expect(peer.spec).toBe('gossip=debug:info');
    expect(system.getLogSpec()).toBe('info');
    expect(log.matching(/node logging specification changed from 'info' to 'gossip=debug:info' by O=fabric-ops tests,CN=operator/)).toHaveLength(1);
    const metrics = await call(system, 'GET', undefined, pki.client, '/metrics');
    expect(metrics.body).toMatch(/^companion_logspec_writes_total\{trigger="request",result="applied"\} 1$/m);
  });

  test('a spec that does not parse is a 400 and the node is not asked', async () => {
    const { system } = await companion();
    const answer = await call(system, 'PUT', { spec: 'gossip=loud' });
    expect(answer.status).toBe(400);
    expect((answer.json as { error: string }).error).toContain("invalid logging specification 'gossip=loud'");
    expect(peer.spec).toBe(recordedSpec);
  });

  test('a body with another property, or a TTL that is not a duration, is a 400 naming it', async () => {
    const { system } = await companion();
    const extra = await call(system, 'PUT', { spec: 'debug', level: 'debug' });
    expect(extra.status).toBe(400);
    expect((extra.json as { error: string }).error).toBe('unknown property "level": the body may contain only "spec" and "ttl"');
    const ttl = await call(system, 'PUT', { spec: 'debug', ttl: 'ten minutes' });
    expect(ttl.status).toBe(400);
    expect((ttl.json as { error: string }).error).toMatch(/^ttl: "ten minutes" is not a duration/);
    const short = await call(system, 'PUT', { spec: 'debug', ttl: '500ms' });
    expect(short.status).toBe(400);
    expect((short.json as { error: string }).error).toMatch(/^ttl: .*shorter than the minimum, 1s/);
    expect(peer.spec).toBe(recordedSpec);
  });

  test('a stopped node: 502 naming the node and the reason', async () => {
    const { system } = await companion();
    await peer.stop();
    const answer = await call(system, 'PUT', { spec: 'debug' });
    expect(answer.status).toBe(502);
    expect((answer.json as { error: string }).error).toMatch(
      new RegExp(`^the node's /logspec: unreachable: ${peer.url.replace(/\./g, '\\.')}/logspec: ECONNREFUSED`),
    );
    const read = await call(system, 'GET');
    expect(read.status).toBe(502);
  });
});

describe('a TTL, and the put-back', () => {
  test('the previous spec is put back when the TTL ends; the put-back was kept in the state directory meanwhile', async () => {
    const { system, log, stateDir } = await companion();
    const answer = await call(system, 'PUT', { spec: 'gossip=debug:info', ttl: '2s' });
    expect(answer.status).toBe(204);
    expect(peer.spec).toBe('gossip=debug:info');
    const state = await stateOf(stateDir);
    expect(state.pending).toEqual([
      {
        node: `127.0.0.1:${portOf(peer.url)}`,
        previous: 'info',
        specs: ['gossip=debug:info'],
        dueAt: expect.any(Number) as number,
        actor: 'O=fabric-ops tests,CN=operator',
      },
    ]);
    await waitFor('the put-back on the node', () => peer.spec === recordedSpec);
    await waitFor('the put-back removed from the state file', async () => (await stateOf(stateDir)).pending.length === 0);
    // Logged once the state file is written.
    await waitFor(
      'the put-back audit line',
      () => log.matching(/node logging specification put back to 'info': the TTL of O=fabric-ops tests,CN=operator ended/)[0],
    );
  });

  test('a spec someone else set on the node meanwhile is left alone', async () => {
    const { system, log, stateDir } = await companion();
    expect((await call(system, 'PUT', { spec: 'ledger=debug:info', ttl: '2s' })).status).toBe(204);
    await putOnNode('chaincode=warn:info');
    await waitFor('the put-back', () => log.matching(/left at 'chaincode=warn:info', not put back to 'info': it was changed since/)[0]);
    expect(peer.spec).toBe('chaincode=warn:info');
    expect((await stateOf(stateDir)).pending).toEqual([]);
  });

  test('a companion restarted during the TTL still puts back: the put-back was persisted', async () => {
    const first = await companion();
    expect((await call(first.system, 'PUT', { spec: 'gossip=debug:info', ttl: '3s' })).status).toBe(204);
    await stopCompanion(first.system);
    expect(peer.spec).toBe('gossip=debug:info');
    const second = await companion({}, first.stateDir);
    expect(second.log.matching(/pending put-back of the node's logging spec to 'info' loaded from .*companion-putbacks\.json/)).toHaveLength(1);
    await waitFor('the put-back by the restarted companion', () => peer.spec === recordedSpec);
    await waitFor('the state file emptied', async () => (await stateOf(first.stateDir)).pending.length === 0);
  });

  test('a node down when the TTL ends: the put-back is retried; the node, restarted with its own spec, is then left alone', async () => {
    const { system, log, stateDir } = await companion();
    expect((await call(system, 'PUT', { spec: 'gossip=debug:info', ttl: '1s' })).status).toBe(204);
    await peer.stop();
    await waitFor('a failed put-back', () => log.matching(/node logging specification not put back to 'info' .*ECONNREFUSED.*tried again with backoff/)[0]);
    expect((await stateOf(stateDir)).pending).toHaveLength(1);
    await peer.start();
    await waitFor('the put-back once the node answers', () => log.matching(/already at 'info', nothing to put back/)[0]);
    expect((await stateOf(stateDir)).pending).toEqual([]);
  });
});

describe("writes are never less protected than the node's own endpoint", () => {
  test('PUT without a client certificate: 401, and the node is not touched', async () => {
    const { system } = await companion();
    const answer = await call(system, 'PUT', { spec: 'debug' }, null);
    expect(answer.status).toBe(401);
    expect((answer.json as { error: string }).error).toBe(
      'a client certificate issued by a trusted client CA is required to change the node logging specification',
    );
    expect(peer.spec).toBe(recordedSpec);
    expect((await call(system, 'GET', undefined, null)).status).toBe(401);
  });

  test('writes not turned on: 403 naming the key', async () => {
    const { system } = await companion({ CORE_OPERATIONS_COMPANION_LOGSPEC_WRITABLE: 'false' });
    const answer = await call(system, 'PUT', { spec: 'debug' });
    expect(answer.status).toBe(403);
    expect((answer.json as { error: string }).error).toBe(
      "the node's logging specification is read-only through fabric-ops: operations.companion.logspec.writable is false",
    );
    expect(peer.spec).toBe(recordedSpec);
    expect((await call(system, 'GET')).json).toEqual({ spec: recordedSpec });
  });

  test('writable over plain HTTP: the start is refused, naming the keys', async () => {
    await expect(companion({ CORE_OPERATIONS_COMPANION_TLS_ENABLED: 'false' })).rejects.toThrow(
      /^operations\.companion\.logspec\.writable \(from CORE_OPERATIONS_COMPANION_LOGSPEC_WRITABLE\): true needs operations\.companion\.tls\.enabled \(from CORE_OPERATIONS_COMPANION_TLS_ENABLED\) true/,
    );
  });

  test('a TTL without a state directory: 400 naming the key; the node is not touched', async () => {
    const { system } = await companion({ CORE_OPERATIONS_COMPANION_LOGSPEC_STATEDIRECTORY: '' });
    const answer = await call(system, 'PUT', { spec: 'debug', ttl: '1m' });
    expect(answer.status).toBe(400);
    expect((answer.json as { error: string }).error).toMatch(/^ttl: needs operations\.companion\.logspec\.stateDirectory/);
    expect(peer.spec).toBe(recordedSpec);
  });
});
