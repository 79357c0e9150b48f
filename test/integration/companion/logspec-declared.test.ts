/**
 * Companion mode, the declared log level (issue 29, item 3; docs/companion.md, "The node's log
 * level"): with the Kubernetes integration's logspec ConfigMap configured, its spec goes to the
 * node (not to fabric-ops' own loggers) and is applied again when the node restarts: a restarted
 * peer starts from its core.yaml spec, the companion sees it and restores the declared spec within
 * seconds. Changes are Kubernetes Events on the pod. The node is the double of a recorded Fabric
 * 2.5.12 peer (its restart gives its recorded spec back); the API server is the fake one
 * (test/support/fake-apiserver.ts), reached through @kubernetes/client-node with a kubeconfig by
 * the command (dist/cli.js: the integration loads @kubernetes/client-node, an ES module).
 */
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { companionOfDoubleEnv, companionServerEnv, companionWritesEnv } from '../../support/companion';
import { requireBuiltCli, runCli, type CliRun } from '../../support/cli';
import { FabricNetwork, releaseDir, type FabricDouble } from '../../support/fabric-double';
import { FakeApiServer, kubeconfigFor, type StoredEvent } from '../../support/fake-apiserver';
import { request } from '../../support/http';
import { createTestPki, type TestPki } from '../../support/pki';
import { terminate } from '../../support/processes';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const namespace = 'fabric';
const podName = 'peer0-org1-0';
const configMapName = 'peer0-logspec';
const recordedSpec = 'info';

let network: FabricNetwork;
let peer: FabricDouble;
let pki: TestPki;
let dir: string;
let api: FakeApiServer;
let cli: CliRun;
let url: string;
let soonCertFile = '';

/** The command's log lines (stderr) that match. */
function logged(pattern: RegExp): string[] {
  return cli
    .stderr()
    .split('\n')
    .filter((line) => pattern.test(line));
}

function eventsWith(reason: string): StoredEvent[] {
  return [...api.events.values()].filter((event) => event.reason === reason);
}

beforeAll(async () => {
  requireBuiltCli();
  network = await FabricNetwork.open('2.5.12');
  peer = network.node('peer0.org1');
  await peer.start();
  pki = await createTestPki();
  dir = await mkdtemp(path.join(os.tmpdir(), 'companion-logspec-declared-'));
  await copyFile(path.join(releaseDir('2.5.12'), 'sampleconfig', 'core.yaml'), path.join(dir, 'core.yaml'));
  api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-companion');
  await api.start();
  api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info\n' });
  await writeFile(path.join(dir, 'kubeconfig'), kubeconfigFor(api, pki.serverCA.certPem));
  const recorded = path.join(releaseDir('2.5.12'), 'crypto', 'peerOrganizations', 'org1', 'peers', 'peer0.org1');
  // The peer's TLS server certificate expires in 3 days: inside the warning window, an Event.
  const soon = await pki.issue('soon', 'serverCA', { days: 3, cn: 'peer0.org1' });
  soonCertFile = soon.cert;
  cli = runCli(['--config', path.join(dir, 'core.yaml')], {
    KUBECONFIG: path.join(dir, 'kubeconfig'),
    POD_NAME: podName,
    POD_NAMESPACE: namespace,
    ...companionServerEnv(pki),
    ...companionWritesEnv(path.join(dir, 'state')),
    CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'true',
    CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME: configMapName,
    ...companionOfDoubleEnv(peer),
    CORE_PEER_MSPCONFIGPATH: path.join(recorded, 'msp'),
    CORE_PEER_TLS_ENABLED: 'true',
    CORE_PEER_TLS_CERT_FILE: soon.cert,
    CORE_PEER_TLS_ROOTCERT_FILE: path.join(recorded, 'tls', 'ca.crt'),
  });
  url = await cli.listening();
});

afterAll(async () => {
  if (cli) await terminate(cli.child, cli.exited, 5000);
  await api?.close();
  await network?.close();
  await pki?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  expect(api.invalid).toEqual([]);
});

describe("the node's certificates (issue 29 item 1)", () => {
  test('a certificate inside the warning window is a Warning Event naming its kind, key and file (recorded from the start, before the integration ran)', async () => {
    const event = await waitFor('the NodeCertificateExpiresSoon event', () => eventsWith('NodeCertificateExpiresSoon')[0]);
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Pod', name: podName, namespace } });
    expect(event.message).toContain(`node certificate tls_server (peer.tls.cert.file ${soonCertFile}`);
    expect(event.message).toMatch(/within 7 days \(\d days left\): renew it$/);
    // The recorded MSP certificates run to 2036: no Event for them.
    expect(
      eventsWith('NodeCertificateExpiresSoon')
        .map((one) => one.message)
        .filter((message) => message.includes('msp_')),
    ).toEqual([]);
  });
});

describe("the logspec ConfigMap declares the node's spec", () => {
  test("its value is applied to the node at start, not to fabric-ops' own loggers; a Normal Event says so", async () => {
    await waitFor('the declared spec on the node', () => peer.spec === 'gossip=debug:info');
    const changed = await waitFor('the NodeLogSpecChanged event', () => eventsWith('NodeLogSpecChanged')[0]);
    expect(changed).toMatchObject({
      type: 'Normal',
      message: `node logging specification changed from 'info' to 'gossip=debug:info' by configmap ${namespace}/${configMapName}`,
      involvedObject: { kind: 'Pod', name: podName, namespace },
    });
    // fabric-ops' own loggers did not take it: their change would be a LogSpecChanged Event and this line.
    expect(eventsWith('LogSpecChanged')).toEqual([]);
    expect(logged(/^(?!.*node logging).*logging specification changed from/)).toEqual([]);
  });

  test('the node stopped and started again (back at its own spec): the declared spec is on it again within 5 s', async () => {
    await waitFor('the declared spec on the node', () => peer.spec === 'gossip=debug:info');
    await peer.stop();
    await peer.start();
    expect(peer.spec).toBe(recordedSpec);
    await waitFor('the declared spec back on the restarted node', () => peer.spec === 'gossip=debug:info', { timeoutMs: 5000 });
    const restored = await waitFor('the NodeLogSpecRestored event', () => eventsWith('NodeLogSpecRestored')[0]);
    expect(restored.type).toBe('Normal');
    expect(restored.message).toMatch(
      /^the node (answers again, with|answers) 'info'.*: the declared specification 'gossip=debug:info' from configmap fabric\/peer0-logspec is applied again$/,
    );
    expect(logged(/the declared specification 'gossip=debug:info' from configmap fabric\/peer0-logspec is applied again/).length).toBeGreaterThanOrEqual(1);
  });

  test('a node down for a while comes back at its own spec: the declared spec is applied again once it answers', async () => {
    await waitFor('the declared spec on the node', () => peer.spec === 'gossip=debug:info');
    const down = /the node's logging specification cannot be read .*ECONNREFUSED/;
    const seen = logged(down).length;
    await peer.stop();
    await waitFor('the companion seeing the node down', () => logged(down).length > seen);
    await peer.start();
    await waitFor('the declared spec back on the node', () => peer.spec === 'gossip=debug:info', { timeoutMs: 5000 });
  });

  test('a changed ConfigMap value goes to the node; an invalid one is a Warning Event and changes nothing', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'ledger=warn:info' });
    await waitFor('the new declared spec on the node', () => peer.spec === 'ledger=warn:info');
    api.setConfigMap(namespace, configMapName, { logspec: 'Loud' });
    const refused = await waitFor('the NodeLogSpecRefused event', () => eventsWith('NodeLogSpecRefused')[0]);
    expect(refused.type).toBe('Warning');
    expect(refused.message).toBe(
      `invalid logging specification 'Loud': bad segment 'Loud' (from configmap ${namespace}/${configMapName}); the node's declared specification stays 'ledger=warn:info'`,
    );
    expect(peer.spec).toBe('ledger=warn:info');
    expect(eventsWith('LogSpecChanged')).toEqual([]);
  });

  test('a TTL write through the companion holds until it ends, and is then put back to the declared spec', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    await waitFor('the declared spec on the node', () => peer.spec === 'gossip=debug:info');
    const answer = await request(`${url}/logspec`, {
      method: 'PUT',
      ca: pki.serverCA.certPem,
      client: pki.client,
      body: JSON.stringify({ spec: 'debug', ttl: '2s' }),
    });
    expect(answer.status).toBe(204);
    expect(peer.spec).toBe('debug');
    await waitFor('the put-back to the declared spec', () => peer.spec === 'gossip=debug:info');
    const putBack = await waitFor('the NodeLogSpecPutBack event', () => eventsWith('NodeLogSpecPutBack')[0]);
    expect(putBack.message).toBe(
      `node logging specification put back to 'gossip=debug:info' (the declared specification, from configmap ${namespace}/${configMapName}): the TTL of O=fabric-ops tests,CN=operator ended`,
    );
  });
});
