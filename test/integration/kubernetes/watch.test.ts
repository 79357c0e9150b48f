import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeApiServer, fakeServiceAccountUser, kubeconfigFor, type StoredEvent } from '../../support/fake-apiserver';
import { request } from '../../support/http';
import { createTestPki, type TestPki } from '../../support/pki';
import { terminate } from '../../support/processes';
import { requireBuiltCli, runCli, type CliRun } from '../../support/cli';
import { delay, waitFor } from '../../support/wait';

/**
 * The ConfigMap watch and the error lines of the command (dist/cli.js), against the fake API
 * server behaving as kube-apiserver v1.28 does (issue 16): one test per defect found there, plus
 * issue 18 items 8 (a watch that ends after each event) and 14 (a 1 MB spec). These run the
 * command with client-node's real timeouts, so each takes the time a real cluster would.
 */

const namespace = 'fabric';
const podName = 'peer0-ops-7d9f';
const configMapName = 'peer0-logspec';
const actor = `configmap ${namespace}/${configMapName}`;

function lines(text: string, pattern: RegExp): string[] {
  return text.split('\n').filter((line) => pattern.test(line));
}

describe('the ConfigMap watch of the command against a faithful API server', () => {
  let pki: TestPki;
  let dir: string;
  let api: FakeApiServer;
  let cli: CliRun | undefined;

  beforeAll(async () => {
    requireBuiltCli();
    pki = await createTestPki();
    dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-k8s-watch-'));
  });

  afterAll(async () => {
    await pki?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-kubeconfig');
    await api.start();
    await writeFile(path.join(dir, 'kubeconfig'), kubeconfigFor(api, pki.serverCA.certPem));
  });

  afterEach(async () => {
    if (cli) await terminate(cli.child, cli.exited, 5000);
    cli = undefined;
    expect(api.invalid).toEqual([]);
    await api.close();
  });

  async function startCli(extra: NodeJS.ProcessEnv = {}): Promise<{ url: string; logspec: () => Promise<string>; output: () => string }> {
    const run = runCli([], {
      KUBECONFIG: path.join(dir, 'kubeconfig'),
      POD_NAME: podName,
      POD_NAMESPACE: namespace,
      CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
      CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'true',
      CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME: configMapName,
      ...extra,
    });
    cli = run;
    const url = await run.listening();
    await waitFor('the first watch', () => api.openWatches > 0);
    return {
      url,
      logspec: async () => ((await request(`${url}/logspec`)).json as { spec: string }).spec,
      output: () => run.stderr() + run.stdout(),
    };
  }

  const events = (reason: string): StoredEvent[] => [...api.events.values()].filter((event) => event.reason === reason);

  it('1. an idle watch cut after 30 s without data (the client-node default, kept) is watched again at once, with no warning; a change after is active at once', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    const { logspec, output } = await startCli();
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    const firstWatches = api.watchRequests().length;
    // The fake sends nothing on an idle watch, as kube-apiserver does: client-node's Watch cuts it at 30 s.
    await waitFor('a second watch after the client cut the idle one', () => api.watchRequests().length > firstWatches && api.openWatches > 0, {
      timeoutMs: 40_000,
    });
    const resumed = api.watchRequests().at(-1);
    expect(resumed?.query.get('resourceVersion')).not.toBe('');
    expect(lines(output(), /cannot watch ConfigMap/)).toEqual([]);
    api.setConfigMap(namespace, configMapName, { logspec: 'ledger=debug:info' });
    await waitFor('the change after the cut', async () => (await logspec()) === 'ledger=debug:info', { timeoutMs: 5000 });
    expect(lines(output(), /\bWARN|warn/)).toEqual([]);
  }, 60_000);

  it('1 (fast). with the inactivity cut shortened to 1 s, idle watches are resumed from the last resourceVersion without a list, a warning or a growing delay', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    const { logspec, output } = await startCli({ FABRIC_OPS_KUBERNETES_WATCH_TIMEOUT_MS: '1000' });
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    const first = api.watchRequests().length;
    // Six 1 s cuts in that time: the watch resumed after each, never listed, never slower.
    await delay(6000);
    const resumed = api.watchRequests().slice(first);
    expect(resumed.length).toBeGreaterThanOrEqual(4);
    for (const watch of resumed) expect(watch.query.get('resourceVersion')).toBe(api.watchRequests()[0]?.query.get('resourceVersion'));
    expect(api.listRequests()).toHaveLength(1);
    expect(lines(output(), / WARN /)).toEqual([]);
    api.setConfigMap(namespace, configMapName, { logspec: 'ledger=debug:info' });
    await waitFor('the change', async () => (await logspec()) === 'ledger=debug:info', { timeoutMs: 3000 });
  });

  it('an API-server restart is one outage: one warning when it starts, one "watching again" when a watch connects; a change made after is active', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    const { logspec, output } = await startCli({ CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'false' });
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    const port = api.port;
    await api.stop();
    // Down 3 s, retried meanwhile: still one warning, and no "watching again".
    await delay(3000);
    expect(lines(output(), /cannot watch ConfigMap/)).toHaveLength(1);
    expect(lines(output(), /watching ConfigMap .* again/)).toEqual([]);
    await api.start(port);
    api.setConfigMap(namespace, configMapName, { logspec: 'chaincode=debug:info' });
    await waitFor('the change after the restart', async () => (await logspec()) === 'chaincode=debug:info', { timeoutMs: 10_000 });
    // No second line of either comes meanwhile.
    await delay(500);
    expect(lines(output(), /cannot watch ConfigMap/)).toHaveLength(1);
    expect(lines(output(), /watching ConfigMap .* again/)).toHaveLength(1);
    // The restart expired the resourceVersion: listed again.
    expect(api.listRequests().length).toBeGreaterThanOrEqual(2);
  });

  it('2. an expired resourceVersion (HTTP 200, ERROR 410 in the stream) lists again at once, with no warning', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    const { logspec, output } = await startCli();
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    const lists = api.listRequests().length;
    api.compact();
    api.dropWatches();
    await waitFor('a list after the in-stream 410', () => api.listRequests().length > lists, { timeoutMs: 5000 });
    await waitFor('a watch again', () => api.openWatches > 0, { timeoutMs: 5000 });
    api.setConfigMap(namespace, configMapName, { logspec: 'ledger=debug:info' });
    await waitFor('the change after the re-list', async () => (await logspec()) === 'ledger=debug:info', { timeoutMs: 5000 });
    expect(lines(output(), /cannot watch ConfigMap|aborted/)).toEqual([]);
  });

  it('3. with a revoked token, the outage is logged once when it starts and "watching again" only once a watch really connected', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    const { logspec, output } = await startCli({ CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'false' });
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    api.fault = 'unauthorized';
    api.dropWatches();
    await waitFor('a refused attempt', () => api.watchRequests().length + api.listRequests().length > 3, { timeoutMs: 10_000 });
    // Refused for 3 s, retried meanwhile: still one warning, and no "watching again".
    await delay(3000);
    expect(lines(output(), /watching ConfigMap .* again/)).toEqual([]);
    expect(lines(output(), /cannot watch ConfigMap/)).toHaveLength(1);
    api.fault = 'none';
    await waitFor('watching again', () => lines(output(), /watching ConfigMap .* again/).length > 0, { timeoutMs: 40_000 });
    // No second line of either comes meanwhile.
    await delay(500);
    expect(lines(output(), /watching ConfigMap .* again/)).toHaveLength(1);
    expect(lines(output(), /cannot watch ConfigMap/)).toHaveLength(1);
  }, 60_000);

  it('4. no LogSpecChanged Event and no "changed" line when the ConfigMap holds the active spec (at start, and when re-applied)', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'info' });
    const { url, logspec, output } = await startCli({ FABRIC_LOGGING_SPEC: 'info' });
    expect(await logspec()).toBe('info');
    // The PUT's Event is the marker that Events are written at all.
    expect((await request(`${url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec: 'warn' }) })).status).toBe(204);
    api.setConfigMap(namespace, configMapName, { logspec: 'warn' });
    await waitFor('the PUT Event', () => events('LogSpecChanged').find((event) => event.message.includes("to 'warn'")));
    // No second Event comes meanwhile for the ConfigMap's same spec.
    await delay(1000);
    expect(events('LogSpecChanged').map((event) => event.message)).toEqual(["logging specification changed from 'info' to 'warn' by anonymous 127.0.0.1"]);
    expect(lines(output(), new RegExp(`changed.*${actor}`))).toEqual([]);
  });

  it('5. the deletion line names the spec really active', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=warn:info' });
    const { url, logspec, output } = await startCli();
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=warn:info');
    expect((await request(`${url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec: 'debug' }) })).status).toBe(204);
    api.deleteConfigMap(namespace, configMapName);
    const line = await waitFor('the deletion line', () => lines(output(), /was deleted/)[0]);
    expect(line).toContain("stays 'debug'");
  });

  it('6. error lines carry the API server\'s Status.message (verb, resource, user) for 403, and no "Body: undefined" for 401', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    const { url, logspec, output } = await startCli();
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    await waitFor('the start Event', () => events('LogSpecChanged')[0]);
    api.fault = 'forbidden';
    api.dropWatches();
    // An Event to write (the spec stays at info, so the info lines stay visible).
    await request(`${url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec: 'info' }) });
    const watchLine = await waitFor('the watch warning', () => lines(output(), /cannot watch ConfigMap/)[0], { timeoutMs: 10_000 });
    expect(watchLine).toMatch(
      new RegExp(`configmaps is forbidden: User \\\\?"${fakeServiceAccountUser}\\\\?" cannot (list|watch) resource \\\\?"configmaps\\\\?"`),
    );
    const eventLine = await waitFor('the events warning', () => lines(output(), /cannot record Kubernetes events/)[0], { timeoutMs: 10_000 });
    expect(eventLine).toMatch(
      new RegExp(
        `events is forbidden: User \\\\?"${fakeServiceAccountUser}\\\\?" cannot create resource \\\\?"events\\\\?" in API group \\\\?"\\\\?" in the namespace \\\\?"${namespace}\\\\?"`,
      ),
    );
    expect(output()).not.toContain('HTTP-Code');

    const before = output().length;
    api.fault = 'none';
    await waitFor('watching again', () => lines(output().slice(before), /watching ConfigMap .* again/)[0], { timeoutMs: 40_000 });
    api.fault = 'unauthorized';
    api.dropWatches();
    const unauthorized = await waitFor('the 401 line', () => lines(output().slice(before), /cannot watch ConfigMap/)[0], { timeoutMs: 10_000 });
    expect(unauthorized).toContain('Unauthorized');
    expect(output()).not.toContain('Body: undefined');
  }, 90_000);

  it('7. wrong Kubernetes settings are refused before the server listens', async () => {
    const missingIdentity = runCli([], {
      KUBECONFIG: path.join(dir, 'kubeconfig'),
      CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
      CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME: configMapName,
    });
    expect((await missingIdentity.exited).code).toBe(2);
    expect(missingIdentity.stderr()).toContain('operations.kubernetes.logspecConfigMap.name: needs POD_NAME and POD_NAMESPACE');
    expect(missingIdentity.stderr() + missingIdentity.stdout()).not.toContain('listening');

    const noCredentials = runCli([], {
      KUBECONFIG: path.join(dir, 'no-such-kubeconfig'),
      POD_NAME: podName,
      POD_NAMESPACE: namespace,
      CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
      CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'true',
    });
    expect((await noCredentials.exited).code).toBe(1);
    expect(noCredentials.stderr()).toContain('cannot load Kubernetes credentials');
    expect(noCredentials.stderr()).toContain('no-such-kubeconfig');
    expect(noCredentials.stderr() + noCredentials.stdout()).not.toContain('listening');
  });

  it('issue 18 item 8: watch streams that each end after one event do not make the watch spin', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    const { logspec } = await startCli({ CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'false' });
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    api.endWatchesAfterEvents = 1;
    api.bookmarkEveryWatch = true;
    api.dropWatches();
    const before = api.watchRequests().length;
    // The watches made in 3 s: a rate, not a condition.
    await delay(3000);
    const made = api.watchRequests().length - before;
    // A rate limit of the order of one watch a second after a short burst, not hundreds a second.
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThanOrEqual(10);
    api.setConfigMap(namespace, configMapName, { logspec: 'ledger=debug:info' });
    await waitFor('a change still applied', async () => (await logspec()) === 'ledger=debug:info', { timeoutMs: 5000 });
  });

  it('a malformed watch stream is a real failure: one warning, backoff instead of a spin, and "watching again" only once a stream is sound', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    const { logspec, output } = await startCli({ CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'false' });
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    api.malformedWatches = true;
    api.dropWatches();
    const before = api.watchRequests().length;
    // The watches made in 4 s (a backoff, not a spin), with one warning and no "watching again".
    await delay(4000);
    const made = api.watchRequests().length - before;
    expect(made).toBeGreaterThan(1);
    expect(made).toBeLessThanOrEqual(10);
    const warnings = lines(output(), /cannot watch ConfigMap/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('malformed stream: this is not a watch event');
    expect(lines(output(), /watching ConfigMap .* again/)).toEqual([]);
    api.malformedWatches = false;
    api.setConfigMap(namespace, configMapName, { logspec: 'ledger=debug:info' });
    await waitFor('the change once streams are sound', async () => (await logspec()) === 'ledger=debug:info', { timeoutMs: 10_000 });
    expect(lines(output(), /watching ConfigMap .* again/)).toHaveLength(1);
    expect(lines(output(), /cannot watch ConfigMap/)).toHaveLength(1);
  });

  it('issue 18 item 14: a 1 MB ConfigMap value is refused with a bounded line; the active spec stays', async () => {
    api.setConfigMap(namespace, configMapName, { logspec: 'gossip=debug:info' });
    const { logspec, output } = await startCli();
    await waitFor('the ConfigMap spec', async () => (await logspec()) === 'gossip=debug:info');
    const huge = `${'a'.repeat(1024 * 1024 - 6)}=debug`;
    api.setConfigMap(namespace, configMapName, { logspec: huge });
    const line = await waitFor('the refusal line', () => lines(output(), /peer0-logspec key logspec/)[0], { timeoutMs: 10_000 });
    expect(line.length).toBeLessThan(2048);
    expect(await logspec()).toBe('gossip=debug:info');
    const refused = await waitFor('the LogSpecRefused Event', () => events('LogSpecRefused')[0]);
    expect(refused.message.length).toBeLessThanOrEqual(1024);
    // Within the size limit but invalid: refused by the spec's grammar, still echoed bounded.
    api.setConfigMap(namespace, configMapName, { logspec: `${'x'.repeat(16_000)}=bogus` });
    await waitFor('the second refusal line', () => lines(output(), /peer0-logspec key logspec/)[1], { timeoutMs: 10_000 });
    expect(await logspec()).toBe('gossip=debug:info');
    for (const text of output().split('\n')) expect(text.length).toBeLessThan(4096);
  });
});
