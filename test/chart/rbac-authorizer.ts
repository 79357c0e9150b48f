/**
 * Kubernetes RBAC authorization over rendered objects, as kube-apiserver decides it, for the
 * chart tests: does the release's ServiceAccount get this request? Request attributes are derived
 * from method, path and query as the API server's RequestInfoFactory derives them
 * (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go), and rules are matched as
 * pkg/apis/rbac/v1/evaluation_helpers.go matches them (a rule with resourceNames matches only a
 * request that has a name; list and watch get one from fieldSelector metadata.name=<name>).
 * Core API group only ("/api/v1"), the only one fabric-ops calls.
 */

/** A Kubernetes object as the authorizer reads it: Roles, ClusterRoles and their bindings (others are passed over). */
export interface K8sObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

export interface RequestAttributes {
  verb: string;
  apiGroup: string;
  resource: string;
  /** '' for cluster-wide requests (/api/v1/services). */
  namespace: string;
  /** '' for collection requests without a metadata.name field selector. */
  name: string;
}

/** The attributes of `method path?query` (e.g. GET /api/v1/namespaces/org1/configmaps/x). */
export function requestAttributes(method: string, target: string): RequestAttributes {
  const url = new URL(target, 'https://apiserver.invalid');
  const parts = url.pathname.split('/').filter((part) => part !== '');
  if (parts[0] !== 'api' || parts[1] !== 'v1') throw new Error(`not a core/v1 path: ${target}`);
  let rest = parts.slice(2);
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1] ?? '';
    rest = rest.slice(2);
  }
  const resource = rest[0] ?? '';
  let name = rest[1] ?? '';
  const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: name ? 'delete' : 'deletecollection' };
  let verb = verbs[method] ?? (name ? 'get' : watch ? 'watch' : 'list');
  if (method === 'GET' && watch && name) verb = 'watch';
  if ((verb === 'list' || verb === 'watch') && name === '') {
    // RequestInfoFactory: a single metadata.name field selector names the object, so resourceNames can apply.
    const selector = url.searchParams.get('fieldSelector') ?? '';
    // `=` and `==` are the same operator (k8s.io/apimachinery/pkg/fields); `==` is tried first, or `=x` would be the name.
    const match = /^metadata\.name(?:==|=)([^,]+)$/.exec(selector);
    if (match) name = match[1] ?? '';
  }
  return { verb, apiGroup: '', resource, namespace, name };
}

const has = (values: readonly string[] | undefined, value: string): boolean => (values ?? []).includes('*') || (values ?? []).includes(value);

function ruleAllows(rule: PolicyRule, request: RequestAttributes): boolean {
  if (!has(rule.verbs, request.verb) || !has(rule.apiGroups, request.apiGroup) || !has(rule.resources, request.resource)) return false;
  if (rule.resourceNames === undefined || rule.resourceNames.length === 0) return true;
  return request.name !== '' && rule.resourceNames.includes(request.name);
}

/** Whether the ServiceAccount `account` of namespace `accountNamespace` may make `request`, by the rendered Roles and bindings. */
export function authorized(objects: K8sObject[], account: string, accountNamespace: string, request: RequestAttributes): boolean {
  const rulesOf = (kind: string, name: string, namespace: string | undefined): PolicyRule[] =>
    objects
      .filter((object) => object.kind === kind && object.metadata.name === name && (kind === 'ClusterRole' || object.metadata.namespace === namespace))
      .flatMap((object) => (object as K8sObject & { rules?: PolicyRule[] }).rules ?? []);
  const forAccount = (subjects: Subject[] | undefined): boolean =>
    (subjects ?? []).some((subject) => subject.kind === 'ServiceAccount' && subject.name === account && subject.namespace === accountNamespace);
  return objects.some((object) => {
    if (object.kind !== 'RoleBinding' && object.kind !== 'ClusterRoleBinding') return false;
    const binding = object as K8sObject & { roleRef: { kind: string; name: string }; subjects?: Subject[] };
    if (!forAccount(binding.subjects)) return false;
    // A RoleBinding grants only in its own namespace; a ClusterRoleBinding everywhere, cluster-wide requests included.
    if (object.kind === 'RoleBinding' && object.metadata.namespace !== request.namespace) return false;
    const rules = rulesOf(binding.roleRef.kind, binding.roleRef.name, object.metadata.namespace);
    return rules.some((rule) => ruleAllows(rule, request));
  });
}
