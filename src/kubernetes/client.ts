import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { KubernetesSetupError } from '../errors';
import { requireAccess } from './access';
import type { ConfigMapApi, ConfigMapLike, WatchConnection, WatchEventType } from './logspec-configmap';
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
    throw new KubernetesSetupError(`cannot load Kubernetes credentials: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!config.getCurrentCluster()) throw new KubernetesSetupError('cannot load Kubernetes credentials: the kubeconfig has no current cluster');
  return config;
}

export function createEventSink(k8s: ClientNode, config: K8s.KubeConfig): EventSink {
  const core = config.makeApiClient(k8s.CoreV1Api);
  const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  return {
    async create(event: CoreEventBody): Promise<void> {
      requireAccess('events', 'create');
      // client-node's models hold times as Date (it serialises them back to RFC 3339).
      const body = { ...event, firstTimestamp: new Date(event.firstTimestamp), lastTimestamp: new Date(event.lastTimestamp) };
      await core.createNamespacedEvent({ namespace: event.metadata.namespace, body });
    },
    async patch(namespace: string, name: string, patch: EventPatch): Promise<void> {
      requireAccess('events', 'patch');
      await core.patchNamespacedEvent({ namespace, name, body: patch }, mergePatch);
    },
  };
}

export function createConfigMapApi(k8s: ClientNode, config: K8s.KubeConfig, namespace: string, name: string): ConfigMapApi {
  const core = config.makeApiClient(k8s.CoreV1Api);
  const watch = new k8s.Watch(config);
  const fieldSelector = `metadata.name=${name}`;
  return {
    async list() {
      requireAccess('configmaps', 'list');
      const list = await core.listNamespacedConfigMap({ namespace, fieldSelector });
      return { resourceVersion: list.metadata?.resourceVersion ?? '', items: list.items };
    },
    async watch(resourceVersion, onEvent): Promise<WatchConnection> {
      requireAccess('configmaps', 'watch');
      let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
      const ended = new Promise<void>((resolve, reject) => {
        settle = { resolve, reject };
      });
      const controller = await watch.watch(
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`,
        { resourceVersion, fieldSelector, allowWatchBookmarks: true },
        (type: string, object: ConfigMapLike & { code?: number }) => onEvent(type as WatchEventType, object),
        (error: unknown) => (error ? settle?.reject(error) : settle?.resolve()),
      );
      return { ended, abort: () => controller.abort() };
    },
  };
}
