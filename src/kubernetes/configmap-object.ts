import { requireAccess } from './access';
import { KubernetesApiError } from './api-error';
import type { KubernetesTransport } from './transport';

/** A core/v1 ConfigMap as read and written whole (get, create, update). */
export interface ConfigMapObject {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: {
    name: string;
    namespace: string;
    /** Set by the server; an update carries the one it read (optimistic concurrency: 409 Conflict when it moved). */
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [field: string]: unknown;
  };
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  [field: string]: unknown;
}

/**
 * get, create and update of one named ConfigMap. Errors are KubernetesApiError with the HTTP
 * status: 404 (NotFound) from update when it was deleted, 409 from create (AlreadyExists) and
 * from update (Conflict: the resourceVersion is not the current one any more).
 */
export interface ConfigMapObjectApi {
  readonly namespace: string;
  readonly name: string;
  /** The ConfigMap, or null when there is none (404). */
  get(): Promise<ConfigMapObject | null>;
  create(object: ConfigMapObject): Promise<ConfigMapObject>;
  /** PUT with `metadata.resourceVersion`: replaces the whole object if nobody changed it since. */
  update(object: ConfigMapObject): Promise<ConfigMapObject>;
}

function asConfigMap(answer: unknown, what: string): ConfigMapObject {
  const object = answer as Partial<ConfigMapObject> | null;
  if (typeof object !== 'object' || object === null || object.kind !== 'ConfigMap' || typeof object.metadata?.name !== 'string') {
    throw new KubernetesApiError(`${what}: the answer is not a ConfigMap`);
  }
  return object as ConfigMapObject;
}

export function createConfigMapObjectApi(transport: KubernetesTransport, namespace: string, name: string): ConfigMapObjectApi {
  const collection = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`;
  const object = `${collection}/${encodeURIComponent(name)}`;
  const body = (configMap: ConfigMapObject): ConfigMapObject => ({ ...configMap, metadata: { ...configMap.metadata, name, namespace } });
  return {
    namespace,
    name,
    async get() {
      try {
        return asConfigMap(await transport.request(requireAccess('configmaps', 'get'), object), `GET ${object}`);
      } catch (error) {
        if (error instanceof KubernetesApiError && error.status === 404) return null;
        throw error;
      }
    },
    async create(configMap) {
      return asConfigMap(await transport.request(requireAccess('configmaps', 'create'), collection, { body: body(configMap) }), `POST ${collection}`);
    },
    async update(configMap) {
      return asConfigMap(await transport.request(requireAccess('configmaps', 'update'), object, { body: body(configMap) }), `PUT ${object}`);
    },
  };
}
