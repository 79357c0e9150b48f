import type { KubernetesDiscoverySource } from '../config';
import type { FleetDialect, FleetNode } from '../types';

/** What the mapping reads of a Service or Pod (core/v1); anything else in the object is ignored. */
export interface KubernetesObject {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string> | null;
    deletionTimestamp?: string | null;
  };
  spec?: {
    // Service
    clusterIP?: string | null;
    ports?: Array<{ name?: string | null; port?: number }> | null;
    // Pod
    containers?: Array<{ name?: string; ports?: Array<{ name?: string | null; containerPort?: number }> | null }> | null;
  };
  status?: { podIP?: string | null; phase?: string | null };
}

/**
 * Why an object is not a node: `waiting` (a Pod without an IP yet: it will be one), `ended` (a
 * terminating or finished Pod: it was one), `unusable` (no such port, a headless Service asked for
 * its clusterIP, a name another node holds: the configuration or the object needs a change).
 */
export type NotANode = { kind: 'waiting' | 'ended' | 'unusable'; reason: string };

export type MappedObject = { node: FleetNode } | NotANode;

/** `<object name>.<namespace>`: the name a discovered node has in the fleet (README, "Fleet"). */
export function discoveredName(object: KubernetesObject): string | null {
  const name = object.metadata?.name;
  const namespace = object.metadata?.namespace;
  return name && namespace ? `${name}.${namespace}` : null;
}

function host(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

function dialectOf(source: KubernetesDiscoverySource, labels: Record<string, string>): FleetDialect {
  if (source.dialectLabel === null) return source.dialect;
  const value = labels[source.dialectLabel];
  return value === 'peer' || value === 'orderer' ? value : source.dialect;
}

function servicePort(source: KubernetesDiscoverySource, object: KubernetesObject): number | NotANode {
  const ports = object.spec?.ports ?? [];
  if (typeof source.port === 'number') {
    // A Service carries traffic only on the ports it declares.
    if (ports.some((port) => port.port === source.port)) return source.port;
    return {
      kind: 'unusable',
      reason: `the Service has no port ${source.port} (spec.ports: ${describePorts(ports.map((p) => ({ name: p.name, port: p.port })))})`,
    };
  }
  const found = ports.find((port) => port.name === source.port);
  if (found?.port !== undefined) return found.port;
  return {
    kind: 'unusable',
    reason: `the Service has no port named "${source.port}" (spec.ports: ${describePorts(ports.map((p) => ({ name: p.name, port: p.port })))})`,
  };
}

function podPort(source: KubernetesDiscoverySource, object: KubernetesObject): number | NotANode {
  // Container ports are informational in Kubernetes (a process may listen on a port it does not
  // declare), so a number is taken as given; a name must be declared to mean anything.
  if (typeof source.port === 'number') return source.port;
  const ports = (object.spec?.containers ?? []).flatMap((container) => container.ports ?? []);
  const found = ports.find((port) => port.name === source.port);
  if (found?.containerPort !== undefined) return found.containerPort;
  return {
    kind: 'unusable',
    reason: `no container of the Pod has a port named "${source.port}" (ports: ${describePorts(ports.map((p) => ({ name: p.name, port: p.containerPort })))})`,
  };
}

function describePorts(ports: ReadonlyArray<{ name?: string | null; port?: number }>): string {
  if (ports.length === 0) return 'none';
  return ports.map((port) => (port.name ? `${port.name}=${port.port ?? '?'}` : String(port.port ?? '?'))).join(', ');
}

/**
 * Pure: the fleet node a Service or Pod of this source stands for, or why it is none (the rules
 * of README "Fleet", "What a node is, and how it is found"). `staticNames`: the configuration's
 * nodes, whose names a discovered node cannot take.
 */
export function nodeFromObject(source: KubernetesDiscoverySource, object: KubernetesObject, staticNames: ReadonlySet<string> = new Set()): MappedObject {
  const name = discoveredName(object);
  if (name === null) return { kind: 'unusable', reason: 'the object has no metadata.name or metadata.namespace' };
  const objectName = object.metadata?.name as string;
  const namespace = object.metadata?.namespace as string;
  const labels = { ...(object.metadata?.labels ?? {}) };
  let address: string;
  let port: number | NotANode;
  if (source.kind === 'Pod') {
    if (object.metadata?.deletionTimestamp) return { kind: 'ended', reason: 'the Pod is terminating (deletionTimestamp is set)' };
    const phase = object.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return { kind: 'ended', reason: `the Pod has ended (phase ${phase})` };
    const ip = object.status?.podIP;
    if (!ip) return { kind: 'waiting', reason: 'the Pod has no IP yet (status.podIP)' };
    address = host(ip);
    port = podPort(source, object);
  } else {
    port = servicePort(source, object);
    if (source.address === 'clusterIP') {
      const clusterIP = object.spec?.clusterIP;
      if (!clusterIP || clusterIP === 'None') {
        return {
          kind: 'unusable',
          reason: 'the Service is headless (spec.clusterIP None), so it has no clusterIP to reach it at: use address: dns, or select the Pods (kind: Pod)',
        };
      }
      address = host(clusterIP);
    } else {
      address = `${objectName}.${namespace}.svc`;
    }
  }
  if (typeof port !== 'number') return port;
  if (staticNames.has(name)) return { kind: 'unusable', reason: `its name ${name} is a node of the configuration (nodes); the configured node is kept` };
  const tlsServerName = source.tlsServerName?.replaceAll('{name}', objectName).replaceAll('{namespace}', namespace);
  const node: FleetNode = {
    name,
    url: `${source.scheme}://${address}:${port}`,
    dialect: dialectOf(source, labels),
    group: source.group,
    labels,
    ...(tlsServerName !== undefined ? { tlsServerName } : {}),
  };
  return { node };
}
