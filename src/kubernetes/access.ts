import { FabricOpsError } from '../errors';

/**
 * Every Kubernetes API call the integration makes, as (resource, verb). The transport makes no
 * call without an entry from `requireAccess` (it takes the HTTP method from the entry's verb and
 * refuses a path of another resource); the chart's Role is derived from this list (checked by test/real/chart, with helm)
 * and the calls the fake API server receives are checked against it (test/integration), so the
 * Role grants exactly what is used.
 */
export const kubernetesApiAccess = [
  // The node's own integration (config.kubernetes): Events about this pod, and its logspec ConfigMap.
  { feature: 'events', apiGroup: '', resource: 'events', verbs: ['create', 'patch'] },
  // list and watch with fieldSelector metadata.name=<name>, so the Role can name the ConfigMap (resourceNames).
  { feature: 'logspecConfigMap', apiGroup: '', resource: 'configmaps', verbs: ['list', 'watch'] },
  // Fleet mode (src/fleet): nodes discovered from Services or Pods (list and watch by label selector) ...
  { feature: 'fleetDiscovery', apiGroup: '', resource: 'services', verbs: ['list', 'watch'] },
  { feature: 'fleetDiscovery', apiGroup: '', resource: 'pods', verbs: ['list', 'watch'] },
  // ... and the pending put-backs kept in one named ConfigMap: get and update by name (create cannot be
  // named), and list and watch with fieldSelector metadata.name=<name> (the fleet watches it, to write
  // the put-backs again when someone deletes it), so the Role can name it (resourceNames).
  { feature: 'fleetState', apiGroup: '', resource: 'configmaps', verbs: ['get', 'create', 'update', 'list', 'watch'] },
] as const;

/** Which part of fabric-ops makes a call: the chart grants each part's entries only when that part is on. */
export type KubernetesFeature = (typeof kubernetesApiAccess)[number]['feature'];

/** A call that does not fit the table (a programming error: the chart's Role would refuse it). */
export class KubernetesAccessError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_KUBERNETES_ACCESS';
}

type Access = (typeof kubernetesApiAccess)[number];
export type KubernetesResource = Access['resource'];
export type KubernetesVerb<R extends KubernetesResource> = Extract<Access, { resource: R }>['verbs'][number];
type AnyVerb = Access['verbs'][number];

/** The HTTP method of each verb, as kube-apiserver maps requests to RBAC verbs (watch: GET with ?watch=true). */
const methodOfVerb = { create: 'POST', patch: 'PATCH', get: 'GET', update: 'PUT', list: 'GET', watch: 'GET' } as const satisfies Record<AnyVerb, string>;

/** One (resource, verb) of the table, as the transport takes it. */
export interface ApiAccess {
  readonly resource: KubernetesResource;
  readonly verb: AnyVerb;
  readonly method: (typeof methodOfVerb)[AnyVerb];
}

/** The entry for a call; the type allows only listed pairs, and an unlisted one (a cast) throws. */
export function requireAccess<R extends KubernetesResource>(resource: R, verb: KubernetesVerb<R>): ApiAccess {
  const entry = kubernetesApiAccess.find((candidate) => candidate.resource === resource && (candidate.verbs as readonly string[]).includes(verb));
  if (!entry) {
    throw new KubernetesAccessError(
      `${String(verb)} ${String(resource)} is not in kubernetesApiAccess (src/kubernetes/access.ts): the chart's Role would not grant it`,
    );
  }
  return { resource, verb, method: methodOfVerb[verb] };
}

/** Throws unless `path` is the collection of the entry's resource (or, for get, update and patch, one object in it). */
export function checkAccessPath(access: ApiAccess, path: string): void {
  const collection = new RegExp(`/${access.resource}$`);
  const object = new RegExp(`/${access.resource}/[^/]+$`);
  const fits = access.verb === 'patch' || access.verb === 'get' || access.verb === 'update' ? object.test(path) : collection.test(path);
  if (!fits) throw new KubernetesAccessError(`${access.verb} ${access.resource} does not fit the path ${path}`);
}
