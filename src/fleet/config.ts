import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parsePositiveDurationMs } from '../config/values';
import { ConfigError, messageOf } from '../errors';
import { describeFileError } from '../file-errors';
import { fleetDialects, type FleetDialect, type FleetNode } from './types';
import { normaliseFingerprint, type WriterRule } from './writers';

/**
 * The fleet configuration: its own file (`--fleet-config` / FABRIC_OPS_FLEET_CONFIG), its own
 * schema, apart from the node's core.yaml/orderer.yaml. YAML or JSON.
 */

/** The longest TTL: Node's timers hold at most 2^31-1 ms (24.8 days); a week is plenty for an incident. */
export const maxTtlMs = 7 * 24 * 3600 * 1000;

export const fleetConfigEnvironmentVariable = 'FABRIC_OPS_FLEET_CONFIG';

const duration = (fallback: string, allowZero = false) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      if (allowZero && /^0+(ms|s|m|h)?$/.test(text)) return 0;
      const parsed = parsePositiveDurationMs(text);
      if (!parsed.ok) {
        ctx.addIssue({ code: 'custom', message: parsed.problem });
        return z.NEVER;
      }
      return parsed.value;
    });

const nodeName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,252}$/, 'must be 1-253 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit');

const GroupSchema = z
  .object({
    tls: z
      .object({
        certFile: z.string().min(1).optional(),
        keyFile: z.string().min(1).optional(),
        caFiles: z.array(z.string().min(1)).min(1, 'at least one CA file trusted for the nodes of this group'),
      })
      .strict()
      .refine((tls) => (tls.certFile === undefined) === (tls.keyFile === undefined), 'certFile and keyFile go together: give both or neither'),
  })
  .strict();

const NodeSchema = z
  .object({
    name: nodeName,
    url: z.string().transform((text, ctx) => {
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        ctx.addIssue({ code: 'custom', message: `"${text}" is not a URL (e.g. https://10.0.0.5:9443)` });
        return z.NEVER;
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        ctx.addIssue({ code: 'custom', message: `"${text}": the scheme must be https or http` });
        return z.NEVER;
      }
      if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
        ctx.addIssue({ code: 'custom', message: `"${text}": give scheme, host and port only (no path, query or credentials)` });
        return z.NEVER;
      }
      return url.origin;
    }),
    dialect: z.enum(fleetDialects).default('unknown'),
    group: z.string().min(1),
    labels: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$/, 'label keys: A-Z a-z 0-9 . _ / -'), z.string().max(63)).default({}),
  })
  .strict();

/** Port names as Kubernetes allows them (IANA_SVC_NAME): 1-15 of a-z 0-9 -, a letter in it, no leading, trailing or double -. */
const portName = z
  .string()
  .regex(/^(?=.*[a-z])[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$/, 'a port name is 1-15 characters of a-z 0-9 - with at least one letter (IANA_SVC_NAME)')
  .refine((name) => !name.includes('--'), 'a port name has no "--"');

const KubernetesSourceSchema = z
  .object({
    kind: z.enum(['Service', 'Pod']),
    /** Default: the namespace fabric-ops runs in (POD_NAMESPACE, else the kubeconfig context's). '*': every namespace. */
    namespace: z
      .string()
      .regex(/^(\*|[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$/, 'a namespace name (RFC 1123 label) or * for every namespace')
      .optional(),
    selector: z.string().min(1, 'a label selector, e.g. app.kubernetes.io/component=peer'),
    port: z.union([portName, z.number().int().min(1).max(65535)]),
    group: z.string().min(1),
    dialect: z.enum(fleetDialects).default('unknown'),
    dialectLabel: z.string().min(1).optional(),
    scheme: z.enum(['https', 'http']).default('https'),
    /** Services only: dns (<name>.<namespace>.svc, the default) or clusterIP. Pods are always reached at their IP. */
    address: z.enum(['dns', 'clusterIP']).optional(),
    /** TLS server name to verify, `{name}` and `{namespace}` replaced; default: the host of the URL. */
    tlsServerName: z.string().min(1).optional(),
  })
  .strict();

const FleetFileSchema = z
  .object({
    stateDirectory: z.string().min(1).optional(),
    /** A ConfigMap in fabric-ops' namespace that also holds the pending put-backs (survives a pod's replacement). */
    stateConfigMap: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'a ConfigMap name (RFC 1123 subdomain)')
      .optional(),
    discovery: z
      .object({ kubernetes: z.array(KubernetesSourceSchema).default([]) })
      .strict()
      .default({ kubernetes: [] }),
    nodeTimeout: duration('2s'),
    concurrency: z.number().int().min(1).max(256).default(16),
    maxResponseBytes: z
      .number()
      .int()
      .min(1024)
      .max(16 * 1024 * 1024)
      .default(65536),
    pollInterval: duration('30s', true),
    minRoundInterval: duration('1s', true),
    healthy: z
      .object({ minShare: z.number().min(0).max(1).optional(), minCount: z.number().int().min(0).optional() })
      .strict()
      .refine((h) => (h.minShare === undefined) !== (h.minCount === undefined), 'give exactly one of minShare (0..1) or minCount')
      .default({ minShare: 1 }),
    writers: z
      .array(
        z.union([
          z.string().min(1),
          z
            .object({
              subject: z.string().min(1).optional(),
              issuer: z.string().min(1).optional(),
              fingerprint: z
                .string()
                .refine((text) => normaliseFingerprint(text) !== null, 'a SHA-256 fingerprint: 64 hex digits, pairs may be joined by ":"')
                .optional(),
            })
            .strict()
            .refine((rule) => rule.subject !== undefined || rule.fingerprint !== undefined, 'give subject (with issuer to pin the CA) or fingerprint'),
        ]),
      )
      .default([]),
    groups: z.record(z.string().min(1), GroupSchema),
    nodes: z.array(NodeSchema).default([]),
  })
  .strict()
  .refine((file) => file.nodes.length > 0 || file.discovery.kubernetes.length > 0, {
    message: 'at least one node, or a discovery source (discovery.kubernetes)',
    path: ['nodes'],
  })
  .refine((file) => file.stateDirectory !== undefined || file.stateConfigMap !== undefined, {
    message: 'where pending put-backs are kept: stateDirectory (a directory), stateConfigMap (a ConfigMap), or both',
    path: ['stateDirectory'],
  });

export interface GroupTlsFiles {
  certFile?: string;
  keyFile?: string;
  caFiles: string[];
}

/** Nodes found in the Kubernetes API: one list+watch of Services or Pods by label selector. */
export interface KubernetesDiscoverySource {
  kind: 'Service' | 'Pod';
  /** null: the namespace fabric-ops runs in; '*': every namespace (a ClusterRole). */
  namespace: string | null;
  /** A Kubernetes label selector, sent as given (the API server checks it). */
  selector: string;
  /** A port name (Service spec.ports[].name, container ports[].name) or number. */
  port: string | number;
  group: string;
  dialect: FleetDialect;
  /** A label whose value (peer, orderer) overrides `dialect` on the object that carries it. */
  dialectLabel: string | null;
  scheme: 'https' | 'http';
  /** Services: dns (<name>.<namespace>.svc) or clusterIP; Pods: always their IP (null). */
  address: 'dns' | 'clusterIP' | null;
  /** `{name}` and `{namespace}` replaced; null: the URL's host. */
  tlsServerName: string | null;
}

export interface FleetConfig {
  /** The file read (absolute), for messages. */
  source: string;
  /** Where pending put-backs are written (fleet-putbacks.json); null: only the ConfigMap. */
  stateDirectory: string | null;
  /** A ConfigMap in fabric-ops' namespace holding the pending put-backs too; null: none. */
  stateConfigMap: string | null;
  discovery: { kubernetes: KubernetesDiscoverySource[] };
  nodeTimeoutMs: number;
  concurrency: number;
  maxResponseBytes: number;
  /** 0: no background round. */
  pollIntervalMs: number;
  /** A health or version round that ended less than this ago answers the next caller (0: never). */
  minRoundIntervalMs: number;
  healthy: { minShare: number } | { minCount: number };
  /** Who may PUT/DELETE /fleet/logspec (src/fleet/writers.ts); empty: nobody. */
  writers: WriterRule[];
  groups: Record<string, { tls: GroupTlsFiles | null }>;
  /** The static nodes (discovered ones come and go at run time). */
  nodes: FleetNode[];
}

function issuePath(pathParts: ReadonlyArray<PropertyKey>): string {
  return pathParts.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('');
}

/** Checks a parsed document; throws ConfigError with one line per problem, each naming the key. */
export function fleetConfigFrom(document: unknown, source: string): FleetConfig {
  const parsed = FleetFileSchema.safeParse(document);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${source}: ${issuePath(issue.path) || '(top level)'}: ${issue.message}`));
  }
  const file = parsed.data;
  const problems: string[] = [];
  const baseDir = path.dirname(source);
  const resolve = (name: string): string => path.resolve(baseDir, name);
  const seen = new Set<string>();
  file.nodes.forEach((node, index) => {
    if (seen.has(node.name)) problems.push(`${source}: nodes[${index}].name: "${node.name}" is used by an earlier node; names must be unique`);
    seen.add(node.name);
    const group = file.groups[node.group];
    if (group === undefined) {
      const known = Object.keys(file.groups);
      problems.push(`${source}: nodes[${index}].group: no group "${node.group}" (groups: ${known.length > 0 ? known.join(', ') : 'none'})`);
    } else if (node.url.startsWith('https:') && group.tls === undefined) {
      problems.push(`${source}: groups.${node.group}.tls: node "${node.name}" is https, so its group needs tls.caFiles (and a client certificate for mTLS)`);
    }
  });
  file.discovery.kubernetes.forEach((entry, index) => {
    const at = `${source}: discovery.kubernetes[${index}]`;
    const group = file.groups[entry.group];
    if (group === undefined) {
      const known = Object.keys(file.groups);
      problems.push(`${at}.group: no group "${entry.group}" (groups: ${known.length > 0 ? known.join(', ') : 'none'})`);
    } else if (entry.scheme === 'https' && group.tls === undefined) {
      problems.push(
        `${source}: groups.${entry.group}.tls: discovery.kubernetes[${index}] is https, so its group needs tls.caFiles (and a client certificate for mTLS)`,
      );
    }
    if (entry.kind === 'Pod' && entry.address !== undefined) problems.push(`${at}.address: Pods are reached at their IP; address is for Services`);
    if (entry.tlsServerName !== undefined && entry.scheme === 'http') problems.push(`${at}.tlsServerName: the scheme is http; a TLS server name needs https`);
  });
  if (problems.length > 0) throw new ConfigError(problems);
  const groups: FleetConfig['groups'] = {};
  for (const [name, group] of Object.entries(file.groups)) {
    groups[name] = {
      tls: group.tls
        ? {
            ...(group.tls.certFile !== undefined ? { certFile: resolve(group.tls.certFile) } : {}),
            ...(group.tls.keyFile !== undefined ? { keyFile: resolve(group.tls.keyFile) } : {}),
            caFiles: group.tls.caFiles.map(resolve),
          }
        : null,
    };
  }
  const healthy = file.healthy.minCount !== undefined ? { minCount: file.healthy.minCount } : { minShare: file.healthy.minShare ?? 1 };
  return {
    source,
    stateDirectory: file.stateDirectory === undefined ? null : resolve(file.stateDirectory),
    stateConfigMap: file.stateConfigMap ?? null,
    discovery: {
      kubernetes: file.discovery.kubernetes.map((entry) => ({
        kind: entry.kind,
        namespace: entry.namespace ?? null,
        selector: entry.selector,
        port: entry.port,
        group: entry.group,
        dialect: entry.dialect,
        dialectLabel: entry.dialectLabel ?? null,
        scheme: entry.scheme,
        address: entry.kind === 'Service' ? (entry.address ?? 'dns') : null,
        tlsServerName: entry.tlsServerName ?? null,
      })),
    },
    nodeTimeoutMs: file.nodeTimeout,
    concurrency: file.concurrency,
    maxResponseBytes: file.maxResponseBytes,
    pollIntervalMs: file.pollInterval,
    minRoundIntervalMs: file.minRoundInterval,
    healthy,
    writers: file.writers.map((writer) =>
      typeof writer === 'string'
        ? { subject: writer, issuer: null, fingerprint256: null }
        : {
            subject: writer.subject ?? null,
            issuer: writer.issuer ?? null,
            fingerprint256: writer.fingerprint === undefined ? null : normaliseFingerprint(writer.fingerprint),
          },
    ),
    groups,
    nodes: file.nodes.map((node) => ({ name: node.name, url: node.url, dialect: node.dialect, group: node.group, labels: node.labels })),
  };
}

/** Reads and checks a fleet configuration file (YAML or JSON). Throws ConfigError naming the file and key. */
export function loadFleetConfig(file: string): FleetConfig {
  const source = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch (error) {
    throw new ConfigError([`fleet configuration ${source}: cannot read: ${describeFileError(error)}`]);
  }
  let document: unknown;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the YAML parser only in fleet mode (start time)
    const yaml = require('yaml') as typeof import('yaml');
    document = yaml.parse(text);
  } catch (error) {
    throw new ConfigError([`fleet configuration ${source}: not valid YAML: ${messageOf(error)}`]);
  }
  return fleetConfigFrom(document, source);
}
