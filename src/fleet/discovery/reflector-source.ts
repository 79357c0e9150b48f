import type { KubernetesConnection } from '../../kubernetes/connection';
import { createListWatchApi } from '../../kubernetes/list-watch-api';
import { Reflector, type ObjectWithMetadata } from '../../kubernetes/reflector';
import type { Logger } from '../../logging/types';
import type { SourceWatchFactory } from './kubernetes';

/**
 * Each discovery source as a Reflector of src/kubernetes (list, watch from the list's
 * resourceVersion, re-list after a 410 or a restart of the API server, backoff on failures, one
 * warning per outage): loaded only when the fleet configuration has discovery sources.
 */
export function reflectorWatchFactory(connection: KubernetesConnection, logger: Logger): SourceWatchFactory {
  return (spec, handler) =>
    new Reflector<ObjectWithMetadata>({
      api: createListWatchApi<ObjectWithMetadata>(connection.transport, {
        resource: spec.resource,
        namespace: spec.namespace ?? '*',
        labelSelector: spec.labelSelector,
      }),
      handler: { replace: (items) => handler.replace(items), upsert: (object) => handler.upsert(object), remove: (object) => handler.remove(object) },
      what: spec.source,
      logger,
    });
}
