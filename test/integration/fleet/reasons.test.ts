/**
 * Why a node could not be asked, against real failures: the double of a recorded Fabric 2.5.12 peer
 * (test/support/fabric-double.ts) reached with the wrong CA, another org's client certificate (a
 * bad certificate alert in the handshake, as the real peer sends), or none; a closed port; a node
 * that accepts and never answers; a server answering something that is not the operations API.
 * And coalescing: many callers at once cause one call per node.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fleetConfigFrom, fleetExtension } from '../../../src/fleet';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, type TestPki, serverTls } from '../../support/pki';
import { freeTcpPort } from '../../support/ports';
import { FabricNodes, hungServer } from './harness';

jest.setTimeout(120_000);

let pki: TestPki;
let fabric: FabricNodes;
let stateDir: string;
let fleet: OperationsSystem;
let hung: { url: string; close(): Promise<void> };
let oddServer: https.Server;
let slowServer: https.Server;
const slowCalls: string[] = [];

const devNull = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });

function listen(server: https.Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`https://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function fleetCall(pathName: string): Promise<HttpAnswer> {
  return request(`${fleet.url}${pathName}`, { ca: pki.serverCA.certPem, client: pki.client });
}

beforeAll(async () => {
  pki = await createTestPki();
  fabric = await FabricNodes.start('2.5.12', { orgs: 2, peersPerOrg: 1, orderers: 0 });
  hung = await hungServer();
  // Answers 200 with HTML: a web server, not an operations endpoint.
  oddServer = https.createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<html>hello</html>');
  });
  // A healthy node that takes 300 ms to answer, counting its calls.
  slowServer = https.createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (req, res) => {
    slowCalls.push(req.url ?? '');
    setTimeout(() => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ status: 'OK', time: new Date().toISOString() }));
    }, 300);
  });
  // closedPort is probed and left closed: that node must refuse the connection ('unreachable'),
  // which a listener, on port 0 or any other, cannot do while it holds the port.
  const [oddUrl, slowUrl, closedPort] = [await listen(oddServer), await listen(slowServer), await freeTcpPort()];
  stateDir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-reasons-'));
  // Each org's operations CA and operator client certificate, from its peer.
  const org1 = fabric.node('peer0.org1');
  const org2 = fabric.node('peer0.org2');
  const peer1 = org1.url;
  const config = fleetConfigFrom(
    {
      stateDirectory: stateDir,
      nodeTimeout: '1s',
      pollInterval: '0s',
      minRoundInterval: '0s',
      healthy: { minCount: 2 },
      groups: {
        org1: { tls: { caFiles: [org1.caFile], certFile: org1.clientCertFile, keyFile: org1.clientKeyFile } },
        wrongCa: { tls: { caFiles: [org2.caFile], certFile: org1.clientCertFile, keyFile: org1.clientKeyFile } },
        otherOrgClient: { tls: { caFiles: [org1.caFile], certFile: org2.clientCertFile, keyFile: org2.clientKeyFile } },
        noClient: { tls: { caFiles: [org1.caFile] } },
        test: { tls: { caFiles: [pki.serverCA.cert] } },
      },
      nodes: [
        { name: 'ok', url: peer1, group: 'org1', dialect: 'peer' },
        { name: 'wrong-ca', url: peer1, group: 'wrongCa' },
        { name: 'other-org-client', url: peer1, group: 'otherOrgClient' },
        { name: 'no-client-cert', url: peer1, group: 'noClient' },
        { name: 'closed-port', url: `https://127.0.0.1:${closedPort}`, group: 'test' },
        { name: 'hung', url: hung.url, group: 'test' },
        { name: 'not-operations', url: oddUrl, group: 'test' },
        { name: 'slow', url: slowUrl, group: 'test' },
      ],
    },
    path.join(stateDir, 'fleet.yaml'),
  );
  fleet = await startOperationsSystem({
    config: testConfig({ operations: { tls: serverTls(pki) } }),
    logStream: devNull(),
    extensions: [fleetExtension(config)],
  });
});

afterAll(async () => {
  await fleet?.stop(0);
  await hung?.close();
  oddServer?.closeAllConnections();
  slowServer?.closeAllConnections();
  await Promise.all([new Promise((resolve) => oddServer?.close(resolve)), new Promise((resolve) => slowServer?.close(resolve))]);
  await fabric?.cleanup();
  await rm(stateDir, { recursive: true, force: true });
  await pki?.cleanup();
});

test('distinct reasons: tls (wrong CA, another org client certificate), unreachable, timeout, bad_response; the share rule decides 200', async () => {
  const started = Date.now();
  const answer = await fleetCall('/fleet/healthz');
  const elapsed = Date.now() - started;
  const body = answer.json as { status: string; healthy: number; required: number; nodes: Array<{ name: string; status: string; error?: string }> };
  const statuses = Object.fromEntries(body.nodes.map((node) => [node.name, node.status]));
  expect(statuses).toEqual({
    ok: 'ok',
    'wrong-ca': 'tls',
    'other-org-client': 'tls',
    // Fabric's /healthz needs no client certificate when clientAuthRequired is false.
    'no-client-cert': 'ok',
    'closed-port': 'unreachable',
    hung: 'timeout',
    'not-operations': 'bad_response',
    slow: 'ok',
  });
  expect(body.required).toBe(2);
  expect(answer.status).toBe(200);
  // The hung node costs its timeout (1 s), once: the other calls run beside it.
  expect(elapsed).toBeLessThan(5000);
});

test('unauthorized: a node that answers 401 (Fabric /logspec without a client certificate)', async () => {
  const answer = await fleetCall('/fleet/logspec');
  const node = (answer.json as { nodes: Array<{ name: string; status: string; error?: string }> }).nodes.find((entry) => entry.name === 'no-client-cert');
  expect(node).toMatchObject({ status: 'unauthorized', error: expect.stringMatching(/^401/) as unknown });
});

test('100 callers at once share one round: one call per node', async () => {
  slowCalls.length = 0;
  const answers = await Promise.all(Array.from({ length: 100 }, () => fleetCall('/fleet/healthz')));
  expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200]));
  expect(slowCalls).toEqual(['/healthz']);
});
