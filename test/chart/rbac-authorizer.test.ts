import { authorized, requestAttributes, type K8sObject } from './rbac-authorizer';

/**
 * The RBAC double the opt-in chart tests put the rendered Roles to (test/real/chart/), on objects
 * written here, against the rules of Kubernetes' RBAC documentation: a RoleBinding grants only in
 * its own namespace (also when it binds a ClusterRole), a ClusterRoleBinding everywhere; a rule
 * with resourceNames matches only requests that name the object, which a list or watch does with
 * the field selector metadata.name=<name>.
 */

const account = { kind: 'ServiceAccount', name: 'ops', namespace: 'org1' };

const objects: K8sObject[] = [
  {
    kind: 'Role',
    metadata: { name: 'ops', namespace: 'org1' },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['ops-logspec'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ],
  },
  { kind: 'RoleBinding', metadata: { name: 'ops', namespace: 'org1' }, roleRef: { kind: 'Role', name: 'ops' }, subjects: [account] },
  { kind: 'ClusterRole', metadata: { name: 'ops-discovery' }, rules: [{ apiGroups: [''], resources: ['services'], verbs: ['list', 'watch'] }] },
  { kind: 'ClusterRoleBinding', metadata: { name: 'ops-discovery' }, roleRef: { kind: 'ClusterRole', name: 'ops-discovery' }, subjects: [account] },
  { kind: 'ClusterRole', metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['*'] }] },
  { kind: 'RoleBinding', metadata: { name: 'pod-reader', namespace: 'org2' }, roleRef: { kind: 'ClusterRole', name: 'pod-reader' }, subjects: [account] },
  // A binding to a Role that does not exist grants nothing.
  { kind: 'RoleBinding', metadata: { name: 'dangling', namespace: 'org1' }, roleRef: { kind: 'Role', name: 'missing' }, subjects: [account] },
];

const may = (method: string, target: string, who = { name: 'ops', namespace: 'org1' }): boolean =>
  authorized(objects, who.name, who.namespace, requestAttributes(method, target));

describe('request attributes, as kube-apiserver derives them', () => {
  test.each([
    ['GET', '/api/v1/namespaces/org1/configmaps/x', { verb: 'get', resource: 'configmaps', namespace: 'org1', name: 'x' }],
    ['GET', '/api/v1/namespaces/org1/configmaps', { verb: 'list', resource: 'configmaps', namespace: 'org1', name: '' }],
    ['GET', '/api/v1/namespaces/org1/configmaps?watch=true', { verb: 'watch', resource: 'configmaps', namespace: 'org1', name: '' }],
    ['GET', '/api/v1/namespaces/org1/configmaps?fieldSelector=metadata.name%3Dx', { verb: 'list', resource: 'configmaps', namespace: 'org1', name: 'x' }],
    [
      'GET',
      '/api/v1/namespaces/org1/configmaps?fieldSelector=metadata.name%3D%3Dx&watch=1',
      { verb: 'watch', resource: 'configmaps', namespace: 'org1', name: 'x' },
    ],
    ['GET', '/api/v1/namespaces/org1/configmaps?fieldSelector=metadata.name%3Dx%2Cmetadata.namespace%3Dorg1', { verb: 'list', name: '' }],
    ['GET', '/api/v1/services', { verb: 'list', resource: 'services', namespace: '', name: '' }],
    ['POST', '/api/v1/namespaces/org1/events', { verb: 'create', resource: 'events', namespace: 'org1', name: '' }],
    ['PATCH', '/api/v1/namespaces/org1/events/e1', { verb: 'patch', name: 'e1' }],
    ['PUT', '/api/v1/namespaces/org1/configmaps/x', { verb: 'update', name: 'x' }],
    ['DELETE', '/api/v1/namespaces/org1/configmaps', { verb: 'deletecollection' }],
    ['DELETE', '/api/v1/namespaces/org1/configmaps/x', { verb: 'delete', name: 'x' }],
  ])('%s %s', (method, target, expected) => {
    expect(requestAttributes(method, target)).toMatchObject({ apiGroup: '', ...expected });
  });

  test('only the core API group', () => {
    expect(() => requestAttributes('GET', '/apis/apps/v1/namespaces/org1/deployments')).toThrow(
      'not a core/v1 path: /apis/apps/v1/namespaces/org1/deployments',
    );
  });
});

describe('authorization over Roles, ClusterRoles and their bindings', () => {
  test('resourceNames: list and watch of that name by field selector only; no plain list, no get (not granted), no other name', () => {
    expect(may('GET', '/api/v1/namespaces/org1/configmaps?fieldSelector=metadata.name%3Dops-logspec')).toBe(true);
    expect(may('GET', '/api/v1/namespaces/org1/configmaps?fieldSelector=metadata.name%3Dops-logspec&watch=true')).toBe(true);
    expect(may('GET', '/api/v1/namespaces/org1/configmaps')).toBe(false);
    expect(may('GET', '/api/v1/namespaces/org1/configmaps/ops-logspec')).toBe(false);
    expect(may('GET', '/api/v1/namespaces/org1/configmaps?fieldSelector=metadata.name%3Dother')).toBe(false);
  });

  test('a RoleBinding grants in its own namespace only, also when it binds a ClusterRole', () => {
    expect(may('POST', '/api/v1/namespaces/org1/events')).toBe(true);
    expect(may('POST', '/api/v1/namespaces/org2/events')).toBe(false);
    expect(may('DELETE', '/api/v1/namespaces/org2/pods/p')).toBe(true);
    expect(may('GET', '/api/v1/namespaces/org1/pods')).toBe(false);
    expect(may('GET', '/api/v1/pods')).toBe(false);
  });

  test('a ClusterRoleBinding grants in every namespace and cluster-wide', () => {
    expect(may('GET', '/api/v1/namespaces/org7/services?watch=true')).toBe(true);
    expect(may('GET', '/api/v1/services')).toBe(true);
    expect(may('GET', '/api/v1/namespaces/org7/services/s')).toBe(false);
  });

  test('another account, or the same name in another namespace, gets nothing; a binding to a missing Role grants nothing', () => {
    expect(may('POST', '/api/v1/namespaces/org1/events', { name: 'other', namespace: 'org1' })).toBe(false);
    expect(may('POST', '/api/v1/namespaces/org1/events', { name: 'ops', namespace: 'org2' })).toBe(false);
    expect(may('GET', '/api/v1/services', { name: 'ops', namespace: 'org2' })).toBe(false);
    expect(authorized(objects.slice(6), 'ops', 'org1', requestAttributes('POST', '/api/v1/namespaces/org1/events'))).toBe(false);
  });
});
