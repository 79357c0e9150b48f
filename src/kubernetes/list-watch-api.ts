import { requireAccess } from './access';
import { KubernetesApiError } from './api-error';
import type { ListWatchApi, WatchEventType } from './reflector';
import type { KubernetesTransport } from './transport-options';

/** How long the server may keep a watch open: random in [5, 10) minutes, as client-go's reflector asks. */
export function watchTimeoutSeconds(random: () => number): number {
  return Math.floor(300 * (1 + random()));
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
