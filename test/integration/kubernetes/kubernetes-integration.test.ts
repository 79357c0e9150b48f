import { X509Certificate } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { kubernetesApiAccess } from '../../../src/kubernetes/access';
import { FakeApiServer, kubeconfigFor, type StoredEvent } from '../../support/fake-apiserver';
import { request } from '../../support/http';
import { createTestPki, type TestPki } from '../../support/pki';
import { terminate } from '../../support/processes';
import { requireBuiltCli, runCli, type CliRun } from '../../support/cli';
import { delay, waitFor } from '../../support/wait';

/**
 * The command (dist/cli.js) with the Kubernetes integration on, against a fake API server
 * (test/support/fake-apiserver.ts) reached through @kubernetes/client-node: a kubeconfig, and
 * the in-cluster service-account path.
 */

const namespace = 'fabric';
const podName = 'peer0-ops-7d9f';
const configMapName = 'peer0-logspec';

/** A Docker Engine socket whose /_ping answers 200 or 500 as the test says. */
async function fakeDocker(socketPath: string): Promise<{ healthy: boolean; close(): Promise<void> }> {
  const state = { healthy: true };
  const server = http.createServer((req, res) => {
    if (req.url?.endsWith('/version')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ Version: '24.0.0', ApiVersion: '1.43' }));
      return;
    }
    res.writeHead(state.healthy ? 200 : 500, { 'Content-Type': 'text/plain' });
    res.end(state.healthy ? 'OK' : 'daemon is shutting down');
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return Object.assign(state, { close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}

function eventsWith(api: FakeApiServer, reason: string): StoredEvent[] {
  return [...api.events.values()].filter((event) => event.reason === reason);
}

/** A request to the core API (/api/v1) as kube-apiserver's RBAC names it: apiGroup/resource/verb. */
function rbacOf(request: FakeApiServer['requests'][number]): string {
  const match = /^\/api\/v1\/namespaces\/[^/]+\/([^/]+)(\/[^/]+)?$/.exec(request.path);
  if (!match) return `not a namespaced core API path: ${request.method} ${request.path}`;
  const [, resource, object] = match;
  const verbs: Record<string, string> = { POST: 'create', PATCH: 'patch', PUT: 'update', DELETE: 'delete' };
  const verb =
    request.method === 'GET' ? (request.query.get('watch') === 'true' ? 'watch' : object ? 'get' : 'list') : (verbs[request.method] ?? request.method);
  return `/${resource}/${verb}`;
}

describe('Kubernetes integration (fake API server, kubeconfig)', () => {
  let pki: TestPki;
  let dir: string;
  let api: FakeApiServer;
  let docker: Awaited<ReturnType<typeof fakeDocker>>;
  let cli: CliRun;
  let url: string;

  const logspec = async (): Promise<string> => ((await request(`${url}/logspec`)).json as { spec: string }).spec;

  beforeAll(async () => {
    requireBuiltCli();
    pki = await createTestPki();
    dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-k8s-'));
    api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-kubeconfig');
    await api.start();
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info\n' });
    await writeFile(path.join(dir, 'kubeconfig'), kubeconfigFor(api, pki.serverCA.certPem));
    docker = await fakeDocker(path.join(dir, 'docker.sock'));
    cli = runCli([], {
      KUBECONFIG: path.join(dir, 'kubeconfig'),
      POD_NAME: podName,
      POD_NAMESPACE: namespace,
      POD_UID: '0f1e2d3c-aaaa-bbbb-cccc-1234567890ab',
      CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
      CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'true',
      CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME: configMapName,
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'docker',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_ENDPOINT: `unix://${path.join(dir, 'docker.sock')}`,
    });
    url = await cli.listening();
  }, 60_000);

  afterAll(async () => {
    if (cli) await terminate(cli.child, cli.exited, 5000);
    await docker?.close();
    await api?.close();
    await pki?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(api.invalid).toEqual([]);
  });

  it('activates the ConfigMap value at start, listing and watching by name with bookmarks', async () => {
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    const lists = api.requests.filter((r) => r.method === 'GET' && r.path === `/api/v1/namespaces/${namespace}/configmaps` && r.query.get('watch') !== 'true');
    expect(lists[0]?.query.get('fieldSelector')).toBe(`metadata.name=${configMapName}`);
    const watch = await waitFor('a watch', () => api.requests.find((r) => r.query.get('watch') === 'true'));
    expect(watch.query.get('fieldSelector')).toBe(`metadata.name=${configMapName}`);
    expect(watch.query.get('allowWatchBookmarks')).toBe('true');
    expect(watch.authorization).toBe('Bearer token-kubeconfig');
    const changed = await waitFor('the LogSpecChanged event', () => eventsWith(api, 'LogSpecChanged')[0]);
    expect(changed).toMatchObject({
      type: 'Normal',
      message: `logging specification changed from 'info' to 'gossip=debug:info' by configmap ${namespace}/${configMapName}`,
      involvedObject: { kind: 'Pod', name: podName, namespace, uid: '0f1e2d3c-aaaa-bbbb-cccc-1234567890ab' },
      source: { component: 'fabric-ops' },
      count: 1,
    });
    expect(changed.metadata.name.startsWith(`${podName}.`)).toBe(true);
  });

  it('activates a changed value promptly; an invalid one is refused with a Warning Event and the active spec stays', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'ledger=warn:debug' });
    await waitFor('the new spec', async () => (await logspec()) === 'ledger=warn:debug', { timeoutMs: 5000 });
    api.setConfigMap(namespace, configMapName, { logspec: 'Debug' });
    const refused = await waitFor('the LogSpecRefused event', () => eventsWith(api, 'LogSpecRefused')[0]);
    expect(refused.type).toBe('Warning');
    expect(refused.message).toContain("invalid logging specification 'Debug'");
    expect(refused.message).toContain(`configmap ${namespace}/${configMapName}`);
    expect(await logspec()).toBe('ledger=warn:debug');
    expect(cli.stderr() + cli.stdout()).toContain("invalid logging specification 'Debug'");
  });

  it('a PUT /logspec lasts across dropped watches, bookmarks and 410 Gone until the ConfigMap changes again', async () => {
    const put = await request(`${url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec: 'warn' }) });
    expect(put.status).toBe(204);
    await waitFor('the PUT event', () => eventsWith(api, 'LogSpecChanged').find((event) => event.message.includes("to 'warn' by anonymous")));

    // A bookmark moves the watch's resourceVersion; the next watch resumes from it.
    api.setConfigMap('other', 'unrelated', { logspec: 'debug' });
    api.sendBookmarks();
    // Time for the bookmark to reach the command: the resourceVersion it keeps is not visible to poll.
    await delay(200);
    const watchesBefore = api.requests.filter((r) => r.query.get('watch') === 'true').length;
    api.dropWatches();
    const resumed = await waitFor('a new watch', () => api.requests.filter((r) => r.query.get('watch') === 'true')[watchesBefore], { timeoutMs: 10_000 });
    expect(Number(resumed.query.get('resourceVersion'))).toBeGreaterThanOrEqual(Number(api.requests.at(-1)?.query.get('resourceVersion') ?? 0));
    expect(await logspec()).toBe('warn');

    // History compacted, connection dropped: the watch gets 410, lists again, still leaves the PUT alone.
    const listsBefore = api.requests.filter((r) => r.method === 'GET' && r.query.get('watch') !== 'true' && r.path.endsWith('/configmaps')).length;
    api.compact();
    api.dropWatches();
    await waitFor(
      'a re-list after 410',
      () => api.requests.filter((r) => r.method === 'GET' && r.query.get('watch') !== 'true' && r.path.endsWith('/configmaps')).length > listsBefore,
      { timeoutMs: 10_000 },
    );
    expect(await logspec()).toBe('warn');

    api.setConfigMap(namespace, configMapName, { logspec: 'info' });
    await waitFor('the ConfigMap spec again', async () => (await logspec()) === 'info', { timeoutMs: 5000 });

    api.deleteConfigMap(namespace, configMapName);
    // Time for the deletion to arrive: it leaves the spec as it is.
    await delay(300);
    expect(await logspec()).toBe('info');
  });

  it('100 identical health failures make one Event with count 100 (and one recovered Event with count 100)', async () => {
    for (let i = 0; i < 100; i += 1) {
      docker.healthy = false;
      expect((await request(`${url}/healthz`)).status).toBe(503);
      docker.healthy = true;
      expect((await request(`${url}/healthz`)).status).toBe(200);
    }
    const failed = await waitFor('count 100', () => eventsWith(api, 'HealthCheckFailed').find((event) => event.count === 100), { timeoutMs: 30_000 });
    expect(eventsWith(api, 'HealthCheckFailed')).toHaveLength(1);
    expect(failed.type).toBe('Warning');
    expect(failed.message).toMatch(/^health check docker is failing: /);
    await waitFor('recovered count 100', () => eventsWith(api, 'HealthCheckRecovered').find((event) => event.count === 100), { timeoutMs: 30_000 });
    expect(eventsWith(api, 'HealthCheckRecovered')).toHaveLength(1);
    const patches = api.received('PATCH', `/api/v1/namespaces/${namespace}/events/${failed.metadata.name}`);
    expect(patches.length).toBeGreaterThan(0);
    expect(patches.length).toBeLessThan(99); // rate-limited and coalesced, not one write per failure
    for (const patch of patches) expect(patch.contentType).toBe('application/merge-patch+json');
  }, 60_000);

  it('endpoints answer at once while the API server hangs or refuses (403), and queued events arrive afterwards', async () => {
    api.fault = 'hang';
    const put = await request(`${url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec: 'debug' }), timeoutMs: 2000 });
    expect(put.status).toBe(204);
    for (let i = 0; i < 20; i += 1) {
      const started = Date.now();
      const answer = await request(`${url}/version`, { timeoutMs: 2000 });
      expect(answer.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
    }
    api.fault = 'forbidden';
    const put2 = await request(`${url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec: 'info' }), timeoutMs: 2000 });
    expect(put2.status).toBe(204);
    expect((await request(`${url}/logspec`, { timeoutMs: 2000 })).json).toEqual({ spec: 'info' });
    await waitFor('a 403 answer', () => api.requests.some((r) => r.method === 'POST') && cli.stderr().includes('cannot record Kubernetes events'), {
      timeoutMs: 20_000,
    });
    expect(cli.stderr().split('cannot record Kubernetes events').length - 1).toBe(1);
    api.fault = 'none';
    await waitFor('the queued event', () => eventsWith(api, 'LogSpecChanged').find((event) => event.message.includes("from 'debug' to 'info'")), {
      timeoutMs: 70_000,
    });
    expect(cli.stderr()).toContain('Kubernetes events are recorded again');
  }, 120_000);

  it('the ConfigMap watch survives an API-server restart', async () => {
    const port = api.port;
    await api.stop();
    // Down a while: the watch loses the server and retries before it is back.
    await delay(1500);
    await api.start(port);
    api.setConfigMap(namespace, configMapName, { logspec: 'chaincode=debug:info' });
    await waitFor('the spec after the restart', async () => (await logspec()) === 'chaincode=debug:info', { timeoutMs: 40_000 });
  }, 60_000);

  it('the calls the API server received are exactly the node integration entries of the table the chart derives its Role from (src/kubernetes/access.ts)', () => {
    const table = kubernetesApiAccess
      .filter((access) => access.feature === 'events' || access.feature === 'logspecConfigMap')
      .flatMap((access) => access.verbs.map((verb) => `${access.apiGroup}/${access.resource}/${verb}`))
      .sort();
    const received = [...new Set(api.requests.map(rbacOf))].sort();
    expect(received).toEqual(table);
  });
});

describe('Kubernetes integration through the in-cluster service account', () => {
  it('reads the token and CA from the service-account directory and KUBERNETES_SERVICE_HOST/PORT; warns of a certificate near expiry', async () => {
    requireBuiltCli();
    const pki = await createTestPki();
    const dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-k8s-sa-'));
    const api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-in-cluster');
    let cli: CliRun | undefined;
    try {
      await api.start();
      const accountDir = path.join(dir, 'var/run/secrets/kubernetes.io/serviceaccount');
      await mkdir(accountDir, { recursive: true });
      await writeFile(path.join(accountDir, 'token'), 'token-in-cluster');
      await writeFile(path.join(accountDir, 'ca.crt'), pki.serverCA.certPem);
      await writeFile(path.join(accountDir, 'namespace'), namespace);
      const soon = await pki.issue('expiring-server', 'serverCA', { cn: 'localhost', days: 5 });
      cli = runCli([], {
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: String(api.port),
        FABRIC_OPS_SERVICEACCOUNT_ROOT: dir,
        POD_NAME: podName,
        POD_NAMESPACE: namespace,
        CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
        CORE_OPERATIONS_TLS_ENABLED: 'true',
        CORE_OPERATIONS_TLS_CERT_FILE: soon.cert,
        CORE_OPERATIONS_TLS_KEY_FILE: soon.key,
        CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: pki.clientCA.cert,
        CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'true',
        CORE_OPERATIONS_KUBERNETES_EVENTS_CERTIFICATEEXPIRYWARNINGDAYS: '7',
        CORE_METRICS_PROVIDER: 'prometheus',
      });
      const opsUrl = (await cli.listening()).replace('127.0.0.1', 'localhost');
      const metrics = await request(`${opsUrl}/metrics`, { ca: pki.serverCA.certPem, client: pki.client });
      const gauge = (certificate: string): number =>
        Number(new RegExp(`^operations_tls_certificate_expiry_timestamp_seconds\\{certificate="${certificate}"\\} (\\S+)$`, 'm').exec(metrics.body)?.[1]);
      expect(gauge('server')).toBe(Date.parse(new X509Certificate(soon.certPem).validTo) / 1000);
      expect(gauge('client_ca')).toBe(Date.parse(new X509Certificate(pki.clientCA.certPem).validTo) / 1000);
      const warning = await waitFor('the expiry warning', () => eventsWith(api, 'CertificateExpiresSoon')[0]);
      expect(warning.type).toBe('Warning');
      expect(warning.message).toMatch(/serving certificate ".*CN=localhost" expires at .*, in [45] days/);
      expect(api.received('POST', `/api/v1/namespaces/${namespace}/events`)[0]?.authorization).toBe('Bearer token-in-cluster');
      expect(api.invalid).toEqual([]);
    } finally {
      if (cli) await terminate(cli.child, cli.exited, 5000);
      await api.close();
      await pki.cleanup();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses to start without the pod identity, naming the key and the variables', async () => {
    requireBuiltCli();
    const cli = runCli([], { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'true', KUBECONFIG: '/nonexistent' });
    const exit = await cli.exited;
    expect(exit.code).toBe(2);
    expect(cli.stderr()).toContain('operations.kubernetes.events.enabled: needs POD_NAME and POD_NAMESPACE');
  });
});
