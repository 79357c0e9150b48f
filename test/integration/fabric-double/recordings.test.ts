/**
 * The Fabric node double (test/support/fabric-double.ts) answers what the recorded real nodes of
 * ../shared/fixtures/fabric-recorded answered, and otherwise what reference-behaviour.md says a
 * real node does: for each recorded release, over HTTPS with the org's operations CA.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { FabricNetwork, recordedHeights, recordedReleases, releaseDir, type FabricDouble, type RecordedRelease } from '../../support/fabric-double';
import { request, type HttpAnswer } from '../../support/http';
import type { KeyPair } from '../../support/pki';

jest.setTimeout(60_000);

function keyPair(cert: string, key: string): KeyPair {
  return { cert, key, certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

/** A request to a double, trusting its org's operations CA; `client` null: no client certificate. */
function ask(node: FabricDouble, pathName: string, options: { method?: string; body?: string; client?: KeyPair | null } = {}): Promise<HttpAnswer> {
  const client = options.client === undefined ? keyPair(node.clientCertFile, node.clientKeyFile) : options.client;
  return request(`${node.url}${pathName}`, {
    method: options.method ?? 'GET',
    ca: readFileSync(node.caFile, 'utf8'),
    ...(client === null ? {} : { client }),
    ...(options.body === undefined ? {} : { body: options.body }),
  });
}

function recordedFile(release: RecordedRelease, node: string, file: string): string {
  return readFileSync(path.join(releaseDir(release), 'nodes', node, file), 'utf8');
}

/** The error a request ends with (it must end with one). */
async function failure(answer: Promise<HttpAnswer>): Promise<NodeJS.ErrnoException> {
  try {
    const got = await answer;
    throw new Error(`expected no answer, got ${got.status} ${got.body}`);
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
}

const goTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;

describe.each(recordedReleases)('the recorded Fabric %s network, doubled', (release) => {
  let network: FabricNetwork;
  const peer = () => network.node('peer0.org1');

  beforeAll(async () => {
    network = await FabricNetwork.open(release);
    await network.start();
  });

  afterAll(async () => {
    await network?.close();
  });

  test('every node: GET /version is version.json byte for byte; /healthz the recorded shape with a fresh time; GET /logspec logspec.json', async () => {
    for (const node of network.nodes) {
      const version = await ask(node, '/version', { client: null });
      expect([node.name, version.status, version.body]).toEqual([node.name, 200, recordedFile(release, node.name, 'version.json')]);
      const before = Date.now();
      const health = await ask(node, '/healthz', { client: null });
      const after = Date.now();
      const recorded = JSON.parse(recordedFile(release, node.name, 'healthz.json')) as { status: string; time: string };
      expect(health.status).toBe(200);
      expect(health.headers['content-type']).toBe('application/json');
      expect(Object.keys(health.json as object)).toEqual(Object.keys(recorded));
      expect((health.json as { status: string }).status).toBe(recorded.status);
      expect((health.json as { time: string }).time).toMatch(goTime);
      // Fresh: taken while the request was answered, not the recorded time.
      const time = Date.parse((health.json as { time: string }).time);
      expect([before <= time, time <= after]).toEqual([true, true]);
      expect(health.body.endsWith('}')).toBe(true);
      const spec = await ask(node, '/logspec');
      expect([node.name, spec.status, spec.body]).toEqual([node.name, 200, recordedFile(release, node.name, 'logspec.json')]);
    }
  });

  test('the server certificate: issued by the org operations CA, for 127.0.0.1 and localhost', () => {
    for (const node of network.nodes) {
      const certificate = new X509Certificate(readFileSync(node.certFile));
      expect(certificate.checkIssued(new X509Certificate(readFileSync(node.caFile)))).toBe(true);
      expect(certificate.subjectAltName).toBe('IP Address:127.0.0.1, DNS:localhost');
    }
  });

  test('GET /metrics: metrics-0.txt after start; after setStep(1) metrics-1.txt, whose ledger_blockchain_height lines are heights-1.txt', async () => {
    const first = await ask(peer(), '/metrics');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(first.body).toBe(recordedFile(release, 'peer0.org1', 'metrics-0.txt'));
    await network.setStep(1);
    const heights = recordedHeights(release, 1);
    for (const node of network.nodes) {
      const answer = await ask(node, '/metrics');
      expect(answer.body).toBe(recordedFile(release, node.name, 'metrics-1.txt'));
      const lines = answer.body.split('\n').filter((line) => line.startsWith('ledger_blockchain_height{'));
      const expected = Object.entries(heights.get(node.name) as Record<string, number>).map(
        ([channel, height]) => `ledger_blockchain_height{channel="${channel}"} ${height}`,
      );
      expect([node.name, lines]).toEqual([node.name, expected]);
    }
  });

  test('step 2: peer0.org2 stopped (connection refused), the others at heights-2; step 3: it is back on the same port', async () => {
    const org2 = network.node('peer0.org2');
    const url = org2.url;
    await network.setStep(2);
    expect(org2.running).toBe(false);
    expect((await failure(ask(org2, '/healthz', { client: null }))).code).toBe('ECONNREFUSED');
    expect((await ask(peer(), '/metrics')).body).toContain('ledger_blockchain_height{channel="ch1"} 6');
    await network.setStep(3);
    expect(org2.url).toBe(url);
    const back = await ask(org2, '/metrics');
    expect(back.body).toBe(recordedFile(release, 'peer0.org2', 'metrics-3.txt'));
    await network.setStep(0);
  });

  test('no client certificate: /logspec and /metrics 401 with no body, no Content-Type, no X-Request-Id; /healthz and /version open', async () => {
    for (const [method, pathName] of [
      ['GET', '/logspec'],
      ['PUT', '/logspec'],
      ['GET', '/metrics'],
    ] as const) {
      const answer = await ask(peer(), pathName, { method, client: null, body: method === 'PUT' ? '{"spec":"debug"}' : undefined });
      expect([method, pathName, answer.status, answer.body, answer.headers['content-type'], answer.headers['x-request-id']]).toEqual([
        method,
        pathName,
        401,
        '',
        undefined,
        undefined,
      ]);
    }
    expect((await ask(peer(), '/logspec')).json).toEqual({ spec: 'info' });
    expect((await ask(peer(), '/healthz', { client: null })).status).toBe(200);
    expect((await ask(peer(), '/version', { client: null })).status).toBe(200);
  });

  test("another org's operator certificate fails the handshake with a bad certificate alert, on every path", async () => {
    const org2Client = keyPair(network.node('peer0.org2').clientCertFile, network.node('peer0.org2').clientKeyFile);
    for (const pathName of ['/healthz', '/version', '/logspec']) {
      const error = await failure(ask(peer(), pathName, { client: org2Client }));
      expect([pathName, error.code, error.message]).toEqual([pathName, 'EPROTO', expect.stringMatching(/alert bad certificate.*SSL alert number 42/)]);
    }
    // Its own org's node takes it.
    expect((await ask(network.node('peer0.org2'), '/logspec', { client: org2Client })).status).toBe(200);
  });

  test('PUT /logspec: 204 with no body, then GET gives the normalised spec; a restart goes back to the recorded spec', async () => {
    const put = await ask(peer(), '/logspec', { method: 'PUT', body: '{"spec":"gossip=warning:debug:chaincode,ledger=ERROR"}' });
    expect([put.status, put.body]).toEqual([204, '']);
    const got = await ask(peer(), '/logspec');
    expect(got.body).toBe('{"spec":"chaincode=error:gossip=warn:ledger=error:debug"}\n');
    expect(got.headers['content-type']).toBe('application/json');
    const url = peer().url;
    await peer().stop();
    expect((await failure(ask(peer(), '/logspec'))).code).toBe('ECONNREFUSED');
    await peer().start();
    expect(peer().url).toBe(url);
    expect((await ask(peer(), '/logspec')).body).toBe(recordedFile(release, 'peer0.org1', 'logspec.json'));
  });

  test('PUT /logspec bodies as Fabric decodes them: resets, unknown keys, type errors, EOF, bad specs (a failed PUT changes nothing)', async () => {
    const cases: Array<[string, number, string, string]> = [
      ['{}', 204, '', 'info'],
      ['null', 204, '', 'info'],
      ['{"level":"debug"}', 204, '', 'info'],
      ['{"spec":""}', 204, '', 'info'],
      ['{"spec":"info","extra":1}', 204, '', 'info'],
      ['{"SPEC":"warn"}', 204, '', 'warn'],
      ['{"spec":"debug"} trailing', 204, '', 'debug'],
      ['{"spec":5}', 400, '{"error":"json: cannot unmarshal number into Go struct field LogSpec.spec of type string"}\n', 'debug'],
      ['"debug"', 400, '{"error":"json: cannot unmarshal string into Go value of type httpadmin.LogSpec"}\n', 'debug'],
      ['{"spec":', 400, '{"error":"unexpected EOF"}\n', 'debug'],
      ['', 400, '{"error":"EOF"}\n', 'debug'],
      ['goo', 400, `{"error":"invalid character 'g' looking for beginning of value"}\n`, 'debug'],
      ['{"spec" "x"}', 400, `{"error":"invalid character '\\"' after object key"}\n`, 'debug'],
      ['{"spec":"gossip=bogus:info"}', 400, `{"error":"invalid logging specification 'gossip=bogus:info': bad segment 'gossip=bogus'"}\n`, 'debug'],
      ['{"spec":"payload"}', 204, '', 'Level(-2)'],
    ];
    for (const [body, status, answerBody, after] of cases) {
      const answer = await ask(peer(), '/logspec', { method: 'PUT', body });
      const spec = ((await ask(peer(), '/logspec')).json as { spec: string }).spec;
      expect([body, answer.status, answer.body, spec]).toEqual([body, status, answerBody, after]);
    }
  });

  test("flogging's grammar: the reference's cases", async () => {
    const cases: Array<[string, string]> = [
      ['', 'info'],
      ['debug:a=info:b=warn', 'a=info:b=warn:debug'],
      ['b=warn:a=error', 'a=error:b=warn:info'],
      ['a.=info:warning', 'a.=info:warn'],
      ['info:warn', 'warn'],
      ['logger=info:logger.=error:DEBUG', 'logger.=error:logger=info:debug'],
      ['=INFO:DEBUG', "invalid logging specification '=INFO:DEBUG': no logger specified in segment '=INFO'"],
      ['bogus', "invalid logging specification 'bogus': bad segment 'bogus'"],
      ['a*=info:debug', "invalid logging specification 'a*=info:debug': bad logger name 'a*'"],
      ['.a=info:debug', "invalid logging specification '.a=info:debug': bad logger name '.a'"],
      ['Debug', "invalid logging specification 'Debug': bad segment 'Debug'"],
      [' debug', "invalid logging specification ' debug': bad segment ' debug'"],
      ['a=b=debug', "invalid logging specification 'a=b=debug': bad segment 'a=b=debug'"],
    ];
    for (const [spec, outcome] of cases) {
      const put = await ask(peer(), '/logspec', { method: 'PUT', body: JSON.stringify({ spec }) });
      const shown = put.status === 204 ? ((await ask(peer(), '/logspec')).json as { spec: string }).spec : (put.json as { error: string }).error;
      expect([spec, shown]).toEqual([spec, outcome]);
    }
  });

  test('other methods, other paths: 400 on /logspec, 400 with "Error" on /version, 405 empty on /healthz, 404 text, unclean paths redirected', async () => {
    const logspec = await ask(peer(), '/logspec', { method: 'DELETE' });
    expect([logspec.status, logspec.body]).toEqual([400, '{"error":"invalid request method: DELETE"}\n']);
    const version = await ask(peer(), '/version', { method: 'POST', client: null });
    expect([version.status, version.body]).toEqual([400, '{"Error":"invalid request method: POST"}']);
    expect(version.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const health = await ask(peer(), '/healthz', { method: 'POST', client: null });
    expect([health.status, health.body, health.headers['content-type']]).toEqual([405, '', undefined]);
    expect(health.headers['x-request-id']).toBeDefined();
    for (const pathName of ['/logspec/', '/version/', '/nothing']) {
      const missing = await ask(peer(), pathName);
      expect([pathName, missing.status, missing.body, missing.headers['content-type'], missing.headers['x-request-id']]).toEqual([
        pathName,
        404,
        '404 page not found\n',
        'text/plain; charset=utf-8',
        undefined,
      ]);
    }
    const redirect = await ask(peer(), '//logspec?x=1');
    expect([redirect.status, redirect.headers.location]).toEqual([release === '3.1.5' ? 307 : 301, '/logspec?x=1']);
    expect((await ask(peer(), '/logspec?x=1')).status).toBe(200);
    const echoed = await request(`${peer().url}/version`, { ca: readFileSync(peer().caFile, 'utf8'), headers: { 'X-Request-Id': 'trace-1' } });
    expect(echoed.headers['x-request-id']).toBe('trace-1');
  });

  test("a failing health check: 503 with failed_checks in Fabric's shape; cleared: 200", async () => {
    peer().setFailedChecks([
      { component: 'docker', reason: 'failed to ping to Docker daemon: dial unix /var/run/docker.sock: connect: no such file or directory' },
    ]);
    const failing = await ask(peer(), '/healthz', { client: null });
    expect(failing.status).toBe(503);
    expect(failing.body).toMatch(
      /^\{"status":"Service Unavailable","time":"[^"]+","failed_checks":\[\{"component":"docker","reason":"failed to ping to Docker daemon: dial unix \/var\/run\/docker\.sock: connect: no such file or directory"\}\]\}$/,
    );
    peer().setFailedChecks([]);
    expect((await ask(peer(), '/healthz', { client: null })).status).toBe(200);
  });

  test('plain HTTP to the TLS port gets Go\'s "Client sent an HTTP request to an HTTPS server."', async () => {
    const port = Number(new URL(peer().url).port);
    const received = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
    });
    expect(received).toBe('HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n');
  });
});

describe('clientAuthRequired: true', () => {
  let network: FabricNetwork;

  beforeAll(async () => {
    network = await FabricNetwork.open('3.1.5', { clientAuthRequired: true });
    await network.start(['peer0.org1']);
  });

  afterAll(async () => {
    await network?.close();
  });

  test('without a client certificate the handshake fails on every path, /healthz included; with its org certificate every path answers', async () => {
    const node = network.node('peer0.org1');
    for (const pathName of ['/healthz', '/version', '/logspec']) {
      const error = await failure(ask(node, pathName, { client: null }));
      expect([pathName, error.code, error.message]).toEqual([pathName, 'EPROTO', expect.stringMatching(/alert bad certificate.*SSL alert number 42/)]);
      expect((await ask(node, pathName)).status).toBe(200);
    }
  });
});

describe('operations certificates issued again (what the network does once the recorded ones are out of date)', () => {
  let network: FabricNetwork;

  beforeAll(async () => {
    network = await FabricNetwork.open('2.5.12', { reissueOpsCertificates: true });
    await network.start(['peer0.org1', 'peer0.org2']);
  });

  afterAll(async () => {
    await network?.close();
  });

  test('the same CA and operator to a verifier (recorded keys and names), in the temp folder; the same trust between the orgs', async () => {
    expect(network.reissued).toBe(true);
    const [org1, org2] = [network.node('peer0.org1'), network.node('peer0.org2')];
    for (const [file, recorded] of [
      [org1.caFile, 'ca.crt'],
      [org1.clientCertFile, 'client.crt'],
    ] as const) {
      expect(file.startsWith(network.dir)).toBe(true);
      const [issued, original] = [
        new X509Certificate(readFileSync(file)),
        new X509Certificate(readFileSync(path.join(releaseDir('2.5.12'), 'ops', 'org1', recorded))),
      ];
      expect([recorded, issued.subject, issued.publicKey.export({ format: 'jwk' })]).toEqual([
        recorded,
        original.subject,
        original.publicKey.export({ format: 'jwk' }),
      ]);
    }
    expect((await ask(org1, '/logspec')).status).toBe(200);
    // The recorded operator certificate chains to the CA issued again: same name, same key.
    const recordedOperator = keyPair(path.join(releaseDir('2.5.12'), 'ops', 'org1', 'client.crt'), org1.clientKeyFile);
    expect((await ask(org1, '/logspec', { client: recordedOperator })).status).toBe(200);
    const error = await failure(ask(org1, '/logspec', { client: keyPair(org2.clientCertFile, org2.clientKeyFile) }));
    expect([error.code, error.message]).toEqual(['EPROTO', expect.stringMatching(/alert bad certificate.*SSL alert number 42/)]);
  });
});
