/**
 * What `fabric-ops fleet` shows an operator, run as built (dist/cli.js) against a fleet server
 * (dist/cli.js --fleet-config) over doubles of recorded Fabric 3.0.0 nodes
 * (test/support/fabric-double.ts): issue 28 item 5 and issue 30 items 1-5.
 *
 * The fleet: peer0.org1 (its org's credentials: answers), peer0.org2 in a group with org1's client
 * certificate (the node refuses it with a TLS alert), orderer0 in a group trusting org1's CA (its
 * certificate does not verify), peer1.org1 on a closed port, and `evil`: not a Fabric double but a
 * hostile node of this test, answering a Version that sets the window title, clears the screen and
 * forges a table row, a 3,000-character CommitSHA, and control characters in its failed checks
 * and spec.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { logUnsafeCharacter } from '../../../src/text';
import { requireBuiltCli, runCli, runCliToEnd, type CliRun } from '../../support/cli';
import { request } from '../../support/http';
import { createTestPki, type TestPki } from '../../support/pki';
import { FabricNodes, fleetServerEnv, fleetWrite } from './harness';

jest.setTimeout(120_000);

type Run = { code: number | null; stdout: string; stderr: string };

let pki: TestPki;
let fabric: FabricNodes;
let dir: string;
let server: CliRun;
let url: string;
let hostile: https.Server;
let closedPort: number;

const hostileVersion = '\u001b]0;pwned\u0007\u001b[2J\nfake-row  ok  \u202egpj.exe';

function fleetCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return runCliToEnd(['fleet', ...args], {
    FABRIC_OPS_FLEET_URL: url,
    FABRIC_OPS_FLEET_CERT: pki.client.cert,
    FABRIC_OPS_FLEET_KEY: pki.client.key,
    FABRIC_OPS_FLEET_CACERT: pki.serverCA.cert,
    ...env,
  });
}

/** Every line of the run's stdout within `width` characters (code points). */
function expectWithin(run: Run, width: number): void {
  const long = run.stdout.split('\n').filter((line) => [...line].length > width);
  expect(long).toEqual([]);
}

/** The text with its wrapped lines joined (prose lines wrap at the width). */
const joined = (text: string): string => text.replace(/\n/g, ' ');

/** No raw control, C1, separator or bidi character anywhere the operator reads. */
function expectEscaped(run: Run): void {
  expect({ stdout: logUnsafeCharacter.test(run.stdout.replace(/\n/g, '')), stderr: logUnsafeCharacter.test(run.stderr.replace(/\n/g, '')) }).toEqual({
    stdout: false,
    stderr: false,
  });
}

beforeAll(async () => {
  requireBuiltCli();
  pki = await createTestPki();
  fabric = await FabricNodes.start('3.0.0', { orgs: 2, peersPerOrg: 1, orderers: 1 });
  hostile = https.createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/version') res.end(JSON.stringify({ Version: hostileVersion, CommitSHA: 'c'.repeat(3000) }));
    else if (req.url === '/healthz') {
      res.statusCode = 503;
      res.end(JSON.stringify({ status: 'Service Unavailable', failed_checks: [{ component: '\u001b[31mledger', reason: 'bad\u009b2J\u2028row' }] }));
    } else res.end(JSON.stringify({ spec: '\u001b[2Jinfo' }));
  });
  await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  closedPort = (closed.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-output-'));
  const peer1 = fabric.node('peer0.org1');
  const peer2 = fabric.node('peer0.org2');
  const orderer = fabric.node('orderer0.ordererorg');
  await writeFile(
    path.join(dir, 'fleet.yaml'),
    [
      'stateDirectory: state',
      'pollInterval: 0s',
      'nodeTimeout: 2s',
      "writers: ['O=fabric-ops tests,CN=operator']",
      'groups:',
      `  org1: { tls: { caFiles: ['${peer1.caFile}'], certFile: '${peer1.clientCertFile}', keyFile: '${peer1.clientKeyFile}' } }`,
      `  org2: { tls: { caFiles: ['${peer2.caFile}'], certFile: '${peer1.clientCertFile}', keyFile: '${peer1.clientKeyFile}' } }`,
      `  orderers: { tls: { caFiles: ['${peer1.caFile}'], certFile: '${orderer.clientCertFile}', keyFile: '${orderer.clientKeyFile}' } }`,
      `  hostile: { tls: { caFiles: ['${pki.serverCA.cert}'], certFile: '${pki.client.cert}', keyFile: '${pki.client.key}' } }`,
      'nodes:',
      `  - { name: peer0.org1, url: '${peer1.url}', dialect: peer, group: org1, labels: { role: peer } }`,
      `  - { name: peer0.org2, url: '${peer2.url}', dialect: peer, group: org2, labels: { role: peer } }`,
      `  - { name: orderer0.ordererorg, url: '${orderer.url}', dialect: orderer, group: orderers, labels: { role: orderer } }`,
      `  - { name: peer1.org1, url: 'https://127.0.0.1:${closedPort}', dialect: peer, group: org1, labels: { role: peer } }`,
      `  - { name: evil, url: 'https://localhost:${(hostile.address() as net.AddressInfo).port}', dialect: peer, group: hostile, labels: { role: sidecar } }`,
      '',
    ].join('\n'),
  );
  server = runCli([], fleetServerEnv(pki, path.join(dir, 'fleet.yaml'), { CORE_METRICS_PROVIDER: 'prometheus' }));
  url = await server.listening();
});

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  hostile?.closeAllConnections();
  await new Promise((resolve) => hostile?.close(resolve));
  await fabric?.cleanup();
  await rm(dir, { recursive: true, force: true });
  await pki?.cleanup();
});

describe('issue 28 item 5: node text reaches the terminal escaped, Version and CommitSHA bounded', () => {
  test('status, versions and logspec get: no raw control character, no forged row; the text shows escaped', async () => {
    const [status, versions, get] = [
      await fleetCli(['status', '--wide']),
      await fleetCli(['versions', '--wide']),
      await fleetCli(['logspec', 'get', '--wide']),
    ];
    for (const run of [status, versions, get]) expectEscaped(run);
    expect(status.stdout).toMatch(/^evil\s+hostile\s+peer\s+failing\s+\d+ms\s+https:\/\/localhost:\d+\s+\\u001b\[31mledger: bad\\u009b2J row$/m);
    expect(versions.stdout).toContain('\\u001b]0;pwned\\u0007\\u001b[2J\\nfake-row  ok  \\u202egpj.exe');
    expect(versions.stdout).not.toMatch(/^fake-row/m);
    expect(get.stdout).toMatch(/^evil\s+hostile\s+\\u001b\[2Jinfo$/m);
  });

  test('the server answers the Version escaped and the CommitSHA bounded; --json output stays escaped', async () => {
    const run = await fleetCli(['versions', '--json']);
    expectEscaped(run);
    const body = JSON.parse(run.stdout) as { versions: Array<{ version: string; commit: string; nodes: string[] }> };
    const evil = body.versions.find((group) => group.nodes.includes('evil'));
    expect(evil?.version).toBe('\\u001b]0;pwned\\u0007\\u001b[2J\\nfake-row  ok  \\u202egpj.exe');
    expect(evil?.commit).toMatch(/^c+\.\.\. \(3000 characters\)$/);
    expect(evil?.commit.length).toBeLessThanOrEqual(64);
  });

  test('fleet_node_version_info: the labels bounded and escaped', async () => {
    await fleetCli(['versions']);
    const metrics = await request(`${url}/metrics`, { ca: pki.serverCA.certPem, client: pki.client });
    expect(metrics.status).toBe(200);
    const line = metrics.body.split('\n').find((text) => text.startsWith('fleet_node_version_info{node="evil"'));
    expect(line).toBeDefined();
    expect(logUnsafeCharacter.test(line ?? '')).toBe(false);
    expect(line?.length).toBeLessThan(250);
    expect(line).toMatch(/commit="c+\.\.\. \(3000 characters\)"/);
  });
});

describe('issue 30 item 2: TLS errors say what happened and which file to look at', () => {
  test("a group's client certificate refused by its node, a group CA that does not verify its node: group, key and file; one line, no OpenSSL string", async () => {
    const run = await fleetCli(['status', '--json']);
    const nodes = (JSON.parse(run.stdout) as { nodes: Array<{ name: string; status: string; error?: string }> }).nodes;
    const peer2 = fabric.node('peer0.org2');
    const peer1 = fabric.node('peer0.org1');
    expect(nodes.find((node) => node.name === 'peer0.org2')).toMatchObject({
      status: 'tls',
      error: `client certificate refused (TLS alert "bad certificate"): groups.org2.tls.certFile (${peer1.clientCertFile}) must be issued by one of the node's operations.tls.clientRootCAs`,
    });
    expect(peer2.clientCertFile).not.toBe(peer1.clientCertFile);
    const orderer = nodes.find((node) => node.name === 'orderer0.ordererorg');
    expect(orderer?.status).toBe('tls');
    expect(orderer?.error).toMatch(
      /^untrusted server certificate \(self-signed certificate in certificate chain\): the node's certificate is not issued by a CA of groups\.orderers\.tls\.caFiles \(/,
    );
    expect(orderer?.error).toContain(peer1.caFile);
    for (const node of nodes) expect(node.error ?? '').not.toMatch(/\n|\.\.\/deps|SSL alert number|--use-system-ca/);
  });

  test('a client certificate the fleet server refuses: refused, naming the file; not "socket hang up"', async () => {
    const viaFlags = await fleetCli(['status', '--cert', pki.untrustedClient.cert, '--key', pki.untrustedClient.key]);
    expect(viaFlags.code).toBe(1);
    expect(viaFlags.stdout).toBe('');
    expect(viaFlags.stderr).toBe(
      `fabric-ops fleet: ${url}: client certificate refused after the TLS handshake (the fleet server closed the connection without answering): --cert ${pki.untrustedClient.cert} must be issued by one of the fleet server's operations.tls.clientRootCAs\n`,
    );
    const viaEnv = await fleetCli(['status'], { FABRIC_OPS_FLEET_CERT: pki.untrustedClient.cert, FABRIC_OPS_FLEET_KEY: pki.untrustedClient.key });
    expect(viaEnv.stderr).toContain(`FABRIC_OPS_FLEET_CERT=${pki.untrustedClient.cert} must be issued by`);
    expect(viaEnv.stderr).not.toContain('socket hang up');
  });

  test('a --cacert that does not verify the fleet server: names the file, without Node advice to use --use-system-ca', async () => {
    const run = await fleetCli(['status', '--cacert', pki.clientCA.cert]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `fabric-ops fleet: ${url}: untrusted server certificate (unable to verify the first certificate): the fleet server's certificate is not issued by a CA of --cacert ${pki.clientCA.cert}\n`,
    );
  });
});

describe('issue 30 item 3: at 80 columns status, versions and logspec get stay readable', () => {
  test('every line within 80 columns, long errors cut with a note; --wide shows them whole', async () => {
    for (const args of [['status'], ['versions'], ['logspec', 'get']]) {
      const run = await fleetCli(args);
      expectWithin(run, 80);
      expect(run.stdout).toMatch(/^\(.*cut to fit 80 columns; --wide or --json shows all\)$/m);
      const wide = await fleetCli([...args, '--wide']);
      expect(wide.stdout).toContain('client certificate refused (TLS alert "bad certificate"): groups.org2.tls.certFile (');
    }
    const status = await fleetCli(['status']);
    // The latency is left out before a detail is cut; the detail starts with what happened.
    expect(status.stdout).toMatch(/^NODE\s+GROUP\s+DIALECT\s+STATUS\s+DETAIL$/m);
    expect(status.stdout).toMatch(/^peer0\.org2\s+org2\s+peer\s+tls\s+client certificate refus\.\.\.$/m);
    expect(status.stdout).toMatch(/^orderer0\.ordererorg\s+orderers\s+orderer\s+tls\s+untrusted server certifi\.\.\.$/m);
    expect(status.stdout).toMatch(/^\(LATENCY left out and \d+ cut to fit 80 columns; --wide or --json shows all\)$/m);
  });

  test('COLUMNS sets the width', async () => {
    const run = await fleetCli(['versions'], { COLUMNS: '60' });
    expectWithin(run, 60);
    expect(run.stdout).toMatch(/cut to fit 60 columns/);
  });
});

describe('issue 30 item 4: a partial answer is not a success', () => {
  test('logspec get with nodes that did not answer: exit 1, saying how many', async () => {
    const run = await fleetCli(['logspec', 'get']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('3 of 5 nodes did not answer: their specs are unknown');
    expect((await fleetCli(['logspec', 'get', '--json'])).code).toBe(1);
  });

  test('one-shot: no node answered logspec get (exit 1); versions with one node unreachable is not "no version skew" (exit 1)', async () => {
    const peer = fabric.node('peer0.org1');
    const file = path.join(dir, 'partial.yaml');
    await writeFile(
      file,
      [
        'stateDirectory: state-partial',
        'groups:',
        `  org1: { tls: { caFiles: ['${peer.caFile}'], certFile: '${peer.clientCertFile}', keyFile: '${peer.clientKeyFile}' } }`,
        'nodes:',
        `  - { name: peer0.org1, url: '${peer.url}', dialect: peer, group: org1 }`,
        `  - { name: peer1.org1, url: 'https://127.0.0.1:${closedPort}', dialect: peer, group: org1 }`,
        '',
      ].join('\n'),
    );
    const versions = await fleetCli(['versions', '--fleet-config', file]);
    expect(versions.code).toBe(1);
    expect(versions.stdout).toMatch(/^3\.0\.0\s+94590aa\s+peer0\.org1$/m);
    expectWithin(versions, 80);
    expect(versions.stdout.replace(/\n/g, ' ')).toContain(
      'no version skew among the 1 node that answered, but 1 node did not answer: their versions are unknown, so skew is not ruled out',
    );
    const down = path.join(dir, 'down.yaml');
    await writeFile(
      down,
      [
        'stateDirectory: state-down',
        'groups:',
        `  org1: { tls: { caFiles: ['${peer.caFile}'], certFile: '${peer.clientCertFile}', keyFile: '${peer.clientKeyFile}' } }`,
        'nodes:',
        `  - { name: peer1.org1, url: 'https://127.0.0.1:${closedPort}', dialect: peer, group: org1 }`,
        '',
      ].join('\n'),
    );
    const get = await fleetCli(['logspec', 'get', '--fleet-config', down]);
    expect(get.code).toBe(1);
    expect(get.stdout).toContain('no node answered: 1 of 1 did not, their specs are unknown');
    const none = await fleetCli(['versions', '--fleet-config', down]);
    expect(none.code).toBe(1);
    expect(none.stdout).toContain('no node answered: 1 node did not, their versions are unknown');
  });
});

describe('issue 30 item 1: a fleet-wide change needs --all; the command says what it is about to change', () => {
  test('logspec set without a selector or --all: exit 2, no request, no node changed', async () => {
    const before = fabric.double('peer0.org1').spec;
    const run = await fleetCli(['logspec', 'set', 'warning']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'fabric-ops fleet: fleet logspec set: which nodes? Give --node, --group, --dialect or --selector, or --all to change every node of the fleet\nrun fabric-ops fleet --help for usage\n',
    );
    expect(fabric.double('peer0.org1').spec).toBe(before);
    const both = await fleetCli(['logspec', 'set', 'warning', '--all', '--node', 'peer0.org1']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--all selects every node');
  });

  test('a debug level gets a 1h TTL by default, said before the change; --permanent keeps it, said too', async () => {
    const debug = await fleetCli(['logspec', 'set', 'gossip=debug:info', '--node', 'peer0.org1', '--json']);
    expect(debug.code).toBe(0);
    expect(joined(debug.stderr)).toBe(
      "fabric-ops fleet: setting 'gossip=debug:info' on the nodes named peer0.org1, for 1h, the default for a debug level, then put back (--ttl chooses, --permanent keeps it) ",
    );
    const answer = JSON.parse(debug.stdout) as { ttlMs: number | null; putBackAt: string | null };
    expect(answer.ttlMs).toBe(3_600_000);
    expect(answer.putBackAt).not.toBeNull();
    expect((await fleetCli(['logspec', 'restore', '--node', 'peer0.org1'])).code).toBe(0);
    const permanent = await fleetCli(['logspec', 'set', 'debug', '--node', 'peer0.org1', '--permanent']);
    expect(permanent.code).toBe(0);
    expect(joined(permanent.stderr)).toContain("setting 'debug' on the nodes named peer0.org1, permanently (no TTL: logspec restore cannot undo it)");
    expect(permanent.stdout).toMatch(/^spec 'debug' set on 1 of 1 nodes, permanently \(no TTL\)$/m);
    expect(fabric.double('peer0.org1').spec).toBe('debug');
    expect((await fleetCli(['logspec', 'set', 'info', '--node', 'peer0.org1'])).code).toBe(0);
    expect(fabric.double('peer0.org1').spec).toBe('info');
  });
});

describe('issue 30 item 5: TTL bounds said alike; a rolled-back write reports no put-back', () => {
  test('a TTL under 1 s: the command refuses it (exit 2) and the server (400) in the same words', async () => {
    const run = await fleetCli(['logspec', 'set', 'info', '--node', 'peer0.org1', '--ttl', '500ms']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--ttl: "500ms" is shorter than the minimum, 1s; a TTL is a Go duration from 1s to 168h');
    const direct = await fleetWrite(url, pki, 'PUT', { spec: 'info', selector: { names: ['peer0.org1'] }, ttl: '500ms' });
    expect(direct.status).toBe(400);
    expect(direct.json).toEqual({ error: 'ttl: "500ms" is shorter than the minimum, 1s; a TTL is a Go duration from 1s to 168h' });
  });

  test('all-or-nothing, every node put back: no top-level putBackAt, no pending put-back, the table says so', async () => {
    // The server's answer itself (PUT /fleet/logspec, every node).
    const direct = await fleetWrite(url, pki, 'PUT', { spec: 'gossip=debug:info', selector: {}, ttl: '1h', allOrNothing: true });
    expect(direct.status).toBe(502);
    expect(direct.json).toMatchObject({ complete: false, ttlMs: 3_600_000, allOrNothing: true, putBackAt: null });
    const run = await fleetCli(['logspec', 'set', 'gossip=debug:info', '--all', '--ttl', '1h', '--all-or-nothing', '--json']);
    expect(run.code).toBe(1);
    const answer = JSON.parse(run.stdout) as { complete: boolean; putBackAt: string | null; nodes: Array<{ name: string; result: string }> };
    expect(answer.complete).toBe(false);
    expect(answer.nodes.filter((node) => node.result === 'rolled_back').map((node) => node.name)).toEqual(['peer0.org1', 'evil']);
    expect(answer.putBackAt).toBeNull();
    expect(joined(run.stderr)).toContain("setting 'gossip=debug:info' on every node of the fleet (--all), for 1h, then put back");
    const state = JSON.parse(readFileSync(path.join(dir, 'state', 'fleet-putbacks.json'), 'utf8')) as { pending: unknown[] };
    expect(state.pending).toEqual([]);
    const table = await fleetCli(['logspec', 'set', 'gossip=debug:info', '--all', '--ttl', '1h', '--all-or-nothing']);
    expect(table.stdout).toMatch(/^spec 'gossip=debug:info': NOT applied on every node; all-or-nothing put 2 back;\nno node holds it$/m);
    expect(table.stdout).not.toContain('put back at');
    expectWithin(table, 80);
  });
});
