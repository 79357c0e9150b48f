/**
 * What keeps the Fabric node double honest (opt-in suite: real binaries). The fleet tests of
 * test/integration/fleet/ (real-nodes, reasons, command, state-configmap) run on
 * doubles of recorded nodes (test/support/fabric-double.ts); here a real peer of the first release
 * FABRIC_HOMES names (test/support/real-binaries.ts), started on the release's own sampleconfig
 * with operations TLS from the same release's recorded org1 operations CA (a server certificate
 * minted from it as the double mints its own, that CA as the only client root, prometheus
 * metrics), and the double of that release's peer0.org1 are asked the same requests: with the
 * org's client certificate, with none, with another org's; every answer's status, body and
 * headers must be the same (the health time only in its format, the metrics, which depend on the
 * ledger, in their status, type and version line). Without a release it fails with
 * "OPT-IN SUITE CANNOT RUN".
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FabricNetwork, mintOperationsCertificate, recordedReleases, releaseDir, type FabricDouble, type RecordedRelease } from '../../support/fabric-double';
import { killAllFabricNodes, startFabricNode, writeNodeConfig, type FabricNode, type NodeConfig } from '../../support/fabric-reference';
import { request } from '../../support/http';
import type { KeyPair } from '../../support/pki';
import { requireFabricReleases } from '../../support/real-binaries';

jest.setTimeout(120_000);

let release: RecordedRelease;
let network: FabricNetwork;
let double: FabricDouble;
let config: NodeConfig;
let real: FabricNode;
let dir: string;

/** One operations endpoint as a client sees it: where it is and the CA its certificate chains to. */
interface Target {
  url: string;
  port: number;
  ca: string;
}

const targets = (): Array<['real' | 'double', Target]> => [
  ['real', { url: `https://${real.url}`, port: real.port, ca: double.caFile }],
  ['double', { url: double.url, port: Number(new URL(double.url).port), ca: double.caFile }],
];

function keyPair(cert: string, key: string): KeyPair {
  return { cert, key, certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

/** What a client sees of one request: the answer's status, body and the headers Fabric decides, or the failure. */
async function seen(target: Target, pathName: string, options: { method?: string; body?: string; client?: 'own' | 'none' | 'other' } = {}): Promise<unknown> {
  const org2 = network.node('peer0.org2');
  const client = { own: keyPair(double.clientCertFile, double.clientKeyFile), other: keyPair(org2.clientCertFile, org2.clientKeyFile), none: undefined }[
    options.client ?? 'own'
  ];
  try {
    const answer = await request(`${target.url}${pathName}`, {
      method: options.method ?? 'GET',
      ca: readFileSync(target.ca, 'utf8'),
      ...(client === undefined ? {} : { client }),
      ...(options.body === undefined ? {} : { body: options.body }),
    });
    let body = answer.body;
    if (pathName === '/healthz' && answer.status === 200) {
      expect(body).toMatch(/^\{"status":"OK","time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z"\}$/);
      body = body.replace(/"time":"[^"]+"/, '"time":"<time>"');
    }
    return {
      status: answer.status,
      body,
      contentType: answer.headers['content-type'],
      location: answer.headers.location,
      requestId: answer.headers['x-request-id'] !== undefined,
    };
  } catch (error) {
    // The TLS alert the client got, in OpenSSL's words (which side of the handshake it came on varies with the version).
    const message = (error as Error).message;
    return { failed: /alert [a-z ]+/.exec(message)?.[0] ?? /SSL alert number \d+/.exec(message)?.[0] ?? message };
  }
}

/** The same request to the real peer and to the double: the same answer. */
async function same(pathName: string, options: { method?: string; body?: string; client?: 'own' | 'none' | 'other' } = {}): Promise<unknown> {
  const [[, realTarget], [, doubleTarget]] = targets() as [[string, Target], [string, Target]];
  const fromReal = await seen(realTarget, pathName, options);
  const fromDouble = await seen(doubleTarget, pathName, options);
  expect([options.method ?? 'GET', pathName, options.body, options.client ?? 'own', fromDouble]).toEqual([
    options.method ?? 'GET',
    pathName,
    options.body,
    options.client ?? 'own',
    fromReal,
  ]);
  return fromReal;
}

beforeAll(async () => {
  const [home = ''] = requireFabricReleases();
  const printed = execFileSync(path.join(home, 'bin', 'peer'), ['version'], {
    encoding: 'utf8',
    env: { ...process.env, FABRIC_CFG_PATH: path.join(home, 'sampleconfig') },
  });
  const version = /Version: (\S+)/.exec(printed)?.[1] ?? '';
  if (!(recordedReleases as readonly string[]).includes(version)) {
    throw new Error(
      `${home}/bin/peer is Fabric ${version || `(no version in: ${printed})`}: no recording of it to compare with (recorded: ${recordedReleases.join(', ')})`,
    );
  }
  release = version as RecordedRelease;
  network = await FabricNetwork.open(release);
  await network.start(['peer0.org1']);
  double = network.node('peer0.org1');
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-real-vs-double-'));
  const minted = await mintOperationsCertificate({ cert: double.ops.caFile, key: double.ops.caKeyFile }, double, path.join(dir, 'ops'));
  config = await writeNodeConfig(dir, {
    kind: 'peer',
    home,
    vmEndpoint: '',
    tls: { cert: minted.cert, key: minted.key, clientAuthRequired: false, clientRootCAs: [double.caFile] },
    metrics: { provider: 'prometheus' },
  });
  real = await startFabricNode({ config });
});

afterAll(async () => {
  await real?.stop();
  await killAllFabricNodes();
  await network?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

test('/healthz and /version: open, the same answers (the recorded /version)', async () => {
  await same('/healthz', { client: 'none' });
  await same('/healthz');
  const version = (await same('/version', { client: 'none' })) as { body: string };
  expect(version.body).toBe(readFileSync(path.join(releaseDir(release), 'nodes', 'peer0.org1', 'version.json'), 'utf8'));
});

test('/logspec and /metrics without a client certificate: the same 401', async () => {
  await same('/logspec', { client: 'none' });
  await same('/logspec', { method: 'PUT', body: '{"spec":"debug"}', client: 'none' });
  await same('/metrics', { client: 'none' });
});

test("another org's client certificate: the same handshake failure on every path", async () => {
  for (const pathName of ['/healthz', '/version', '/logspec', '/metrics']) {
    expect(await same(pathName, { client: 'other' })).toEqual({ failed: expect.any(String) });
  }
});

test('GET /metrics with the client certificate: the same status and type, each with its fabric_version line', async () => {
  for (const [which, target] of targets()) {
    const answer = await request(`${target.url}/metrics`, {
      ca: readFileSync(target.ca, 'utf8'),
      client: keyPair(double.clientCertFile, double.clientKeyFile),
    });
    expect([which, answer.status, answer.headers['content-type']]).toEqual([which, 200, 'text/plain; version=0.0.4; charset=utf-8']);
    expect(answer.body).toContain(`fabric_version{version="${release}"} 1`);
  }
});

test('PUT /logspec: the same answers to the same bodies, and the same spec after each', async () => {
  for (const body of [
    '{"spec":"gossip=warning:debug:chaincode,ledger=ERROR"}',
    '{}',
    'null',
    '{"level":"debug"}',
    '{"spec":""}',
    '{"spec":"info","extra":1}',
    '{"SPEC":"warn"}',
    '{"spec":"debug"} trailing',
    '{"spec":5}',
    '"debug"',
    '{"spec":',
    '',
    'goo',
    '{"spec" "x"}',
    '{"spec":"gossip=bogus:info"}',
    '{"spec":"payload"}',
    '{"spec":"<b>&"}',
  ]) {
    await same('/logspec', { method: 'PUT', body });
    await same('/logspec');
  }
});

test("flogging's grammar: the same normalised spec or the same error for each case", async () => {
  for (const spec of [
    '',
    'debug:a=info:b=warn',
    'b=warn:a=error',
    'a.=info:warning',
    'info:warn',
    'a.b=info:a,z=error:c.b=info:c.=warn:debug',
    'logger=info:logger.=error:DEBUG',
    'notice:x=critical',
    '=INFO:DEBUG',
    '=bogus',
    'a=',
    'bogus',
    'a*=info:debug',
    '.a=info:debug',
    'a..b=info',
    'Debug',
    ' debug',
    'a=b=debug',
    'a,=info',
  ]) {
    await same('/logspec', { method: 'PUT', body: JSON.stringify({ spec }) });
    await same('/logspec');
  }
});

test('other methods and paths: the same statuses, bodies and headers', async () => {
  await same('/logspec', { method: 'DELETE' });
  await same('/logspec', { method: 'POST', body: '{}' });
  await same('/version', { method: 'POST', client: 'none' });
  await same('/healthz', { method: 'POST', client: 'none' });
  await same('/healthz', { method: 'HEAD', client: 'none' });
  for (const pathName of ['/logspec/', '/version/', '/nothing', '//logspec', '/./version', '/logspec?x=1']) await same(pathName);
});

test('plain HTTP to the TLS port: the same answer', async () => {
  const answers = await Promise.all(
    targets().map(
      ([, target]) =>
        new Promise<string>((resolve, reject) => {
          let text = '';
          const socket = net.connect(target.port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
          socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
          socket.on('error', reject);
          socket.on('close', () => resolve(text));
        }),
    ),
  );
  expect(answers[1]).toBe(answers[0]);
});

test('a restart forgets PUT /logspec: both answer the configured spec again', async () => {
  await same('/logspec', { method: 'PUT', body: '{"spec":"gossip=debug:info"}' });
  await real.stop();
  await double.stop();
  real = await startFabricNode({ config });
  await double.start();
  expect(await same('/logspec')).toMatchObject({ status: 200, body: '{"spec":"info"}\n' });
});
