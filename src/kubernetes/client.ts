import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { KubernetesSetupError, messageOf } from '../errors';
import { requireAccess } from './access';
import { KubernetesApiError } from './api-error';
import type { ConfigMapApi, ConfigMapLike } from './logspec-configmap';
import type { ListWatchApi, WatchEventType } from './reflector';
import type { KubernetesTransport } from './transport';
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

/** How long the server may keep a watch open: random in [5, 10) minutes, as client-go's reflector asks. */
function watchTimeoutSeconds(random: () => number): number {
  return Math.floor(300 * (1 + random()));
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

/** A collection the reflector can follow: which resource, where (a namespace, or '*' for every one), which labels. */
export interface ListWatchTarget {
  resource: 'services' | 'pods';
  /** A namespace, or '*' for every namespace (`/api/v1/<resource>`, which needs a ClusterRole). */
  namespace: string;
  /** A Kubernetes label selector (`app=peer,tier in (a,b)`); '' selects everything. */
  labelSelector: string;
}

/**
 * Objects per list request: a page of Pods (a few KiB each, more with managedFields) stays well
 * under the transport's 3 MiB answer limit, so a large selection is listed, not refused.
 * client-go's pager asks for 500; its objects are not capped by an answer limit.
 */
export const listPageSize = 250;
/** A list that still says "continue" after this many pages is a server fault, not a fleet. */
const maxListPages = 1000;

/**
 * list and watch of Services or Pods by label selector, in one namespace or in all. The list is
 * read in pages (limit/continue, one consistent snapshot); a continue token that expired
 * between two pages is the API server's 410, on which the Reflector lists again from the start.
 */
export function createListWatchApi<T>(transport: KubernetesTransport, target: ListWatchTarget, random: () => number = Math.random): ListWatchApi<T> {
  const { resource, namespace, labelSelector } = target;
  const path = namespace === '*' ? `/api/v1/${resource}` : `/api/v1/namespaces/${encodeURIComponent(namespace)}/${resource}`;
  const selector: Record<string, string> = labelSelector === '' ? {} : { labelSelector };
  return {
    async list() {
      const items: T[] = [];
      let resourceVersion = '';
      let next = '';
      for (let page = 0; page === 0 || next !== ''; page += 1) {
        if (page >= maxListPages) throw new KubernetesApiError(`GET ${path}: still more after ${maxListPages} pages of ${listPageSize}`);
        const query = { ...selector, limit: String(listPageSize), ...(next === '' ? {} : { continue: next }) };
        const list = (await transport.request(requireAccess(resource, 'list'), path, { query })) as {
          metadata?: { resourceVersion?: string; continue?: string };
          items?: T[];
        } | null;
        if (Array.isArray(list?.items)) items.push(...list.items);
        resourceVersion = list?.metadata?.resourceVersion ?? '';
        next = list?.metadata?.continue ?? '';
      }
      return { resourceVersion, items };
    },
    watch(resourceVersion, onEvent) {
      return transport.watch(
        requireAccess(resource, 'watch'),
        path,
        { resourceVersion, ...selector, allowWatchBookmarks: 'true', timeoutSeconds: String(watchTimeoutSeconds(random)) },
        (type, object) => onEvent(type as WatchEventType, (object ?? {}) as T & { code?: number }),
      );
    },
  };
}
