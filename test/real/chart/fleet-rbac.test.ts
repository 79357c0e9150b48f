import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { fleetConfigFrom, type FleetConfig } from '../../../src/fleet/config';
import { checkAccessPath, kubernetesApiAccess, requireAccess, type KubernetesFeature, type KubernetesResource } from '../../../src/kubernetes/access';
import { chartDir, find, kinds, render, renderFailure, renderNotes, validateObjects, type K8sObject, type RenderOptions } from './helm';
import { authorized, requestAttributes } from '../../chart/rbac-authorizer';
import { requireHelm } from '../../support/real-binaries';

/**
 * Fleet mode's Kubernetes API access (issue 19 item 7): discovery lists and watches exactly the
 * kinds its sources use, in exactly their namespaces (a ClusterRole only for namespace '*'); the
 * put-back ConfigMap is get/update by name and create; Events as the node integration grants them.
 * Every grant is compared with src/kubernetes/access.ts, the table every API call names.
 */

// The opt-in suite: without helm every test fails, saying so (test/support/real-binaries.ts).
beforeAll(() => {
  requireHelm();
});

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
type RbacObject = K8sObject & { rules: PolicyRule[] };
type Binding = K8sObject & { roleRef: { apiGroup: string; kind: string; name: string }; subjects: Array<{ kind: string; name: string; namespace: string }> };
type EnvVar = { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } };
type PodSpec = { automountServiceAccountToken?: boolean; serviceAccountName?: string; containers: Array<{ env: EnvVar[] }> };

const ns = 'org1';
const fullname = 'peer0-fabric-ops';
const discoveryName = `${ns}-${fullname}-fleet-discovery`;
const fleetFile = '/etc/fabric-ops/fleet/fleet.yaml';
const fleetValues = path.join(chartDir, 'ci', 'fleet-values.yaml');

/** The worked fleet example (static nodes, groups org1 and org2) with these values over it. */
function fleet(setJson: Record<string, unknown>, options: RenderOptions = {}): RenderOptions {
  return { ...options, setJson: { ...options.setJson, ...setJson }, extra: [...(options.extra ?? []), '-f', fleetValues] };
}

const service = (extra: Record<string, unknown> = {}) => ({
  kind: 'Service',
  selector: 'app.kubernetes.io/component=peer',
  port: 'operations',
  group: 'org1',
  ...extra,
});
const pod = (extra: Record<string, unknown> = {}) => ({ kind: 'Pod', selector: 'app.kubernetes.io/component=orderer', port: 8443, group: 'org2', ...extra });

function grants(rules: PolicyRule[]): string[] {
  return rules
    .flatMap((rule) => rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${group}/${resource}/${verb}`))))
    .sort();
}

/** The table's (apiGroup/resource/verb) for these features, optionally only these resources, each once (two features may list the same). */
function used(features: readonly KubernetesFeature[], resources?: readonly string[]): string[] {
  const listed = kubernetesApiAccess
    .filter((access) => features.includes(access.feature) && (resources === undefined || resources.includes(access.resource)))
    .flatMap((access) => access.verbs.map((verb) => `${access.apiGroup}/${access.resource}/${verb}`));
  return [...new Set(listed)].sort();
}

const rbac = (objects: K8sObject[], kind: 'Role' | 'ClusterRole') => objects.filter((object): object is RbacObject => object.kind === kind);

/** Discovery Roles by namespace: namespace -> grants. */
function discoveryRoles(objects: K8sObject[]): Record<string, string[]> {
  const roles = rbac(objects, 'Role').filter((role) => role.metadata.name === discoveryName);
  return Object.fromEntries(roles.map((role) => [role.metadata.namespace ?? '', grants(role.rules)]));
}

function podSpec(objects: K8sObject[]): PodSpec {
  return (find(objects, 'Deployment') as K8sObject & { spec: { template: { spec: PodSpec } } }).spec.template.spec;
}

function fleetConfig(objects: K8sObject[]): FleetConfig {
  return fleetConfigFrom(parse(find(objects, 'ConfigMap', `${fullname}-fleet`).data?.['fleet.yaml'] ?? ''), fleetFile);
}

function expectValid(objects: K8sObject[]): void {
  expect(validateObjects(objects).filter((result) => result.errors.length > 0)).toEqual([]);
}

/** Each binding named like its role, of the role's kind, for the release's ServiceAccount in the release's namespace. */
function expectBound(objects: K8sObject[], role: K8sObject): void {
  const bindingKind = role.kind === 'Role' ? 'RoleBinding' : 'ClusterRoleBinding';
  const binding = objects.find(
    (object) => object.kind === bindingKind && object.metadata.name === role.metadata.name && object.metadata.namespace === role.metadata.namespace,
  ) as Binding | undefined;
  expect(binding?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: role.kind, name: role.metadata.name });
  expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: find(objects, 'ServiceAccount').metadata.name, namespace: ns }]);
}

describe('chart: fleet discovery RBAC', () => {
  test('Services in the release namespace: one Role there with list and watch on services only; the pod gets the token and the downward API', () => {
    const { objects } = render(fleet({ 'fleet.nodes': [], 'fleet.discovery.kubernetes': [service()] }));
    expectValid(objects);
    expect(discoveryRoles(objects)).toEqual({ [ns]: used(['fleetDiscovery'], ['services']) });
    expect(rbac(objects, 'ClusterRole')).toEqual([]);
    expect(objects.filter((object) => object.kind === 'ClusterRoleBinding')).toEqual([]);
    for (const role of rbac(objects, 'Role')) expectBound(objects, role);

    const spec = podSpec(objects);
    expect(spec.automountServiceAccountToken).toBe(true);
    expect(spec.serviceAccountName).toBe(fullname);
    const env = new Map((spec.containers[0]?.env ?? []).map((variable) => [variable.name, variable.valueFrom?.fieldRef?.fieldPath]));
    expect([env.get('POD_NAME'), env.get('POD_NAMESPACE'), env.get('POD_UID')]).toEqual(['metadata.name', 'metadata.namespace', 'metadata.uid']);

    // The fleet file, read by the service's own schema: the source as given, the namespace the release's.
    const config = fleetConfig(objects);
    expect(config.nodes).toEqual([]);
    expect(config.discovery.kubernetes).toEqual([
      {
        kind: 'Service',
        namespace: ns,
        selector: 'app.kubernetes.io/component=peer',
        port: 'operations',
        group: 'org1',
        dialect: 'unknown',
        dialectLabel: null,
        scheme: 'https',
        address: 'dns',
        tlsServerName: null,
      },
    ]);
  });

  test('several namespaces and kinds: a Role in each namespace with exactly the kinds used there', () => {
    const { objects } = render(
      fleet({
        'fleet.discovery.kubernetes': [
          service(),
          pod({ namespace: 'org2' }),
          service({ namespace: 'org2', port: 9443, address: 'clusterIP' }),
          pod({ namespace: 'org3', dialectLabel: 'fabric/dialect', scheme: 'http' }),
          pod({ namespace: 'org3', selector: 'role=peer' }),
        ],
      }),
    );
    expectValid(objects);
    expect(discoveryRoles(objects)).toEqual({
      org1: used(['fleetDiscovery'], ['services']),
      org2: used(['fleetDiscovery'], ['pods', 'services']),
      org3: used(['fleetDiscovery'], ['pods']),
    });
    expect(rbac(objects, 'ClusterRole')).toEqual([]);
    for (const role of rbac(objects, 'Role')) expectBound(objects, role);
    const config = fleetConfig(objects);
    expect(config.discovery.kubernetes.map((source) => [source.kind, source.namespace, source.port, source.address])).toEqual([
      ['Service', 'org1', 'operations', 'dns'],
      ['Pod', 'org2', 8443, null],
      ['Service', 'org2', 9443, 'clusterIP'],
      ['Pod', 'org3', 8443, null],
      ['Pod', 'org3', 8443, null],
    ]);
    expect(config.discovery.kubernetes[3]).toMatchObject({ dialectLabel: 'fabric/dialect', scheme: 'http' });
    expect(config.nodes.map((node) => node.name)).toEqual(['peer0.org1', 'orderer0.org1', 'peer0.org2']);
  });

  test("namespace '*': a ClusterRole and ClusterRoleBinding for its kinds; a namespace's Role only for what the ClusterRole lacks", () => {
    const { objects } = render(
      fleet({ 'fleet.discovery.kubernetes': [service({ namespace: '*' }), service({ namespace: 'org2' }), pod({ namespace: 'org2' })] }),
    );
    expectValid(objects);
    const clusterRole = find(objects, 'ClusterRole', discoveryName) as RbacObject;
    expect(clusterRole.metadata.namespace).toBeUndefined();
    expect(grants(clusterRole.rules)).toEqual(used(['fleetDiscovery'], ['services']));
    expectBound(objects, clusterRole);
    expect(discoveryRoles(objects)).toEqual({ org2: used(['fleetDiscovery'], ['pods']) });
    expect(fleetConfig(objects).discovery.kubernetes[0]?.namespace).toBe('*');

    const both = render(fleet({ 'fleet.discovery.kubernetes': [service({ namespace: '*' }), pod({ namespace: '*' }), pod()] })).objects;
    expectValid(both);
    expect(grants((find(both, 'ClusterRole') as RbacObject).rules)).toEqual(used(['fleetDiscovery']));
    expect(discoveryRoles(both)).toEqual({});
  });

  test('every grant of every Role and ClusterRole, together, is the whole table when every feature is on', () => {
    const { objects } = render(
      fleet(
        { 'fleet.discovery.kubernetes': [service({ namespace: '*' }), pod()] },
        { set: { 'kubernetes.events.enabled': true, 'kubernetes.logspecConfigMap.enabled': true } },
      ),
    );
    expectValid(objects);
    const all = [...rbac(objects, 'Role'), ...rbac(objects, 'ClusterRole')].flatMap((role) => grants(role.rules));
    expect([...new Set(all)].sort()).toEqual(used(['events', 'logspecConfigMap', 'fleetDiscovery', 'fleetState']));
  });
});

describe('chart: the fleet put-back ConfigMap and Events', () => {
  test('on by default with discovery: get, update, list and watch on that ConfigMap by name, create without a name, in the release namespace', () => {
    const { objects } = render(fleet({ 'fleet.discovery.kubernetes': [service()] }));
    const role = find(objects, 'Role', fullname) as RbacObject;
    expect(role.metadata.namespace).toBe(ns);
    expect(grants(role.rules)).toEqual(used(['fleetState']));
    const named = role.rules.filter((rule) => rule.resourceNames !== undefined);
    expect(named).toEqual([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [`${fullname}-fleet-state`], verbs: ['get', 'update', 'list', 'watch'] },
    ]);
    expect(role.rules.filter((rule) => rule.resourceNames === undefined)).toEqual([{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }]);
    expectBound(objects, role);
    const config = fleetConfig(objects);
    expect(config.stateConfigMap).toBe(`${fullname}-fleet-state`);
    expect(config.stateDirectory).toBe('/var/lib/fabric-ops/fleet/state');
    // The service creates it (a chart-owned one would be rewritten by every upgrade, losing put-backs).
    expect(objects.filter((object) => object.kind === 'ConfigMap' && object.metadata.name === `${fullname}-fleet-state`)).toEqual([]);
  });

  test('a name of its own; off with discovery: no configmaps rule, no stateConfigMap in the file', () => {
    const named = render(fleet({ 'fleet.discovery.kubernetes': [service()], 'fleet.stateConfigMap': { enabled: true, name: 'org1-putbacks' } })).objects;
    expect((find(named, 'Role', fullname) as RbacObject).rules.find((rule) => rule.resourceNames)?.resourceNames).toEqual(['org1-putbacks']);
    expect(fleetConfig(named).stateConfigMap).toBe('org1-putbacks');

    const off = render(fleet({ 'fleet.discovery.kubernetes': [service()], 'fleet.stateConfigMap': { enabled: false } })).objects;
    expect(kinds(off).filter((kind) => kind.startsWith('Role/'))).toEqual([`Role/${discoveryName}`]);
    expect(fleetConfig(off).stateConfigMap).toBeNull();
    expect(podSpec(off).automountServiceAccountToken).toBe(true);
  });

  test('static nodes with the ConfigMap asked for: the ServiceAccount, the token and the fleetState Role, no discovery Role', () => {
    const { objects } = render(fleet({ 'fleet.stateConfigMap': { enabled: true } }));
    expectValid(objects);
    expect(grants((find(objects, 'Role', fullname) as RbacObject).rules)).toEqual(used(['fleetState']));
    expect(discoveryRoles(objects)).toEqual({});
    expect(rbac(objects, 'ClusterRole')).toEqual([]);
    expect(podSpec(objects).automountServiceAccountToken).toBe(true);
    expect(fleetConfig(objects).stateConfigMap).toBe(`${fullname}-fleet-state`);
  });

  test('static nodes only (the default): nothing extra, no token, and the fleet file as before (no discovery, no stateConfigMap)', () => {
    const { objects } = render(fleet({}));
    expect(kinds(objects).filter((kind) => kind.includes('Role') || kind.startsWith('ServiceAccount/'))).toEqual([]);
    const spec = podSpec(objects);
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.serviceAccountName).toBeUndefined();
    expect(spec.containers[0]?.env.map((variable) => variable.name)).not.toContain('POD_NAME');
    const file = parse(find(objects, 'ConfigMap', `${fullname}-fleet`).data?.['fleet.yaml'] ?? '') as Record<string, unknown>;
    expect(Object.keys(file)).not.toContain('discovery');
    expect(Object.keys(file)).not.toContain('stateConfigMap');
  });

  test('Events in fleet mode: kubernetes.events.enabled adds events create and patch to the same Role', () => {
    const { objects } = render(fleet({ 'fleet.discovery.kubernetes': [pod()] }, { set: { 'kubernetes.events.enabled': true } }));
    expectValid(objects);
    expect(grants((find(objects, 'Role', fullname) as RbacObject).rules)).toEqual(used(['events', 'fleetState']));
    const staticOnly = render(fleet({}, { set: { 'kubernetes.events.enabled': true } })).objects;
    expect(grants((find(staticOnly, 'Role', fullname) as RbacObject).rules)).toEqual(used(['events']));
  });

  test('fleet mode off: discovery values render nothing', () => {
    const { objects } = render({ setJson: { 'fleet.discovery.kubernetes': [service()], 'fleet.stateConfigMap': { enabled: true } } });
    expect(kinds(objects).filter((kind) => kind.includes('Role') || kind.startsWith('ServiceAccount/'))).toEqual([]);
    expect(podSpec(objects).automountServiceAccountToken).toBe(false);
  });

  test('NOTES.txt names the discovery sources and the ConfigMap', () => {
    // renderNotes takes its own helm arguments, so the example's values go in as --set-json.
    const example = (parse(readFileSync(fleetValues, 'utf8')) as { fleet: Record<string, unknown> }).fleet;
    const notes = renderNotes({
      setJson: { fleet: { ...example, nodes: [], discovery: { kubernetes: [service(), pod({ namespace: 'org2' })] }, persistence: { enabled: false } } },
    });
    expect(notes).toContain('and those\nfound by 2 Kubernetes discovery source(s)');
    expect(notes).toContain(`Pending TTL put-backs are on an emptyDir and in the ConfigMap ${fullname}-fleet-state`);
    expect(notes).toContain(`kubectl delete configmap ${fullname}-fleet-state -n ${ns}`);
  });
});

describe('chart: bad discovery values are refused, naming the value', () => {
  test.each([
    [
      { 'fleet.nodes': [] },
      'fleet.enabled=true needs nodes, but fleet.nodes and fleet.discovery.kubernetes are both empty: list nodes in fleet.nodes (name, url, group), or add a discovery source',
    ],
    [
      { 'fleet.discovery.kubernetes': [service({ group: 'org9' })] },
      'fleet.discovery.kubernetes[0].group=org9 is not a key of fleet.groups (groups: org1, org2)',
    ],
    [{ 'fleet.discovery.kubernetes': [service(), pod({ address: 'dns' })] }, 'fleet.discovery.kubernetes[1].address=dns is for Services'],
    [
      { 'fleet.discovery.kubernetes': [service({ scheme: 'http', tlsServerName: '{name}' })] },
      'fleet.discovery.kubernetes[0].tlsServerName={name} needs scheme https',
    ],
    [{ 'fleet.stateConfigMap': { name: 'putbacks' } }, 'fleet.stateConfigMap.name=putbacks is set but the put-back ConfigMap is off'],
    [
      { 'fleet.stateConfigMap': { enabled: true, name: `${fullname}-fleet` } },
      `fleet.stateConfigMap.name=${fullname}-fleet is a ConfigMap of this release (${fullname}-config, ${fullname}-fleet, ${fullname}-logspec)`,
    ],
    [{ 'fleet.stateConfigMap': { enabled: true, name: `${fullname}-config` } }, `fleet.stateConfigMap.name=${fullname}-config is a ConfigMap of this release`],
  ])('render time: %j', (setJson, message) => {
    expect(renderFailure(fleet(setJson))).toContain(message);
  });

  test('discovery with serviceAccount.create=false and no name: refused (nothing to bind the Roles to)', () => {
    expect(renderFailure(fleet({ 'fleet.discovery.kubernetes': [service()] }, { set: { 'serviceAccount.create': false } }))).toContain(
      'fleet.discovery.kubernetes / fleet.stateConfigMap need a ServiceAccount',
    );
    const existing = render(
      fleet({ 'fleet.discovery.kubernetes': [service({ namespace: '*' })] }, { set: { 'serviceAccount.create': false, 'serviceAccount.name': 'ops' } }),
    ).objects;
    expect(kinds(existing)).not.toContain('ServiceAccount/ops');
    const binding = find(existing, 'ClusterRoleBinding') as Binding;
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'ops', namespace: ns }]);
  });
});

/**
 * The calls as the fleet makes them (the contracts in src/kubernetes/access.ts and the fleet's
 * README: list+watch by label selector per source, the put-back ConfigMap by name, Events), each
 * checked against the table, then put to an RBAC authorizer over the rendered objects; and calls
 * just beside them, which must be refused.
 */
describe('chart: the rendered RBAC authorizes the fleet’s calls, and nothing beside them', () => {
  type Call = [method: string, path: string];
  const methodOf = { list: 'GET', watch: 'GET', get: 'GET', create: 'POST', update: 'PUT', patch: 'PATCH' } as const;
  function call(resource: KubernetesResource, verb: keyof typeof methodOf, target: string): Call {
    // The call fits the table (the transport refuses any other), so the chart is checked against real call shapes.
    checkAccessPath(requireAccess(resource, verb as never), new URL(target, 'https://x.invalid').pathname);
    return [methodOf[verb], target];
  }
  const allowed = (objects: K8sObject[], [method, target]: Call) => authorized(objects, fullname, ns, requestAttributes(method, target));
  const selector = `labelSelector=${encodeURIComponent('app.kubernetes.io/component=peer')}`;
  const state = `${fullname}-fleet-state`;

  test('sources in org1 (Services) and org2 (Pods), the put-back ConfigMap and Events', () => {
    const { objects } = render(
      fleet({ 'fleet.discovery.kubernetes': [service(), pod({ namespace: 'org2' })] }, { set: { 'kubernetes.events.enabled': true } }),
    );
    const granted: Call[] = [
      call('services', 'list', `/api/v1/namespaces/org1/services?${selector}`),
      call('services', 'watch', `/api/v1/namespaces/org1/services?${selector}&watch=true&resourceVersion=42&allowWatchBookmarks=true`),
      call('pods', 'list', `/api/v1/namespaces/org2/pods?${selector}`),
      call('pods', 'watch', `/api/v1/namespaces/org2/pods?${selector}&watch=true&resourceVersion=42`),
      call('configmaps', 'get', `/api/v1/namespaces/org1/configmaps/${state}`),
      call('configmaps', 'update', `/api/v1/namespaces/org1/configmaps/${state}`),
      call('configmaps', 'list', `/api/v1/namespaces/org1/configmaps?fieldSelector=${encodeURIComponent(`metadata.name=${state}`)}`),
      call(
        'configmaps',
        'watch',
        `/api/v1/namespaces/org1/configmaps?fieldSelector=${encodeURIComponent(`metadata.name=${state}`)}&watch=true&resourceVersion=42`,
      ),
      call('configmaps', 'create', '/api/v1/namespaces/org1/configmaps'),
      call('events', 'create', '/api/v1/namespaces/org1/events'),
      call('events', 'patch', '/api/v1/namespaces/org1/events/peer0-fabric-ops-7d9.17a'),
    ];
    expect(granted.filter((c) => !allowed(objects, c))).toEqual([]);
    const refused: Call[] = [
      ['GET', `/api/v1/namespaces/org1/pods?${selector}`], // no Pod source in org1
      ['GET', `/api/v1/namespaces/org2/services?${selector}`], // no Service source in org2
      ['GET', `/api/v1/namespaces/org3/services?${selector}`], // no source in org3
      ['GET', `/api/v1/services?${selector}&watch=true`], // no '*' source
      ['GET', '/api/v1/namespaces/org1/services/peer0'], // get is not in the table
      ['GET', '/api/v1/namespaces/org1/configmaps/peer0-fabric-ops-config'], // another ConfigMap
      ['PUT', '/api/v1/namespaces/org1/configmaps/peer0-fabric-ops-fleet'], // the fleet configuration itself
      ['GET', '/api/v1/namespaces/org1/configmaps'], // listing ConfigMaps
      ['GET', '/api/v1/namespaces/org1/configmaps?fieldSelector=metadata.name%3Dpeer0-fabric-ops-config&watch=true'], // watching another
      ['POST', '/api/v1/namespaces/org2/configmaps'], // create elsewhere
      ['DELETE', `/api/v1/namespaces/org1/configmaps/${state}`],
      ['GET', '/api/v1/namespaces/org1/secrets/org1-ops-client'],
      ['POST', '/api/v1/namespaces/org2/events'],
    ];
    expect(refused.filter((c) => allowed(objects, c))).toEqual([]);
  });

  test("a '*' source: its kind in every namespace and cluster-wide, nothing else", () => {
    const { objects } = render(fleet({ 'fleet.discovery.kubernetes': [service({ namespace: '*' })], 'fleet.stateConfigMap': { enabled: false } }));
    const granted: Call[] = [
      call('services', 'list', `/api/v1/services?${selector}`),
      call('services', 'watch', `/api/v1/services?${selector}&watch=true&resourceVersion=7`),
      call('services', 'watch', `/api/v1/namespaces/org7/services?${selector}&watch=true`),
    ];
    expect(granted.filter((c) => !allowed(objects, c))).toEqual([]);
    const refused: Call[] = [
      ['GET', `/api/v1/pods?${selector}`],
      ['GET', `/api/v1/namespaces/org1/pods?${selector}`],
      ['POST', '/api/v1/namespaces/org1/configmaps'],
      ['GET', `/api/v1/namespaces/org1/configmaps/${state}`],
      ['POST', '/api/v1/namespaces/org1/events'],
    ];
    expect(refused.filter((c) => allowed(objects, c))).toEqual([]);
  });

  test('static nodes only: every fleet call is refused (no binding at all)', () => {
    const { objects } = render(fleet({}));
    expect(allowed(objects, ['GET', `/api/v1/namespaces/org1/services?${selector}`])).toBe(false);
    expect(allowed(objects, ['POST', '/api/v1/namespaces/org1/configmaps'])).toBe(false);
  });
});

describe('chart: fleet writers', () => {
  test('a subject, a subject pinned to its issuer, and a fingerprint render into a fleet file the service accepts', () => {
    const fingerprint = 'ab'.repeat(32);
    const writers = ['O=org1,CN=operator', { subject: 'O=org1,CN=admin', issuer: 'O=org1,CN=ca.org1' }, { fingerprint }];
    const { objects } = render(fleet({ 'fleet.writers': writers }));
    expect(fleetConfig(objects).writers).toEqual([
      { subject: 'O=org1,CN=operator', issuer: null, fingerprint256: null },
      { subject: 'O=org1,CN=admin', issuer: 'O=org1,CN=ca.org1', fingerprint256: null },
      { subject: null, issuer: null, fingerprint256: (fingerprint.toUpperCase().match(/../g) as string[]).join(':') },
    ]);
  });
});
