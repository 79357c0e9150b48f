import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { FabricOpsError } from '../../../src/errors';
import { kubernetesApiAccess, KubernetesAccessError, requireAccess, type KubernetesResource } from '../../../src/kubernetes/access';
import { createTransport } from '../../../src/kubernetes/transport';

/** A KubeConfig whose credentials must never be asked for: every call below is refused before anything is opened. */
function untouchedKubeConfig(): { kubeConfig: K8s.KubeConfig; opened: () => number } {
  let opened = 0;
  const kubeConfig = {
    getCurrentCluster: () => ({ server: 'https://127.0.0.1:1' }),
    applyToHTTPSOptions: async () => {
      opened += 1;
    },
  } as unknown as K8s.KubeConfig;
  return { kubeConfig, opened: () => opened };
}

describe('Kubernetes API access table', () => {
  test('every listed (resource, verb) gives its HTTP method', () => {
    const methods = kubernetesApiAccess.flatMap((access) =>
      access.verbs.map((verb) => `${access.resource}/${verb}=${requireAccess(access.resource, verb as never).method}`),
    );
    expect(methods).toEqual([
      'events/create=POST',
      'events/patch=PATCH',
      'configmaps/list=GET',
      'configmaps/watch=GET',
      'services/list=GET',
      'services/watch=GET',
      'pods/list=GET',
      'pods/watch=GET',
      'configmaps/get=GET',
      'configmaps/create=POST',
      'configmaps/update=PUT',
      'configmaps/list=GET',
      'configmaps/watch=GET',
    ]);
  });

  test('an unlisted pair (reached through a cast) is refused, naming it and the table', () => {
    const call = (): unknown => requireAccess('secrets' as KubernetesResource, 'get');
    expect(call).toThrow(KubernetesAccessError);
    expect(call).toThrow("get secrets is not in kubernetesApiAccess (src/kubernetes/access.ts): the chart's Role would not grant it");
    expect(() => requireAccess('configmaps', 'delete' as never)).toThrow('delete configmaps is not in kubernetesApiAccess');
    expect(() => requireAccess('services', 'get' as never)).toThrow('get services is not in kubernetesApiAccess');
    try {
      call();
    } catch (error) {
      expect(error).toBeInstanceOf(FabricOpsError);
      expect((error as KubernetesAccessError).code).toBe('FABRIC_OPS_KUBERNETES_ACCESS');
    }
  });

  test('the transport refuses a path of another resource, and a watch through request() or a list through watch(), before opening anything', async () => {
    const { kubeConfig, opened } = untouchedKubeConfig();
    const transport = createTransport(kubeConfig);
    await expect(transport.request(requireAccess('events', 'create'), '/api/v1/namespaces/ns/secrets')).rejects.toThrow(
      'create events does not fit the path /api/v1/namespaces/ns/secrets',
    );
    await expect(transport.request(requireAccess('events', 'patch'), '/api/v1/namespaces/ns/events')).rejects.toThrow(
      'patch events does not fit the path /api/v1/namespaces/ns/events',
    );
    await expect(transport.request(requireAccess('configmaps', 'watch'), '/api/v1/namespaces/ns/configmaps')).rejects.toThrow(KubernetesAccessError);
    expect(() => transport.watch(requireAccess('configmaps', 'list'), '/api/v1/namespaces/ns/configmaps', {}, () => undefined)).toThrow(
      'list configmaps: watch() needs the watch entry',
    );
    expect(opened()).toBe(0);
  });
});
