import type { KubernetesDiscoverySource } from '../../../src/fleet/config';
import { nodeFromObject, type KubernetesObject } from '../../../src/fleet/discovery/kubernetes-mapping';
import { sourceName } from '../../../src/fleet/discovery/kubernetes';

/** Objects shaped as the API server returns them (core/v1 Service and Pod, the fields that matter). */
const serviceSource: KubernetesDiscoverySource = {
  kind: 'Service',
  namespace: null,
  selector: 'app=peer',
  port: 'operations',
  group: 'org1',
  dialect: 'unknown',
  dialectLabel: null,
  scheme: 'https',
  address: 'dns',
  tlsServerName: null,
};
const podSource: KubernetesDiscoverySource = { ...serviceSource, kind: 'Pod', address: null };

function service(
  overrides: { name?: string; labels?: Record<string, string>; clusterIP?: string; ports?: Array<{ name?: string; port: number }> } = {},
): KubernetesObject {
  return {
    metadata: { name: overrides.name ?? 'peer0-org1', namespace: 'fabric', labels: overrides.labels ?? { app: 'peer', org: 'org1' } },
    spec: {
      clusterIP: overrides.clusterIP ?? '10.96.0.12',
      ports: overrides.ports ?? [
        { name: 'grpc', port: 7051 },
        { name: 'operations', port: 9443 },
      ],
    },
  };
}

function pod(
  overrides: { podIP?: string | null; phase?: string; deletionTimestamp?: string; ports?: Array<{ name?: string; containerPort: number }> } = {},
): KubernetesObject {
  return {
    metadata: {
      name: 'peer0-org1-0',
      namespace: 'fabric',
      labels: { app: 'peer' },
      ...(overrides.deletionTimestamp ? { deletionTimestamp: overrides.deletionTimestamp } : {}),
    },
    spec: {
      containers: [
        { name: 'couchdb', ports: [{ name: 'couch', containerPort: 5984 }] },
        { name: 'peer', ports: overrides.ports ?? [{ name: 'operations', containerPort: 9443 }] },
      ],
    },
    status: { podIP: overrides.podIP === undefined ? '10.244.1.7' : overrides.podIP, phase: overrides.phase ?? 'Running' },
  };
}

describe('Kubernetes discovery: a Service or Pod as a fleet node', () => {
  test('a Service by port name, dns address: <name>.<namespace>, its labels, the source group and dialect', () => {
    expect(nodeFromObject(serviceSource, service())).toEqual({
      node: { name: 'peer0-org1.fabric', url: 'https://peer0-org1.fabric.svc:9443', dialect: 'unknown', group: 'org1', labels: { app: 'peer', org: 'org1' } },
    });
  });

  test('a Service port by number must be one the Service declares', () => {
    expect(nodeFromObject({ ...serviceSource, port: 9443 }, service())).toMatchObject({ node: { url: 'https://peer0-org1.fabric.svc:9443' } });
    expect(nodeFromObject({ ...serviceSource, port: 9444 }, service())).toEqual({
      kind: 'unusable',
      reason: 'the Service has no port 9444 (spec.ports: grpc=7051, operations=9443)',
    });
  });

  test('a Service without the named port is not a node, and says which ports it has', () => {
    expect(nodeFromObject(serviceSource, service({ ports: [{ name: 'grpc', port: 7051 }] }))).toEqual({
      kind: 'unusable',
      reason: 'the Service has no port named "operations" (spec.ports: grpc=7051)',
    });
    expect(nodeFromObject(serviceSource, service({ ports: [] }))).toMatchObject({ kind: 'unusable', reason: expect.stringContaining('spec.ports: none') });
  });

  test('address clusterIP: the URL holds the clusterIP (IPv6 bracketed); http scheme kept', () => {
    expect(nodeFromObject({ ...serviceSource, address: 'clusterIP' }, service())).toMatchObject({ node: { url: 'https://10.96.0.12:9443' } });
    expect(nodeFromObject({ ...serviceSource, address: 'clusterIP', scheme: 'http' }, service({ clusterIP: 'fd00::12' }))).toMatchObject({
      node: { url: 'http://[fd00::12]:9443' },
    });
  });

  test('a headless Service asked for its clusterIP is not a node (the reason says what to use); with dns it is', () => {
    const headless = service({ clusterIP: 'None' });
    expect(nodeFromObject({ ...serviceSource, address: 'clusterIP' }, headless)).toEqual({
      kind: 'unusable',
      reason: expect.stringContaining('headless (spec.clusterIP None)') as string,
    });
    expect(nodeFromObject(serviceSource, headless)).toMatchObject({ node: { url: 'https://peer0-org1.fabric.svc:9443' } });
  });

  test('a Pod: its IP and the container port named so (any container); IPv6 bracketed', () => {
    expect(nodeFromObject(podSource, pod())).toEqual({
      node: { name: 'peer0-org1-0.fabric', url: 'https://10.244.1.7:9443', dialect: 'unknown', group: 'org1', labels: { app: 'peer' } },
    });
    expect(nodeFromObject(podSource, pod({ podIP: 'fd00:10:244::7' }))).toMatchObject({ node: { url: 'https://[fd00:10:244::7]:9443' } });
  });

  test('a Pod port by number is taken as given (container ports are informational); by name it must be declared', () => {
    expect(nodeFromObject({ ...podSource, port: 9999 }, pod({ ports: [] }))).toMatchObject({ node: { url: 'https://10.244.1.7:9999' } });
    expect(nodeFromObject(podSource, pod({ ports: [{ name: 'metrics', containerPort: 9443 }] }))).toEqual({
      kind: 'unusable',
      reason: 'no container of the Pod has a port named "operations" (ports: couch=5984, metrics=9443)',
    });
  });

  test('a Pod without an IP is not a node yet; a terminating or finished Pod is not one any more', () => {
    expect(nodeFromObject(podSource, pod({ podIP: null }))).toEqual({ kind: 'waiting', reason: 'the Pod has no IP yet (status.podIP)' });
    expect(nodeFromObject(podSource, pod({ phase: 'Pending', podIP: '' }))).toMatchObject({ kind: 'waiting' });
    expect(nodeFromObject(podSource, pod({ deletionTimestamp: '2026-11-23T18:00:00Z' }))).toEqual({
      kind: 'ended',
      reason: 'the Pod is terminating (deletionTimestamp is set)',
    });
    expect(nodeFromObject(podSource, pod({ phase: 'Succeeded' }))).toEqual({ kind: 'ended', reason: 'the Pod has ended (phase Succeeded)' });
    expect(nodeFromObject(podSource, pod({ phase: 'Failed' }))).toMatchObject({ kind: 'ended' });
  });

  test('dialectLabel: a label valued peer or orderer sets the dialect; another value or none keeps the source dialect', () => {
    const source = { ...serviceSource, dialect: 'peer' as const, dialectLabel: 'fabric/role' };
    expect(nodeFromObject(source, service({ labels: { 'fabric/role': 'orderer' } }))).toMatchObject({ node: { dialect: 'orderer' } });
    expect(nodeFromObject(source, service({ labels: { 'fabric/role': 'peer' } }))).toMatchObject({ node: { dialect: 'peer' } });
    expect(nodeFromObject(source, service({ labels: { 'fabric/role': 'couchdb' } }))).toMatchObject({ node: { dialect: 'peer' } });
    expect(nodeFromObject(source, service({ labels: {} }))).toMatchObject({ node: { dialect: 'peer' } });
  });

  test('tlsServerName: {name} and {namespace} replaced, every occurrence; absent without a template', () => {
    const source = { ...serviceSource, address: 'clusterIP' as const, tlsServerName: '{name}.{namespace}.svc.cluster.local' };
    expect(nodeFromObject(source, service())).toMatchObject({ node: { url: 'https://10.96.0.12:9443', tlsServerName: 'peer0-org1.fabric.svc.cluster.local' } });
    expect(nodeFromObject({ ...source, tlsServerName: '{name}-{name}.ops' }, service())).toMatchObject({
      node: { tlsServerName: 'peer0-org1-peer0-org1.ops' },
    });
    expect(nodeFromObject(serviceSource, service())).not.toHaveProperty('node.tlsServerName');
  });

  test('a discovered name equal to a static node name is skipped, naming it', () => {
    expect(nodeFromObject(serviceSource, service(), new Set(['peer0-org1.fabric']))).toEqual({
      kind: 'unusable',
      reason: 'its name peer0-org1.fabric is a node of the configuration (nodes); the configured node is kept',
    });
    expect(nodeFromObject(serviceSource, service(), new Set(['peer0-org1']))).toHaveProperty('node');
  });

  test('an object without name or namespace is not a node; labels null is no labels', () => {
    expect(nodeFromObject(serviceSource, { metadata: { name: 'x' }, spec: {} })).toMatchObject({ kind: 'unusable' });
    const object = service();
    object.metadata = { ...object.metadata, labels: null };
    expect(nodeFromObject(serviceSource, object)).toMatchObject({ node: { labels: {} } });
  });

  test('a source is named by its key, kind, selector and namespace (the default one, or every namespace)', () => {
    expect(sourceName(serviceSource, 0, 'fabric')).toBe('discovery.kubernetes[0] (Services app=peer in namespace fabric)');
    expect(sourceName({ ...podSource, namespace: '*' }, 2, 'fabric')).toBe('discovery.kubernetes[2] (Pods app=peer in every namespace)');
  });
});
