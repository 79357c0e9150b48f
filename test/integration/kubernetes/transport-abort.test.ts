import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { requireAccess } from '../../../src/kubernetes/access';
import { createTransport } from '../../../src/kubernetes/transport';
import { FakeApiServer } from '../../support/fake-apiserver';
import { createTestPki, type TestPki } from '../../support/pki';
import { waitFor } from '../../support/wait';

/**
 * A stop must not wait for a request the API server does not answer: the transport's request
 * takes an AbortSignal (the Reflector aborts its list with it), against an API server that
 * accepts the request and never answers.
 */
describe('Kubernetes transport: an aborted request ends at once', () => {
  let pki: TestPki;
  let api: FakeApiServer;

  beforeAll(async () => {
    pki = await createTestPki();
    api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-abort');
    await api.start();
  });

  afterAll(async () => {
    await api?.close();
    await pki?.cleanup();
  });

  test('a list the server holds is ended by abort() with an error naming it, long before the request timeout', async () => {
    // client-node's KubeConfig is ESM only (jest runs CommonJS): the two methods the transport uses.
    const kubeConfig = {
      getCurrentCluster: () => ({ server: api.url }),
      applyToHTTPSOptions: async (options: { ca?: string; headers?: Record<string, string> }) => {
        options.ca = pki.serverCA.certPem;
        options.headers = { Authorization: `Bearer ${api.token}` };
        return Promise.resolve();
      },
    } as unknown as K8s.KubeConfig;
    const transport = createTransport(kubeConfig, { requestTimeoutMs: 60_000 });
    api.fault = 'hang';
    const controller = new AbortController();
    const listing = transport.request(requireAccess('services', 'list'), '/api/v1/namespaces/fabric/services', { signal: controller.signal });
    const outcome = listing.then(
      () => 'answered',
      (error: unknown) => (error as Error).message,
    );
    // The request reached the server, which holds it.
    await waitFor('the list at the server', () => api.received('GET', '/api/v1/namespaces/fabric/services').length === 1);
    controller.abort();
    await expect(outcome).resolves.toBe('GET /api/v1/namespaces/fabric/services: aborted (stopping)');
    // Already aborted: refused before anything is sent.
    await expect(transport.request(requireAccess('services', 'list'), '/api/v1/namespaces/fabric/services', { signal: controller.signal })).rejects.toThrow(
      'GET /api/v1/namespaces/fabric/services: aborted (stopping)',
    );
    expect(api.received('GET', '/api/v1/namespaces/fabric/services')).toHaveLength(1);
  });
});
