import https from 'node:https';
import { FakeApiServer, fakeServiceAccountUser } from '../../support/fake-apiserver';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, type TestPki } from '../../support/pki';
import { waitFor } from '../../support/wait';

/**
 * The fake API server's own contract (test/support/fake-apiserver.ts), over real HTTPS: what
 * the discovery and the put-back store rely on it to do as kube-apiserver does. Each rule
 * below says where the real behaviour is written down (see the comment at the top of the fake).
 */

interface WatchEvent {
  type: string;
  object: { kind?: string; code?: number; metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> } };
}

describe('the fake Kubernetes API server', () => {
  let pki: TestPki;
  let api: FakeApiServer;
  const token = 'token-contract';
  const open: Array<() => void> = [];

  beforeAll(async () => {
    pki = await createTestPki();
  });

  afterAll(async () => {
    await pki?.cleanup();
  });

  beforeEach(async () => {
    api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, token);
    await api.start();
  });

  afterEach(async () => {
    for (const close of open.splice(0)) close();
    await api.close();
  });

  function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<HttpAnswer> {
    return request(`${api.url}${path}`, {
      method,
      ca: pki.serverCA.certPem,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': contentType }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** A watch stream: the events received so far. */
  async function watch(path: string): Promise<{ events: () => WatchEvent[]; ended: () => boolean }> {
    const events: WatchEvent[] = [];
    let ended = false;
    await new Promise<void>((resolve, reject) => {
      const req = https.get(`${api.url}${path}`, { ca: pki.serverCA.certPem, headers: { Authorization: `Bearer ${token}` }, agent: false }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`watch answered ${res.statusCode}`));
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let newline = buffer.indexOf('\n');
          while (newline >= 0) {
            events.push(JSON.parse(buffer.slice(0, newline)) as WatchEvent);
            buffer = buffer.slice(newline + 1);
            newline = buffer.indexOf('\n');
          }
        });
        res.on('end', () => (ended = true));
        res.on('error', () => (ended = true));
        resolve();
      });
      req.on('error', (error) => (ended ? undefined : reject(error)));
      open.push(() => req.destroy());
    });
    return { events: () => events, ended: () => ended };
  }

  const names = (answer: HttpAnswer): string[] =>
    ((answer.json as { items: Array<{ metadata: { namespace: string; name: string } }> }).items ?? []).map(
      (item) => `${item.metadata.namespace}/${item.metadata.name}`,
    );

  function peers(): void {
    api.setObject('services', 'fabric', { metadata: { name: 'peer0', labels: { app: 'peer', org: 'org1', tier: '1' } }, spec: { ports: [] } });
    api.setObject('services', 'fabric', { metadata: { name: 'peer1', labels: { app: 'peer', org: 'org2', tier: '3' } }, spec: { ports: [] } });
    api.setObject('services', 'fabric', { metadata: { name: 'orderer0', labels: { app: 'orderer', org: 'org1' } }, spec: { ports: [] } });
    api.setObject('services', 'other', { metadata: { name: 'peer9', labels: { app: 'peer' } }, spec: { ports: [] } });
    api.setObject('services', 'other', { metadata: { name: 'plain' } });
  }

  test('label selectors filter lists as labels.Parse reads them; across namespaces at /api/v1/<resource>; items carry no kind', async () => {
    peers();
    const list = (selector: string, path = '/api/v1/namespaces/fabric/services'): Promise<HttpAnswer> =>
      call('GET', `${path}?labelSelector=${encodeURIComponent(selector)}`);
    expect(names(await list('app=peer'))).toEqual(['fabric/peer0', 'fabric/peer1']);
    expect(names(await list('app==peer'))).toEqual(['fabric/peer0', 'fabric/peer1']);
    expect(names(await list('app!=peer'))).toEqual(['fabric/orderer0']);
    expect(names(await list('org in (org2, org3)'))).toEqual(['fabric/peer1']);
    expect(names(await list('org notin (org2)', '/api/v1/services'))).toEqual(['fabric/orderer0', 'fabric/peer0', 'other/peer9', 'other/plain']);
    expect(names(await list('tier'))).toEqual(['fabric/peer0', 'fabric/peer1']);
    expect(names(await list('!tier,app=peer', '/api/v1/services'))).toEqual(['other/peer9']);
    expect(names(await list('app=peer, tier>2'))).toEqual(['fabric/peer1']);
    expect(names(await list(''))).toEqual(['fabric/orderer0', 'fabric/peer0', 'fabric/peer1']);
    const all = await list('app=peer', '/api/v1/services');
    expect(names(all)).toEqual(['fabric/peer0', 'fabric/peer1', 'other/peer9']);
    const body = all.json as { kind: string; metadata: { resourceVersion: string }; items: Array<Record<string, unknown>> };
    expect(body.kind).toBe('ServiceList');
    expect(body.items[0]).not.toHaveProperty('kind');
    expect(body.items[0]).not.toHaveProperty('apiVersion');
    expect(body.items[0]?.metadata).toMatchObject({ uid: expect.any(String), creationTimestamp: expect.any(String), resourceVersion: expect.any(String) });
    expect(Number(body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number((body.items[2]?.metadata as { resourceVersion: string }).resourceVersion));

    for (const [selector, message] of [
      ['app in peer', "unable to parse requirement: found 'peer' expected: '('"],
      ['app=peer,', "found '', expected: identifier after ','"],
      ['app peer', "found 'peer', expected: in, notin, =, ==, !=, gt, lt"],
      ['app=pe er', "found 'er', expected: ',' or 'end of string'"],
      ['-app=peer', 'unable to parse requirement: Invalid value: "-app"'],
      ['app=pe/er', 'unable to parse requirement: values[0][app]: Invalid value: "pe/er"'],
      ['tier>high', "for 'Gt', 'Lt' operators, the value must be an integer"],
    ]) {
      const refused = await list(selector ?? '');
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
      expect((refused.json as { message: string }).message).toContain(message);
    }
    const field = await call('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1');
    expect(field.status).toBe(400);
    expect((field.json as { message: string }).message).toBe('"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"');
    expect(names(await call('GET', '/api/v1/services?fieldSelector=metadata.namespace%3Dother'))).toEqual(['other/peer9', 'other/plain']);
  });

  test("lists in pages: limit and continue read the first page's state; a compaction between pages is a 410 Expired answer", async () => {
    for (const name of ['a', 'b', 'c', 'd', 'e']) api.setObject('pods', 'fabric', { metadata: { name, labels: { app: 'peer' } } });
    const page = async (query: string): Promise<{ names: string[]; metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number } }> => {
      const answer = await call('GET', `/api/v1/namespaces/fabric/pods?${query}`);
      expect(answer.status).toBe(200);
      const body = answer.json as { metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number } };
      return { names: names(answer), metadata: body.metadata };
    };
    const first = await page('limit=2');
    expect(first.names).toEqual(['fabric/a', 'fabric/b']);
    expect(first.metadata.remainingItemCount).toBe(3);
    api.setObject('pods', 'fabric', { metadata: { name: 'bb', labels: { app: 'peer' } } });
    api.deleteObject('pods', 'fabric', 'e');
    const second = await page(`limit=2&continue=${first.metadata.continue}`);
    expect(second.names).toEqual(['fabric/c', 'fabric/d']);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const third = await page(`limit=2&continue=${second.metadata.continue}`);
    expect(third.names).toEqual(['fabric/e']);
    expect(third.metadata.continue).toBeUndefined();
    // With a selector the server does not count what is left.
    const selected = await page('limit=2&labelSelector=app%3Dpeer');
    expect(selected.names).toEqual(['fabric/a', 'fabric/b']);
    expect(selected.metadata.continue).toEqual(expect.any(String));
    expect(selected.metadata).not.toHaveProperty('remainingItemCount');
    const withVersion = await call('GET', `/api/v1/namespaces/fabric/pods?limit=2&resourceVersion=5&continue=${selected.metadata.continue}`);
    expect(withVersion.status).toBe(400);
    api.compact();
    const expired = await call('GET', `/api/v1/namespaces/fabric/pods?limit=2&labelSelector=app%3Dpeer&continue=${selected.metadata.continue}`);
    expect(expired.status).toBe(410);
    expect(expired.json).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
    expect((expired.json as { message: string }).message).toContain('The provided continue parameter is too old');
  });

  test('a label-selector watch sees relabelling out as DELETED (the old object, the new resourceVersion) and in as ADDED, live and on a replay', async () => {
    peers();
    const start = (await call('GET', '/api/v1/services')).json as { metadata: { resourceVersion: string } };
    const live = await watch(`/api/v1/namespaces/fabric/services?watch=true&labelSelector=app%3Dpeer&resourceVersion=${start.metadata.resourceVersion}`);
    const everywhere = await watch(`/api/v1/services?watch=true&labelSelector=app%3Dpeer&resourceVersion=${start.metadata.resourceVersion}`);
    await waitFor('two open watches', () => api.openWatchesOf('services') === 2);
    const out = api.setObject('services', 'fabric', { metadata: { name: 'peer1', labels: { app: 'retired', org: 'org2' } } });
    api.setObject('services', 'fabric', { metadata: { name: 'orderer0', labels: { app: 'peer', org: 'org1' } } });
    api.setObject('services', 'fabric', { metadata: { name: 'peer0', labels: { app: 'peer', org: 'org1', tier: '2' } } });
    api.setObject('services', 'fabric', { metadata: { name: 'peer1', labels: { app: 'retired', org: 'org3' } } });
    api.deleteObject('services', 'fabric', 'peer0');
    api.setObject('services', 'other', { metadata: { name: 'peer8', labels: { app: 'peer' } } });
    api.setConfigMap('fabric', 'unrelated', { a: 'b' });
    const expected = [
      'DELETED peer1 app=peer',
      'ADDED orderer0 app=peer',
      'MODIFIED peer0 app=peer',
      // peer1 changed again while out of the selector: nothing; then peer0 deleted.
      'DELETED peer0 app=peer',
    ];
    const summary = (events: WatchEvent[]): string[] =>
      events.map((event) => `${event.type} ${event.object.metadata?.name} app=${event.object.metadata?.labels?.app}`);
    await waitFor('the live events', () => live.events().length >= 4);
    await waitFor('the events in every namespace', () => everywhere.events().length >= 5);
    expect(summary(live.events())).toEqual(expected);
    expect(summary(everywhere.events())).toEqual([...expected, 'ADDED peer8 app=peer']);
    expect(live.events()[0]?.object.metadata?.resourceVersion).toBe(out.metadata.resourceVersion);
    expect(live.events()[0]?.object.kind).toBe('Service');

    // The same changes replayed from the old resourceVersion, as a reconnecting client gets them.
    const replay = await watch(`/api/v1/namespaces/fabric/services?watch=true&labelSelector=app%3Dpeer&resourceVersion=${start.metadata.resourceVersion}`);
    await waitFor('the replay', () => replay.events().length >= 4);
    expect(summary(replay.events())).toEqual(expected);
    // Without a resourceVersion: the current state as ADDED.
    const fresh = await watch('/api/v1/services?watch=true&labelSelector=app%3Dpeer');
    await waitFor('the initial events', () => fresh.events().length >= 3);
    expect(summary(fresh.events())).toEqual(['ADDED orderer0 app=peer', 'ADDED peer8 app=peer', 'ADDED peer9 app=peer']);
    // A compaction: 200 and an ERROR 410 for an old resourceVersion, on every resource.
    api.compact();
    const expired = await watch(`/api/v1/pods?watch=true&resourceVersion=${start.metadata.resourceVersion}`);
    await waitFor('the end of the expired watch', () => expired.ended());
    expect(expired.events()).toEqual([{ type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired' }) }]);
  });

  test("configmaps get, create and update, with the API server's answers for absent, existing and stale objects", async () => {
    const path = '/api/v1/namespaces/fabric/configmaps';
    const absent = await call('GET', `${path}/fleet-state`);
    expect(absent.status).toBe(404);
    expect(absent.json).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      code: 404,
      message: 'configmaps "fleet-state" not found',
      details: { name: 'fleet-state', kind: 'configmaps' },
    });

    const created = await call('POST', path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fleet-state' }, data: { pending: '[]' } });
    expect(created.status).toBe(201);
    const first = created.json as { metadata: { resourceVersion: string; uid: string; namespace: string } };
    expect(first.metadata.namespace).toBe('fabric');
    const again = await call('POST', path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fleet-state' }, data: {} });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ reason: 'AlreadyExists', message: 'configmaps "fleet-state" already exists' });
    const withVersion = await call('POST', path, { metadata: { name: 'other', resourceVersion: '5' }, data: {} });
    expect(withVersion.status).toBe(500);
    expect((withVersion.json as { message: string }).message).toContain('resourceVersion should not be set on objects to be created');

    const got = await call('GET', `${path}/fleet-state`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ kind: 'ConfigMap', data: { pending: '[]' }, metadata: { resourceVersion: first.metadata.resourceVersion } });

    const events = await watch(`${path}?watch=true&fieldSelector=metadata.name%3Dfleet-state&resourceVersion=${first.metadata.resourceVersion}`);
    await waitFor('the watch', () => api.openWatchesOf('configmaps') === 1);
    const body = (version: string, pending: string): unknown => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fleet-state', namespace: 'fabric', resourceVersion: version },
      data: { pending },
    });
    const updated = await call('PUT', `${path}/fleet-state`, body(first.metadata.resourceVersion, '[1]'));
    expect(updated.status).toBe(200);
    const second = updated.json as { metadata: { resourceVersion: string; uid: string } };
    expect(Number(second.metadata.resourceVersion)).toBeGreaterThan(Number(first.metadata.resourceVersion));
    expect(second.metadata.uid).toBe(first.metadata.uid);

    const stale = await call('PUT', `${path}/fleet-state`, body(first.metadata.resourceVersion, '[2]'));
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on configmaps "fleet-state": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'fleet-state', kind: 'configmaps' },
    });
    // Nothing changes: same resourceVersion, no event.
    const same = await call('PUT', `${path}/fleet-state`, body(second.metadata.resourceVersion, '[1]'));
    expect(same.status).toBe(200);
    expect((same.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBe(second.metadata.resourceVersion);
    const missing = await call('PUT', `${path}/gone`, { metadata: { name: 'gone', resourceVersion: '1' }, data: {} });
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ reason: 'NotFound', message: 'configmaps "gone" not found' });
    const renamed = await call('PUT', `${path}/fleet-state`, { metadata: { name: 'other' }, data: {} });
    expect(renamed.status).toBe(400);
    const invalid = await call('PUT', `${path}/fleet-state`, { metadata: { name: 'fleet-state' }, data: { pending: 7 } });
    expect(invalid.status).toBe(422);
    expect(api.invalid).toHaveLength(2);
    api.invalid.length = 0;
    await waitFor('the update event', () => events.events().length >= 1);
    expect(events.events().map((event) => `${event.type} ${event.object.metadata?.resourceVersion}`)).toEqual([`MODIFIED ${second.metadata.resourceVersion}`]);
    expect(api.getObject('configmaps', 'fabric', 'fleet-state')?.data).toEqual({ pending: '[1]' });
  });

  test('403 names the verb, the object and the scope as RBAC does; `authorize` refuses single calls', async () => {
    api.fault = 'forbidden';
    const message = async (method: string, path: string, body?: unknown): Promise<string> => {
      const answer = await call(method, path, body);
      expect(answer.status).toBe(403);
      return (answer.json as { message: string }).message;
    };
    const user = `User "${fakeServiceAccountUser}"`;
    expect(await message('GET', '/api/v1/namespaces/fabric/configmaps/fleet-state')).toBe(
      `configmaps "fleet-state" is forbidden: ${user} cannot get resource "configmaps" in API group "" in the namespace "fabric"`,
    );
    expect(await message('PUT', '/api/v1/namespaces/fabric/configmaps/fleet-state', { metadata: { name: 'fleet-state' } })).toBe(
      `configmaps "fleet-state" is forbidden: ${user} cannot update resource "configmaps" in API group "" in the namespace "fabric"`,
    );
    expect(await message('POST', '/api/v1/namespaces/fabric/configmaps', { metadata: { name: 'x' } })).toBe(
      `configmaps is forbidden: ${user} cannot create resource "configmaps" in API group "" in the namespace "fabric"`,
    );
    expect(await message('GET', '/api/v1/pods?labelSelector=app%3Dpeer')).toBe(
      `pods is forbidden: ${user} cannot list resource "pods" in API group "" at the cluster scope`,
    );
    expect(await message('GET', '/api/v1/services?watch=true')).toBe(
      `services is forbidden: ${user} cannot watch resource "services" in API group "" at the cluster scope`,
    );

    // A namespaced Role: every namespace is refused, the own one is not.
    api.fault = 'none';
    api.authorize = ({ namespace }) => namespace === 'fabric';
    expect((await call('GET', '/api/v1/namespaces/fabric/services')).status).toBe(200);
    expect(await message('GET', '/api/v1/services')).toBe(
      `services is forbidden: ${user} cannot list resource "services" in API group "" at the cluster scope`,
    );
  });
});
