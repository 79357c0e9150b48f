/**
 * Every Kubernetes API call the integration makes, as (resource, verb). The client code calls
 * the API only through `requireAccess`, and the chart's Role is checked against this list
 * (test/chart), so the Role grants exactly what is used.
 */
export const kubernetesApiAccess = [
  { apiGroup: '', resource: 'events', verbs: ['create', 'patch'] },
  // list and watch with fieldSelector metadata.name=<name>, so the Role can name the ConfigMap (resourceNames).
  { apiGroup: '', resource: 'configmaps', verbs: ['list', 'watch'] },
] as const;

type Access = (typeof kubernetesApiAccess)[number];
export type KubernetesResource = Access['resource'];
export type KubernetesVerb<R extends KubernetesResource> = Extract<Access, { resource: R }>['verbs'][number];

/** Names the call a function makes; the type allows only listed pairs. */
export function requireAccess<R extends KubernetesResource>(resource: R, verb: KubernetesVerb<R>): `${R}/${KubernetesVerb<R>}` {
  return `${resource}/${verb}`;
}
