import { kubernetesApiAccess, type KubernetesFeature } from '../../../src/kubernetes/access';
import { find, kinds, render, validateObjects, type K8sObject } from './helm';
import { authorized, requestAttributes } from '../../chart/rbac-authorizer';
import { requireHelm } from '../../support/real-binaries';

/**
 * The Kubernetes integration in the chart: nothing (and no token) unless it is on; then a
 * ServiceAccount, a Role granting exactly the (resource, verb) pairs the client code uses
 * (src/kubernetes/access.ts, which every API call names), a RoleBinding, the downward-API
 * environment and the logspec ConfigMap.
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

type EnvVar = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };

function podSpec(objects: K8sObject[]): { automountServiceAccountToken?: boolean; serviceAccountName?: string; containers: Array<{ env: EnvVar[] }> } {
  const deployment = find(objects, 'Deployment') as K8sObject & { spec: { template: { spec: ReturnType<typeof podSpec> } } };
  return deployment.spec.template.spec;
}

function grants(rules: PolicyRule[]): string[] {
  return rules
    .flatMap((rule) => rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${group}/${resource}/${verb}`))))
    .sort();
}

const used = (features: readonly KubernetesFeature[]): string[] =>
  kubernetesApiAccess
    .filter((access) => features.includes(access.feature))
    .flatMap((access) => access.verbs.map((verb) => `${access.apiGroup}/${access.resource}/${verb}`))
    .sort();

describe('chart: Kubernetes integration', () => {
  test('off by default: no ServiceAccount, Role or RoleBinding, and no token mounted', () => {
    const { objects } = render();
    for (const kind of ['ServiceAccount', 'Role', 'RoleBinding']) expect(kinds(objects)).not.toContain(kind);
    const spec = podSpec(objects);
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.serviceAccountName).toBeUndefined();
    expect(spec.containers[0]?.env.map((env) => env.name)).not.toContain('POD_NAME');
    // No empty ConfigMap name either (issue 30: every default pod started with a warning about it).
    expect(spec.containers[0]?.env.map((env) => env.name)).not.toContain('CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME');
  });

  test('the orderer dialect with the ConfigMap off renders no ORDERER_..._LOGSPECCONFIGMAP_NAME', () => {
    const names = podSpec(render({ set: { dialect: 'orderer' } }).objects).containers[0]?.env.map((env) => env.name);
    expect(names).toContain('ORDERER_OPERATIONS_LISTENADDRESS');
    expect(names).not.toContain('ORDERER_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME');
  });

  test('events and the ConfigMap on: the Role grants exactly what the code uses, the ConfigMap by name only', () => {
    const { objects } = render({
      set: { 'kubernetes.events.enabled': true, 'kubernetes.logspecConfigMap.enabled': true, 'kubernetes.logspecConfigMap.initialSpec': 'gossip=warn:info' },
    });
    expect(validateObjects(objects).filter((result) => result.errors.length > 0)).toEqual([]);
    const role = find(objects, 'Role') as K8sObject & { rules: PolicyRule[] };
    expect(grants(role.rules)).toEqual(used(['events', 'logspecConfigMap']));
    const configMap = find(objects, 'ConfigMap', 'peer0-fabric-ops-logspec');
    expect(configMap.data).toEqual({ logspec: 'gossip=warn:info' });
    const configMapRule = role.rules.find((rule) => rule.resources.includes('configmaps'));
    expect(configMapRule?.resourceNames).toEqual(['peer0-fabric-ops-logspec']);
    expect(role.rules.find((rule) => rule.resources.includes('events'))?.resourceNames).toBeUndefined();

    const binding = find(objects, 'RoleBinding') as K8sObject & { roleRef: { kind: string; name: string }; subjects: Array<{ kind: string; name: string }> };
    expect(binding.roleRef).toMatchObject({ kind: 'Role', name: role.metadata.name });
    expect(binding.subjects).toEqual([expect.objectContaining({ kind: 'ServiceAccount', name: find(objects, 'ServiceAccount').metadata.name })]);

    const spec = podSpec(objects);
    expect(spec.automountServiceAccountToken).toBe(true);
    expect(spec.serviceAccountName).toBe(find(objects, 'ServiceAccount').metadata.name);
    const env = new Map((spec.containers[0]?.env ?? []).map((variable) => [variable.name, variable]));
    expect(env.get('POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    expect(env.get('POD_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.namespace');
    expect(env.get('POD_UID')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.uid');
    expect(env.get('CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED')?.value).toBe('true');
    expect(env.get('CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME')?.value).toBe('peer0-fabric-ops-logspec');
  });

  test('only events: no ConfigMap and no configmaps rule; orderer keys for the orderer dialect', () => {
    const { objects } = render({ set: { dialect: 'orderer', 'kubernetes.events.enabled': true } });
    const role = find(objects, 'Role') as K8sObject & { rules: PolicyRule[] };
    expect(grants(role.rules)).toEqual(used(['events']));
    expect(objects.some((object) => object.kind === 'ConfigMap' && object.metadata.name.endsWith('-logspec'))).toBe(false);
    const env = podSpec(objects).containers[0]?.env ?? [];
    expect(env.find((variable) => variable.name === 'ORDERER_OPERATIONS_KUBERNETES_EVENTS_ENABLED')?.value).toBe('true');
  });

  test('the logspec ConfigMap: its list and watch by fieldSelector metadata.name are authorized (resourceNames), a plain list or another name is not', () => {
    const { objects } = render({ set: { 'kubernetes.logspecConfigMap.enabled': true } });
    const may = (method: string, target: string) => authorized(objects, 'peer0-fabric-ops', 'org1', requestAttributes(method, target));
    const mine = 'fieldSelector=metadata.name%3Dpeer0-fabric-ops-logspec';
    expect(may('GET', `/api/v1/namespaces/org1/configmaps?${mine}`)).toBe(true);
    expect(may('GET', `/api/v1/namespaces/org1/configmaps?${mine}&watch=true&resourceVersion=3`)).toBe(true);
    expect(may('GET', '/api/v1/namespaces/org1/configmaps')).toBe(false);
    expect(may('GET', '/api/v1/namespaces/org1/configmaps?fieldSelector=metadata.name%3Dpeer0-fabric-ops-config')).toBe(false);
    expect(may('GET', `/api/v1/namespaces/org2/configmaps?${mine}`)).toBe(false);
    expect(may('GET', '/api/v1/namespaces/org1/configmaps/peer0-fabric-ops-logspec')).toBe(false);
  });

  test('only the ConfigMap: list and watch on it, no events', () => {
    const { objects } = render({ set: { 'kubernetes.logspecConfigMap.enabled': true } });
    const role = find(objects, 'Role') as K8sObject & { rules: PolicyRule[] };
    expect(grants(role.rules)).toEqual(used(['logspecConfigMap']));
  });
});
