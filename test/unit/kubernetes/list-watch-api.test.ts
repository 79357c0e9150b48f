import type { ApiAccess } from '../../../src/kubernetes/access';
import { KubernetesApiError } from '../../../src/kubernetes/api-error';
import { createListWatchApi, listPageSize } from '../../../src/kubernetes/list-watch-api';
import type { KubernetesTransport } from '../../../src/kubernetes/transport-options';
import type { WatchStream } from '../../../src/kubernetes/transport-options';

interface Call {
  kind: 'request' | 'watch';
  access: string;
  path: string;
  query: Record<string, string>;
}

/** A transport double that records each call and answers list pages from a script. */
function transport(pages: Array<unknown>): { transport: KubernetesTransport; calls: Call[]; events: (type: string, object: unknown) => void } {
  const calls: Call[] = [];
  let deliver: (type: string, object: unknown) => void = () => undefined;
  const double: KubernetesTransport = {
    async request(access: ApiAccess, path, options = {}) {
      calls.push({ kind: 'request', access: `${access.resource}/${access.verb}`, path, query: options.query ?? {} });
      const page = pages.shift();
      if (page instanceof Error) throw page;
      return page;
    },
    watch(access: ApiAccess, path, query, onEvent): WatchStream {
      calls.push({ kind: 'watch', access: `${access.resource}/${access.verb}`, path, query });
      deliver = onEvent;
      return { connected: Promise.resolve(), ended: new Promise(() => undefined), abort: () => undefined };
    },
  };
  return { transport: double, calls, events: (type, object) => deliver(type, object) };
}

describe('createListWatchApi', () => {
  test('one namespace: the namespaced collection, the selector, pages of listPageSize followed by continue, one snapshot resourceVersion', async () => {
    const { transport: double, calls } = transport([
      { metadata: { resourceVersion: '40', continue: 'page2' }, items: [{ metadata: { name: 'a' } }] },
      { metadata: { resourceVersion: '40', continue: 'page3' }, items: [{ metadata: { name: 'b' } }] },
      { metadata: { resourceVersion: '40' }, items: [{ metadata: { name: 'c' } }] },
    ]);
    const api = createListWatchApi<{ metadata: { name: string } }>(double, {
      resource: 'services',
      namespace: 'org 1',
      labelSelector: 'app in (peer,orderer)',
    });
    const list = await api.list();
    expect(list).toEqual({ resourceVersion: '40', items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }, { metadata: { name: 'c' } }] });
    expect(calls).toEqual([
      {
        kind: 'request',
        access: 'services/list',
        path: '/api/v1/namespaces/org%201/services',
        query: { labelSelector: 'app in (peer,orderer)', limit: String(listPageSize) },
      },
      {
        kind: 'request',
        access: 'services/list',
        path: '/api/v1/namespaces/org%201/services',
        query: { labelSelector: 'app in (peer,orderer)', limit: String(listPageSize), continue: 'page2' },
      },
      {
        kind: 'request',
        access: 'services/list',
        path: '/api/v1/namespaces/org%201/services',
        query: { labelSelector: 'app in (peer,orderer)', limit: String(listPageSize), continue: 'page3' },
      },
    ]);
  });

  test("every namespace ('*'): /api/v1/<resource>; no labelSelector parameter for ''; the watch asks for bookmarks and a 5-10 minute timeout", async () => {
    const { transport: double, calls, events } = transport([{ metadata: { resourceVersion: '7' }, items: [] }]);
    const api = createListWatchApi<{ metadata?: { name?: string } }>(double, { resource: 'pods', namespace: '*', labelSelector: '' }, () => 0.5);
    expect(await api.list()).toEqual({ resourceVersion: '7', items: [] });
    const seen: string[] = [];
    api.watch('7', (type, object) => seen.push(`${type} ${object.metadata?.name ?? object.code}`));
    events('ADDED', { metadata: { name: 'p' } });
    events('ERROR', { code: 410 });
    expect(seen).toEqual(['ADDED p', 'ERROR 410']);
    expect(calls).toEqual([
      { kind: 'request', access: 'pods/list', path: '/api/v1/pods', query: { limit: String(listPageSize) } },
      { kind: 'watch', access: 'pods/watch', path: '/api/v1/pods', query: { resourceVersion: '7', allowWatchBookmarks: 'true', timeoutSeconds: '450' } },
    ]);
  });

  test('a continue token that expired between two pages rejects with the 410 (the Reflector lists again from the start); a list that never ends is refused', async () => {
    const expired = new KubernetesApiError('HTTP 410: The provided continue parameter is too old to display a consistent list result.', 410, 'Expired');
    const { transport: double } = transport([{ metadata: { resourceVersion: '40', continue: 'page2' }, items: [{}] }, expired]);
    const api = createListWatchApi(double, { resource: 'services', namespace: 'fabric', labelSelector: 'app=peer' });
    await expect(api.list()).rejects.toMatchObject({ status: 410 });

    const endless = Array.from({ length: 1001 }, () => ({ metadata: { resourceVersion: '1', continue: 'again' }, items: [] }));
    const looping = createListWatchApi(transport(endless).transport, { resource: 'services', namespace: 'fabric', labelSelector: '' });
    await expect(looping.list()).rejects.toThrow(`GET /api/v1/namespaces/fabric/services: still more after 1000 pages of ${listPageSize}`);
  });
});
