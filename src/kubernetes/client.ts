import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { KubernetesSetupError, messageOf } from '../errors';
import { requireAccess } from './access';
import type { ConfigMapApi, ConfigMapLike } from './logspec-configmap';
import { watchTimeoutSeconds } from './list-watch-api';
import type { WatchEventType } from './reflector';
import type { KubernetesTransport } from './transport-options';
import type { CoreEventBody, EventPatch, EventSink } from './recorder';

type ClientNode = typeof K8s;

/**
 * @kubernetes/client-node takes about a second to load: only processes that configured the
 * integration pay for it. (It is ESM only; `import()` loads it from CommonJS.)
 */
export async function loadClientNode(): Promise<ClientNode> {
  return import('@kubernetes/client-node');
}

/** The variable naming a directory that holds `var/run/secrets/kubernetes.io/serviceaccount/` (default: `/`). */
export const serviceAccountRootVariable = 'FABRIC_OPS_SERVICEACCOUNT_ROOT';

/**
 * Credentials as kubectl and client-go find them: `KUBECONFIG`, else the pod's service account
 * (`KUBERNETES_SERVICE_HOST`/`_PORT`, token and CA under /var/run/secrets/kubernetes.io/serviceaccount).
 */
export function loadKubeConfig(k8s: ClientNode, env: NodeJS.ProcessEnv): K8s.KubeConfig {
  const config = new k8s.KubeConfig();
  try {
    if (env.KUBECONFIG) {
      config.loadFromFile(env.KUBECONFIG.split(':')[0] ?? env.KUBECONFIG);
    } else if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
      const root = (env[serviceAccountRootVariable] ?? '').replace(/\/+$/, '');
      config.loadFromCluster(root);
    } else {
      throw new Error('neither KUBECONFIG nor KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT (in-cluster service account) is set');
    }
  } catch (error) {
    throw new KubernetesSetupError(`cannot load Kubernetes credentials: ${messageOf(error)}`);
  }
  if (!config.getCurrentCluster()) throw new KubernetesSetupError('cannot load Kubernetes credentials: the kubeconfig has no current cluster');
  return config;
}

export function createEventSink(transport: KubernetesTransport): EventSink {
  return {
    async create(event: CoreEventBody): Promise<void> {
      await transport.request(requireAccess('events', 'create'), `/api/v1/namespaces/${encodeURIComponent(event.metadata.namespace)}/events`, { body: event });
    },
    async patch(namespace: string, name: string, patch: EventPatch): Promise<void> {
      await transport.request(requireAccess('events', 'patch'), `/api/v1/namespaces/${encodeURIComponent(namespace)}/events/${encodeURIComponent(name)}`, {
        body: patch,
        contentType: 'application/merge-patch+json',
      });
    },
  };
}

export function createConfigMapApi(transport: KubernetesTransport, namespace: string, name: string, random: () => number = Math.random): ConfigMapApi {
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`;
  const fieldSelector = `metadata.name=${name}`;
  return {
    async list() {
      const list = (await transport.request(requireAccess('configmaps', 'list'), path, { query: { fieldSelector } })) as {
        metadata?: { resourceVersion?: string };
        items?: ConfigMapLike[];
      } | null;
      return { resourceVersion: list?.metadata?.resourceVersion ?? '', items: Array.isArray(list?.items) ? list.items : [] };
    },
    watch(resourceVersion, onEvent) {
      return transport.watch(
        requireAccess('configmaps', 'watch'),
        path,
        { resourceVersion, fieldSelector, allowWatchBookmarks: 'true', timeoutSeconds: String(watchTimeoutSeconds(random)) },
        (type, object) => onEvent(type as WatchEventType, object ?? {}),
      );
    },
  };
}
