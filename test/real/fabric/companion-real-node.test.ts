/**
 * Companion mode beside ONE real Fabric peer (opt-in suite: real binaries; issue 29, docs/companion.md).
 * The real-binary twin of test/integration/companion/ (certificates, logspec, logspec-declared
 * and node-health), which run against the double of a
 * recorded peer (test/support/fabric-double.ts). Here the peer is the first release FABRIC_HOMES
 * names (test/support/real-binaries.ts), started by test/support/fabric-reference.ts on its
 * release's own sampleconfig, with its TLS on (mutual, certificates of the test PKI's org CA) and
 * operations TLS (server certificate of the test PKI, its client CA the only client root); the
 * companion reads the same core.yaml with the same CORE_* overrides, as it would in the peer's pod.
 * Checked against the real peer:
 * - every certificate of its MSP folders, its TLS and its operations TLS is on the companion's
 *   /metrics, each notAfter what `openssl x509 -enddate` says of the file;
 * - a log level set through the companion with a TTL is on the peer's own /logspec, and is put
 *   back when the TTL ends;
 * - the companion's /healthz fails naming the peer unreachable while it is stopped, and passes once
 *   it is started again;
 * - the spec declared in the logspec ConfigMap (the fake API server, the built command) is back on
 *   the peer within 5 s after it was stopped and started again at its own spec.
 * Without a release it fails with "OPT-IN SUITE CANNOT RUN".
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mspCertificateFolders } from '../../../src/config/companion-keys';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { companionServerEnv, companionWritesEnv, expectEachCertificate, expirySeries, opensslFacts } from '../../support/companion';
import { requireBuiltCli, runCli, type CliRun } from '../../support/cli';
import { FakeApiServer, kubeconfigFor, type StoredEvent } from '../../support/fake-apiserver';
import { killAllFabricNodes, startFabricNode, uniquePort, writeNodeConfig, type FabricNode, type NodeConfig } from '../../support/fabric-reference';
import { request, type HttpAnswer } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type KeyPair, type TestPki } from '../../support/pki';
import { requireCommand } from '../../support/prerequisites';
import { terminate } from '../../support/processes';
import { requireFabricReleases } from '../../support/real-binaries';
import { waitFor } from '../../support/wait';

jest.setTimeout(120_000);

/** The spec a peer started by fabric-reference.ts answers (no FABRIC_LOGGING_SPEC; test/real/fabric/fleet-real-nodes asserts it too). */
const ownSpec = 'info';
/** The subject of the test PKI's operator certificate, as the companion's audit lines and put-backs name it. */
const operatorSubject = 'O=fabric-ops tests,CN=operator';

let pki: TestPki;
let dir: string;
let config: NodeConfig;
let real: FabricNode;
/** The peer's operations port, the same at every start (startFabricNode alone would hand each start a new one). */
let opsPort: number;
/** The peer's overrides beside its core.yaml: given to the real peer and to the companion alike. */
let nodeEnv: Record<string, string>;
/** The peer's operations server certificate (the test PKI's server CA issued it). */
let opsServer: KeyPair;
const systems = new Set<OperationsSystem>();

const nodeOrigin = (): string => `https://127.0.0.1:${opsPort}`;
const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Starts the real peer on its configuration, its operations endpoint always on opsPort (it keeps its ledger and its ports from core.yaml). */
async function startPeer(): Promise<FabricNode> {
  return startFabricNode({ config, env: { ...nodeEnv, CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${opsPort}` } });
}

/** The real peer's own /logspec, read as the operator (Fabric asks a client certificate for it under operations TLS). */
async function nodeSpec(): Promise<string> {
  const answer = await request(`${nodeOrigin()}/logspec`, { ca: pki.serverCA.certPem, client: pki.client });
  const spec = (answer.json as { spec?: unknown } | undefined)?.spec;
  if (answer.status !== 200 || typeof spec !== 'string') throw new Error(`the real peer's GET /logspec answered ${answer.status}: ${answer.body}`);
  return spec;
}

/** The companion's settings, as CORE_* variables beside the peer's core.yaml (the peer's own overrides included). */
function companionEnv(stateDir: string): Record<string, string> {
  return {
    ...config.env,
    ...nodeEnv,
    CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${opsPort}`,
    ...companionServerEnv(pki),
    ...companionWritesEnv(stateDir),
    CORE_OPERATIONS_COMPANION_NODE_ROOTCAS_FILES: pki.serverCA.cert,
    CORE_OPERATIONS_COMPANION_NODE_CLIENTCERT_FILE: pki.client.cert,
    CORE_OPERATIONS_COMPANION_NODE_CLIENTKEY_FILE: pki.client.key,
    CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    // The disk checker is test/integration/companion/disk's matter: a small test volume must not fail /healthz here.
    CORE_OPERATIONS_COMPANION_DISK_MINFREEPERCENT: '0',
    CORE_OPERATIONS_COMPANION_DISK_MINFREEBYTES: '0',
  };
}

/** A call to a companion's server as the operator (the test client certificate). */
function call(url: string, method: 'GET' | 'PUT', target: string, body?: unknown): Promise<HttpAnswer> {
  return request(`${url}${target}`, {
    method,
    ca: pki.serverCA.certPem,
    client: pki.client,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
}

beforeAll(async () => {
  const [home = ''] = requireFabricReleases();
  requireCommand('openssl');
  pki = await createTestPki();
  dir = await mkdtemp(path.join(tmpdir(), 'companion-real-node-'));
  opsServer = await pki.issue('peer-operations', 'serverCA', { cn: 'peer0-operations' });
  config = await writeNodeConfig(dir, {
    kind: 'peer',
    home,
    vmEndpoint: '',
    tls: { cert: opsServer.cert, key: opsServer.key, clientAuthRequired: false, clientRootCAs: [pki.clientCA.cert] },
  });
  // The peer's TLS at the sample core.yaml's own paths (tls/server.crt, tls/server.key, tls/ca.crt, relative to the
  // configuration folder), from the org CA: the organisation's TLS CA is not the operations CA (the dedicated-CA rule).
  const tlsDir = path.join(config.dir, 'tls');
  await mkdir(tlsDir);
  const peerTls = await pki.issue('peer-tls', 'orgCA', { cn: 'peer0' });
  const peerClient = await pki.issue('peer-tls-client', 'orgCA', { cn: 'peer0-client', usage: 'client' });
  await copyFile(peerTls.cert, path.join(tlsDir, 'server.crt'));
  await copyFile(peerTls.key, path.join(tlsDir, 'server.key'));
  await copyFile(pki.orgCA.cert, path.join(tlsDir, 'ca.crt'));
  await copyFile(peerClient.cert, path.join(tlsDir, 'client.crt'));
  await copyFile(peerClient.key, path.join(tlsDir, 'client.key'));
  opsPort = await uniquePort();
  nodeEnv = {
    CORE_PEER_TLS_ENABLED: 'true',
    // With client authentication on, the peer uses (and the companion reports) its client certificate and client root CAs.
    CORE_PEER_TLS_CLIENTAUTHREQUIRED: 'true',
    CORE_PEER_TLS_CLIENTCERT_FILE: path.join(tlsDir, 'client.crt'),
    CORE_PEER_TLS_CLIENTKEY_FILE: path.join(tlsDir, 'client.key'),
  };
  real = await startPeer();
});

afterAll(async () => {
  for (const system of systems) await system.stop(0);
  await real?.stop();
  await killAllFabricNodes();
  await pki?.cleanup();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('companion mode beside the real peer (in process)', () => {
  let system: OperationsSystem;
  let log: LogCapture;
  let stateDir: string;

  beforeAll(async () => {
    // Jest runs this hook even when the file's own failed: without a release, the same line again rather than an error of its own.
    requireFabricReleases();
    stateDir = await mkdtemp(path.join(dir, 'state-'));
    log = new LogCapture();
    system = await startOperationsSystem({ configFile: config.file, logStream: log, env: companionEnv(stateDir) });
    systems.add(system);
  });

  afterAll(async () => {
    systems.delete(system);
    await system?.stop(0);
  });

  test('calls the peer at its operations address, and serves on its own', () => {
    expect(system.config.companion?.node.address).toEqual({ host: '127.0.0.1', port: opsPort });
    expect(system.address.port).not.toBe(opsPort);
  });

  test("the peer's certificates: every file of its MSP folders, its TLS and its operations TLS, each notAfter as openssl says", async () => {
    const msp = path.join(config.dir, 'msp');
    const expected: Array<{ file: string; kind: string; key: string }> = [];
    for (const { folder, kind } of mspCertificateFolders) {
      const folderPath = path.join(msp, folder);
      if (!existsSync(folderPath)) continue;
      for (const name of readdirSync(folderPath).sort()) {
        if (!name.startsWith('.') && statSync(path.join(folderPath, name)).isFile())
          expected.push({ file: path.join(folderPath, name), kind, key: 'peer.mspConfigPath' });
      }
    }
    // The sample MSP has at least its signing certificate and its CA.
    expect(expected.map((entry) => entry.kind)).toEqual(expect.arrayContaining(['msp_signcert', 'msp_cacert']));
    const tlsDir = path.join(config.dir, 'tls');
    expected.push(
      { file: path.join(tlsDir, 'server.crt'), kind: 'tls_server', key: 'peer.tls.cert.file' },
      { file: path.join(tlsDir, 'ca.crt'), kind: 'tls_root_ca', key: 'peer.tls.rootcert.file' },
      { file: path.join(tlsDir, 'ca.crt'), kind: 'tls_client_root_ca', key: 'peer.tls.clientRootCAs.files' },
      { file: path.join(tlsDir, 'client.crt'), kind: 'tls_client', key: 'peer.tls.clientCert.file' },
      { file: opsServer.cert, kind: 'operations_server', key: 'operations.tls.cert.file' },
      { file: pki.clientCA.cert, kind: 'operations_client_root_ca', key: 'operations.tls.clientRootCAs.files' },
    );
    // One certificate per file: what openssl x509 reads of it is all of it.
    for (const { file } of expected) {
      const blocks = readFileSync(file, 'utf8').match(/-----BEGIN CERTIFICATE-----/g) ?? [];
      expect({ file, certificates: blocks.length }).toEqual({ file, certificates: 1 });
    }

    const answer = await call(system.url, 'GET', '/metrics');
    expect(answer.status).toBe(200);
    const series = expirySeries(answer.body);
    await expectEachCertificate(series, expected);
    expect(
      log.matching(new RegExp(`companion of the peer at ${escaped(nodeOrigin())}/healthz: ${expected.length} certificates, 0 problem files`)),
    ).toHaveLength(1);
    const signcert = expected.find((entry) => entry.kind === 'msp_signcert');
    if (signcert === undefined) throw new Error('no msp_signcert expected');
    const notAfter = new Date((await opensslFacts(signcert.file)).notAfterSeconds * 1000).toISOString();
    expect(log.matching(new RegExp(`node certificate msp_signcert will expire on ${escaped(notAfter)}`))).toHaveLength(1);
  });

  test("GET /logspec answers the real peer's own spec", async () => {
    expect(await nodeSpec()).toBe(ownSpec);
    const answer = await call(system.url, 'GET', '/logspec');
    expect({ status: answer.status, body: answer.json }).toEqual({ status: 200, body: { spec: ownSpec } });
  });

  test("a PUT with a TTL is on the real peer's /logspec, kept in the state directory, and put back when the TTL ends", async () => {
    const answer = await call(system.url, 'PUT', '/logspec', { spec: 'gossip=debug:info', ttl: '2s' });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 204, body: '' });
    expect(await nodeSpec()).toBe('gossip=debug:info');
    const state = JSON.parse(await readFile(path.join(stateDir, 'companion-putbacks.json'), 'utf8')) as { pending: unknown[] };
    expect(state.pending).toEqual([
      { node: `127.0.0.1:${opsPort}`, previous: ownSpec, specs: ['gossip=debug:info'], dueAt: expect.any(Number) as number, actor: operatorSubject },
    ]);
    expect(log.matching(new RegExp(`node logging specification changed from '${ownSpec}' to 'gossip=debug:info' by ${escaped(operatorSubject)}`))).toHaveLength(
      1,
    );
    // The real peer's spec itself is what the put-back compares with the spec it set: Fabric's normal form.
    await waitFor('the put-back on the real peer', async () => (await nodeSpec()) === ownSpec);
    await waitFor(
      'the put-back audit line',
      () => log.matching(new RegExp(`node logging specification put back to '${ownSpec}': the TTL of ${escaped(operatorSubject)} ended`))[0],
    );
    const after = JSON.parse(await readFile(path.join(stateDir, 'companion-putbacks.json'), 'utf8')) as { pending: unknown[] };
    expect(after.pending).toEqual([]);
    const metrics = (await call(system.url, 'GET', '/metrics')).body;
    expect(metrics).toMatch(/^companion_logspec_writes_total\{trigger="request",result="applied"\} 1$/m);
    expect(metrics).toMatch(/^companion_logspec_writes_total\{trigger="putback",result="applied"\} 1$/m);
  });

  test('the peer stopped: /healthz fails naming it unreachable (and /logspec is a 502); started again, /healthz passes', async () => {
    const healthy = await request(`${system.url}/healthz`, { ca: pki.serverCA.certPem });
    expect({ status: healthy.status, body: healthy.json }).toEqual({ status: 200, body: expect.objectContaining({ status: 'OK' }) as unknown });
    await real.stop();
    try {
      const down = await request(`${system.url}/healthz`, { ca: pki.serverCA.certPem });
      expect(down.status).toBe(503);
      expect((down.json as { failed_checks?: unknown }).failed_checks).toEqual([
        { component: 'node', reason: expect.stringMatching(new RegExp(`^unreachable: ${escaped(nodeOrigin())}/healthz: ECONNREFUSED`)) as string },
      ]);
      const read = await call(system.url, 'GET', '/logspec');
      expect(read.status).toBe(502);
      expect((read.json as { error?: unknown }).error).toMatch(new RegExp(`^the node's /logspec: unreachable: ${escaped(nodeOrigin())}/logspec: ECONNREFUSED`));
    } finally {
      real = await startPeer();
    }
    const back = await request(`${system.url}/healthz`, { ca: pki.serverCA.certPem });
    expect({ status: back.status, body: back.json }).toEqual({ status: 200, body: expect.objectContaining({ status: 'OK' }) as unknown });
  });
});

describe("the logspec ConfigMap declares the real peer's spec (the command, the fake API server)", () => {
  const namespace = 'fabric';
  const podName = 'peer0-org1-0';
  const configMapName = 'peer0-logspec';
  let api: FakeApiServer;
  let cli: CliRun;
  let url: string;

  const eventsWith = (reason: string): StoredEvent[] => [...api.events.values()].filter((event) => event.reason === reason);
  const logged = (pattern: RegExp): string[] =>
    cli
      .stderr()
      .split('\n')
      .filter((line) => pattern.test(line));

  beforeAll(async () => {
    requireFabricReleases();
    requireBuiltCli();
    // Where the first part left it: the peer at its own spec, no companion beside it.
    expect(await nodeSpec()).toBe(ownSpec);
    api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-companion');
    await api.start();
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info\n' });
    await writeFile(path.join(dir, 'kubeconfig'), kubeconfigFor(api, pki.serverCA.certPem));
    cli = runCli(['--config', config.file], {
      ...companionEnv(path.join(dir, 'state-declared')),
      KUBECONFIG: path.join(dir, 'kubeconfig'),
      POD_NAME: podName,
      POD_NAMESPACE: namespace,
      CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'true',
      CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME: configMapName,
    });
    url = await cli.listening();
  });

  afterAll(async () => {
    if (cli) await terminate(cli.child, cli.exited, 5000);
    await api?.close();
  });

  afterEach(() => {
    // Every request the command made of the API server was valid (none when the setup failed before it started).
    expect(api?.invalid ?? []).toEqual([]);
  });

  test('its value is applied to the real peer at start; a Normal Event says so', async () => {
    await waitFor('the declared spec on the real peer', async () => (await nodeSpec()) === 'gossip=debug:info');
    const changed = await waitFor('the NodeLogSpecChanged event', () => eventsWith('NodeLogSpecChanged')[0]);
    expect(changed).toMatchObject({
      type: 'Normal',
      message: `node logging specification changed from '${ownSpec}' to 'gossip=debug:info' by configmap ${namespace}/${configMapName}`,
      involvedObject: { kind: 'Pod', name: podName, namespace },
    });
    // fabric-ops' own loggers did not take it.
    expect(eventsWith('LogSpecChanged')).toEqual([]);
  });

  test('the real peer stopped and started again (at its own spec): the declared spec is on it again within 5 s', async () => {
    await waitFor('the declared spec on the real peer', async () => (await nodeSpec()) === 'gossip=debug:info');
    await real.stop();
    real = await startPeer();
    // The peer is not read here at once: the companion may already be putting the spec back. The Event says what it found.
    await waitFor('the declared spec back on the restarted real peer', async () => (await nodeSpec()) === 'gossip=debug:info', { timeoutMs: 5000 });
    const restored = await waitFor('the NodeLogSpecRestored event', () => eventsWith('NodeLogSpecRestored')[0]);
    expect(restored.type).toBe('Normal');
    expect(restored.message).toMatch(
      new RegExp(
        `^the node (answers again, with|answers) '${ownSpec}'.*: the declared specification 'gossip=debug:info' from configmap ${namespace}/${configMapName} is applied again$`,
      ),
    );
    expect(logged(/the declared specification 'gossip=debug:info' from configmap fabric\/peer0-logspec is applied again/).length).toBeGreaterThanOrEqual(1);
  });

  test('a TTL write through the companion holds until it ends, and is then put back to the declared spec', async () => {
    await waitFor('the declared spec on the real peer', async () => (await nodeSpec()) === 'gossip=debug:info');
    const answer = await call(url, 'PUT', '/logspec', { spec: 'debug', ttl: '2s' });
    expect(answer.status).toBe(204);
    expect(await nodeSpec()).toBe('debug');
    await waitFor('the put-back to the declared spec', async () => (await nodeSpec()) === 'gossip=debug:info');
    const putBack = await waitFor('the NodeLogSpecPutBack event', () => eventsWith('NodeLogSpecPutBack')[0]);
    expect(putBack.message).toBe(
      `node logging specification put back to 'gossip=debug:info' (the declared specification, from configmap ${namespace}/${configMapName}): the TTL of ${operatorSubject} ended`,
    );
  });
});
