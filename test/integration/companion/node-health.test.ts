/**
 * Companion mode, the node's health (issue 29, item 4; docs/companion.md): the companion's `node`
 * checker calls the node's own /healthz over its operations endpoint, with the address and TLS of
 * the node's core.yaml. The node is the double of a recorded Fabric 2.5.12 peer (its TLS rules, its
 * 503 with failed_checks, stopped and started again); the failure reasons are told apart.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { companionOfDoubleEnv } from '../../support/companion';
import { FabricNetwork, releaseDir, type FabricDouble } from '../../support/fabric-double';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type TestPki } from '../../support/pki';

interface Health {
  status: string;
  failed_checks?: Array<{ component: string; reason: string }>;
}

let network: FabricNetwork;
let peer: FabricDouble;
let pki: TestPki;
let dir: string;
const systems: OperationsSystem[] = [];

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** A companion of `peer` (its core.yaml: Fabric's sample with CORE_* overrides), with these overrides on top. */
async function companion(overrides: NodeJS.ProcessEnv = {}): Promise<OperationsSystem> {
  const recorded = path.join(releaseDir('2.5.12'), 'crypto', 'peerOrganizations', 'org1', 'peers', 'peer0.org1');
  const system = await startOperationsSystem({
    configFile: path.join(dir, 'core.yaml'),
    logStream: new LogCapture(),
    env: {
      CORE_OPERATIONS_COMPANION_ENABLED: 'true',
      CORE_OPERATIONS_COMPANION_LISTENADDRESS: '127.0.0.1:0',
      ...companionOfDoubleEnv(peer),
      CORE_PEER_MSPCONFIGPATH: path.join(recorded, 'msp'),
      ...overrides,
    },
  });
  systems.push(system);
  return system;
}

async function health(system: OperationsSystem): Promise<{ status: number; body: Health }> {
  const answer = await request(`${system.url}/healthz`);
  return { status: answer.status, body: answer.json as Health };
}

beforeAll(async () => {
  network = await FabricNetwork.open('2.5.12');
  peer = network.node('peer0.org1');
  await peer.start();
  pki = await createTestPki();
  dir = await mkdtemp(path.join(os.tmpdir(), 'companion-node-health-'));
  await copyFile(path.join(releaseDir('2.5.12'), 'sampleconfig', 'core.yaml'), path.join(dir, 'core.yaml'));
});

afterAll(async () => {
  for (const system of systems) await system.stop(0);
  await network?.close();
  await pki?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe("companion mode: the node's /healthz as the `node` checker", () => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await companion();
  });

  test('calls the node at its operations address (an every-interface host is called on 127.0.0.1)', () => {
    expect(system.config.companion?.node.address).toEqual({ host: '127.0.0.1', port: portOf(peer.url) });
  });

  test('a healthy node: 200', async () => {
    expect(await health(system)).toEqual({ status: 200, body: expect.objectContaining({ status: 'OK' }) as Health });
  });

  test("a node answering 503: the companion's 503 carries the node's failed_checks", async () => {
    peer.setFailedChecks([{ component: 'docker', reason: 'failed to connect to Docker daemon: connection refused' }]);
    try {
      const answer = await health(system);
      expect(answer.status).toBe(503);
      expect(answer.body.failed_checks).toEqual([
        { component: 'node', reason: `unhealthy: ${peer.url}/healthz answered 503: docker: failed to connect to Docker daemon: connection refused` },
      ]);
    } finally {
      peer.setFailedChecks([]);
    }
  });

  test('a stopped node is unreachable; started again, it is healthy again', async () => {
    await peer.stop();
    try {
      const answer = await health(system);
      expect(answer.status).toBe(503);
      expect(answer.body.failed_checks).toHaveLength(1);
      expect(answer.body.failed_checks?.[0]?.component).toBe('node');
      expect(answer.body.failed_checks?.[0]?.reason).toMatch(new RegExp(`^unreachable: ${peer.url.replace(/\./g, '\\.')}/healthz: ECONNREFUSED`));
    } finally {
      await peer.start();
    }
    expect((await health(system)).status).toBe(200);
  });

  test("the node's own certificate (operations.tls.cert.file) is one of the certificates reported", async () => {
    const metrics = await request(`${system.url}/metrics`);
    expect(metrics.body).toMatch(/^companion_certificate_expiry_timestamp_seconds\{kind="operations_server",key="operations\.tls\.cert\.file",.*\} \d+/m);
  });
});

describe('failures of the call itself', () => {
  test("a node whose certificate the companion's root CAs did not issue: tls", async () => {
    const system = await companion({ CORE_OPERATIONS_COMPANION_NODE_ROOTCAS_FILES: pki.serverCA.cert });
    const answer = await health(system);
    expect(answer.status).toBe(503);
    expect(answer.body.failed_checks?.[0]?.reason).toMatch(/^tls: /);
  });

  test('a node that accepts the connection and never answers: timeout', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const system = await companion({ CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${port}`, CORE_OPERATIONS_HEALTHCHECK_TIMEOUT: '300ms' });
      const answer = await health(system);
      expect(answer.status).toBe(503);
      expect(answer.body.failed_checks?.[0]).toEqual({
        component: 'node',
        reason: expect.stringMatching(/^timeout: https:\/\/127\.0\.0\.1:\d+\/healthz: /) as string,
      });
    } finally {
      silent.close();
    }
  });

  test('a node that requires a client certificate refuses the companion configured without one: a configuration error naming the key', async () => {
    await expect(
      companion({
        CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: 'true',
        CORE_OPERATIONS_COMPANION_NODE_CLIENTCERT_FILE: '',
        CORE_OPERATIONS_COMPANION_NODE_CLIENTKEY_FILE: '',
      }),
    ).rejects.toThrow(
      /operations\.companion\.node\.clientCert\.file: required when operations\.tls\.clientAuthRequired \(from CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED\) is true/,
    );
  });
});
