import { X509Certificate } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { environmentSchema } from '../config/environment';
import { parsePositiveDurationMs } from '../config/values';
import { ConfigError, messageOf } from '../errors';
import { parseDistinguishedName } from '../tls/distinguished-name';
import { readPemFileSync, readRegularFileSync } from '../tls/files';
import { certificateBlocks, oneLineName } from '../tls/pem';
import { fleetDialects, type FleetDialect, type FleetNode } from './types';
import { normaliseFingerprint, type WriterRule } from './writers';

/**
 * The fleet configuration: its own file (`--fleet-config` / FABRIC_OPS_FLEET_CONFIG), its own
 * schema, apart from the node's core.yaml/orderer.yaml. YAML or JSON.
 */

/** The longest TTL: Node's timers hold at most 2^31-1 ms (24.8 days); a week is plenty for an incident. */
export const maxTtlMs = 7 * 24 * 3600 * 1000;

/** Pure: roundTimeout when not given: two calls' timeouts and a second. */
function defaultRoundTimeoutMs(nodeTimeoutMs: number): number {
  return 2 * nodeTimeoutMs + 1000;
}

export const fleetConfigEnvironmentVariable = environmentSchema.fleetConfig.env;

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

/** An operations endpoint: scheme, host and port (a node's, or its companion's), kept as its origin. */
const endpointUrl = z.string().transform((text, ctx) => {
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
});

const NodeSchema = z
  .object({
    name: nodeName,
    url: endpointUrl,
    dialect: z.enum(fleetDialects).default('unknown'),
    group: z.string().min(1),
    labels: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$/, 'label keys: A-Z a-z 0-9 . _ / -'), z.string().max(63)).default({}),
    /** Its companion's own endpoint (docs/fleet-certificates.md), reached with the node's group credentials. */
    companion: z.object({ url: endpointUrl }).strict().optional(),
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

const fingerprintText = z.string().refine((text) => normaliseFingerprint(text) !== null, 'a SHA-256 fingerprint: 64 hex digits, pairs may be joined by ":"');

/** The form `{ subject, issuer }` pinned a CA by its name; refused, since any trusted client CA can give that name to an intermediate of its own. */
export const issuerByNameRefused =
  "an issuer given by its name is refused: any CA in the server's clientRootCAs can issue an intermediate with that name. Pin the CA certificate that signs the writer's certificate instead: issuerFingerprint: 'sha256:AB:CD:...' (openssl x509 -noout -fingerprint -sha256 -in ca.crt; the CA must be one of clientRootCAs) or issuerCertFile: ca.crt (its PEM file)";

/** `{ subject, issuerFingerprint | issuerCertFile, fingerprint }`: every given field must match (src/fleet/writers.ts). */
const WriterObjectSchema = z
  .object({
    subject: z.string().min(1).optional(),
    issuerFingerprint: fingerprintText.optional(),
    issuerCertFile: z.string().min(1).optional(),
    fingerprint: fingerprintText.optional(),
    /** Refused, naming the forms that replace it. */
    issuer: z.unknown().optional(),
  })
  .strict()
  .superRefine((rule, ctx) => {
    if (rule.issuer !== undefined) ctx.addIssue({ code: 'custom', path: ['issuer'], message: issuerByNameRefused });
    else if (rule.subject === undefined && rule.fingerprint === undefined) {
      ctx.addIssue({ code: 'custom', message: 'give subject (with issuerFingerprint or issuerCertFile to pin the CA that signs it) or fingerprint' });
    }
    if (rule.issuerFingerprint !== undefined && rule.issuerCertFile !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['issuerCertFile'], message: 'give issuerFingerprint or issuerCertFile, not both' });
    }
  });

/**
 * The fleet file's schema; also read by scripts/gendocs.ts for docs/reference/configuration.md.
 * @internal Not in the published declarations: its type is zod's, which a library user's compiler must never read.
 */
export const FleetFileSchema = z
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
    /** A health or version round's deadline; default 2 x nodeTimeout + 1s (roundTimeoutMs). */
    roundTimeout: z
      .string()
      .optional()
      .transform((text, ctx) => {
        if (text === undefined) return undefined;
        const parsed = parsePositiveDurationMs(text);
        if (parsed.ok) return parsed.value;
        ctx.addIssue({ code: 'custom', message: parsed.problem });
        return z.NEVER;
      }),
    concurrency: z.number().int().min(1).max(256).default(16),
    maxResponseBytes: z
      .number()
      .int()
      .min(1024)
      .max(16 * 1024 * 1024)
      .default(65536),
    pollInterval: duration('30s', true),
    minRoundInterval: duration('1s', true),
    /** How the chains are read and judged (GET /fleet/channels, docs/fleet-channels.md); each key's meaning is its description (the docs' key table). */
    channels: z
      .object({
        behindBlocks: z
          .number()
          .int()
          .min(0)
          .max(1_000_000)
          .default(5)
          .describe(
            "a node more than this many blocks below a channel's highest height lags: `behind` once it has for `channels.behindFor`, `stalled` when its height stays while the highest moves ([lag and stalls](../fleet-channels.md#how-lag-and-stalls-are-decided))",
          ),
        behindFor: duration('1m', true).describe(
          'how long a node lags by more than `channels.behindBlocks`, while it moves, before it is `behind` (Go duration; `0s`: at once)',
        ),
        maxChannels: z
          .number()
          .int()
          .min(1)
          .max(100_000)
          .default(500)
          .describe(
            "channels kept from one node's /metrics; height samples past it are counted (`channelsDropped`), not kept: bounds the answer and the metric series",
          ),
        maxMetricsBytes: z
          .number()
          .int()
          .min(64 * 1024)
          .max(1024 * 1024 * 1024)
          .default(16 * 1024 * 1024)
          .describe("bytes of one node's /metrics read at most (streamed, never held whole); a longer body is a `bad_response`"),
      })
      .strict()
      .prefault({})
      .describe('how the chains are read and judged: `GET /fleet/channels`, `fabric-ops fleet channels` ([the chains](../fleet-channels.md))'),
    healthy: z
      .object({ minShare: z.number().min(0).max(1).optional(), minCount: z.number().int().min(0).optional() })
      .strict()
      .refine((h) => (h.minShare === undefined) !== (h.minCount === undefined), 'give exactly one of minShare (0..1) or minCount')
      .default({ minShare: 1 }),
    writers: z.array(z.union([z.string().min(1), WriterObjectSchema])).default([]),
    groups: z.record(z.string().min(1), GroupSchema),
    nodes: z.array(NodeSchema).default([]),
  })
  .strict()
  .refine((file) => file.nodes.length > 0 || file.discovery.kubernetes.length > 0, {
    message: 'at least one node, or a discovery source (discovery.kubernetes)',
    path: ['nodes'],
  })
  .refine((file) => file.roundTimeout === undefined || file.roundTimeout >= file.nodeTimeout, {
    message: 'must be at least nodeTimeout: a shorter round would cut every call that takes its whole timeout',
    path: ['roundTimeout'],
  })
  .refine((file) => file.stateDirectory !== undefined || file.stateConfigMap !== undefined, {
    message: 'where pending put-backs are kept: stateDirectory (a directory), stateConfigMap (a ConfigMap), or both',
    path: ['stateDirectory'],
  });

/** The `channels` keys of the fleet file (docs/fleet-channels.md). */
export interface FleetChannelSettings {
  behindBlocks: number;
  behindForMs: number;
  maxChannels: number;
  maxMetricsBytes: number;
}

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
  /** A round's deadline: nodes not answered by then are reported `timeout` (src/fleet/health.ts RoundReport). */
  roundTimeoutMs: number;
  concurrency: number;
  maxResponseBytes: number;
  /** 0: no background round. */
  pollIntervalMs: number;
  /** A health or version round that ended less than this ago answers the next caller (0: never). */
  minRoundIntervalMs: number;
  healthy: { minShare: number } | { minCount: number };
  /** The chains (src/fleet/channels.ts): thresholds of `behind`, and the bounds of reading a node's /metrics. */
  channels: FleetChannelSettings;
  /** Who may PUT/DELETE /fleet/logspec (src/fleet/writers.ts); empty: nobody. An issuerFingerprint is bound to its certificate at start (bindWriterIssuers). */
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
    } else if (node.companion?.url.startsWith('https:') === true && group.tls === undefined) {
      problems.push(
        `${source}: groups.${node.group}.tls: nodes[${index}].companion.url of node "${node.name}" is https, so its group needs tls.caFiles (and a client certificate for mTLS)`,
      );
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
  const writers = file.writers.map((entry, index) => writerRule(entry, `${source}: writers[${index}]`, resolve, problems));
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
    roundTimeoutMs: file.roundTimeout ?? defaultRoundTimeoutMs(file.nodeTimeout),
    concurrency: file.concurrency,
    maxResponseBytes: file.maxResponseBytes,
    pollIntervalMs: file.pollInterval,
    minRoundIntervalMs: file.minRoundInterval,
    channels: {
      behindBlocks: file.channels.behindBlocks,
      behindForMs: file.channels.behindFor,
      maxChannels: file.channels.maxChannels,
      maxMetricsBytes: file.channels.maxMetricsBytes,
    },
    healthy,
    writers: writers.filter((rule): rule is WriterRule => rule !== null),
    groups,
    nodes: file.nodes.map((node) => ({
      name: node.name,
      url: node.url,
      dialect: node.dialect,
      group: node.group,
      labels: node.labels,
      ...(node.companion !== undefined ? { companion: { url: node.companion.url } } : {}),
    })),
  };
}

/**
 * The largest fleet configuration read: 1 MiB, what the chart's ConfigMap can hold, about 8,900
 * listed nodes (larger fleets are discovered). The YAML parser holds about 200 times the text
 * while it works (1 MiB: 200 MiB more RSS and 3 s; 300 MB were read whole before).
 */
const maxFleetConfigBytes = 1024 * 1024;

/** Every certificate of a PEM file, or why there is none. */
function readCertificates(file: string): { certificates: X509Certificate[] } | { problem: string } {
  const read = readPemFileSync(file);
  if (!read.ok) return { problem: `cannot read ${file}: ${read.problem}` };
  const blocks = certificateBlocks(read.bytes.toString('utf8'));
  if (blocks.length === 0) return { problem: `${file} holds no PEM certificate` };
  try {
    return { certificates: blocks.map((pem) => new X509Certificate(pem)) };
  } catch (error) {
    return { problem: `${file}: not a valid X.509 certificate (${messageOf(error)})` };
  }
}

/** One entry of `writers` as a rule; null, with its problems added (each naming the entry's key), when it cannot be one. */
function writerRule(entry: string | z.infer<typeof WriterObjectSchema>, at: string, resolve: (name: string) => string, problems: string[]): WriterRule | null {
  const rule = typeof entry === 'string' ? { subject: entry } : entry;
  const count = problems.length;
  let subject: WriterRule['subject'] = null;
  if (rule.subject !== undefined) {
    const parsed = parseDistinguishedName(rule.subject);
    if (parsed.ok) subject = { text: rule.subject, name: parsed.value };
    else {
      problems.push(
        `${at}${typeof entry === 'string' ? '' : '.subject'}: not a subject: ${parsed.problem} (RFC 4514 syntax, attributes in the certificate's order, as the audit log and the 403 show them: O=org1,CN=operator)`,
      );
    }
  }
  let issuer: WriterRule['issuer'] = null;
  if (rule.issuerFingerprint !== undefined) {
    issuer = { fingerprint256: normaliseFingerprint(rule.issuerFingerprint) as string, certificate: null, key: 'issuerFingerprint' };
  } else if (rule.issuerCertFile !== undefined) {
    const file = resolve(rule.issuerCertFile);
    const read = readCertificates(file);
    if ('problem' in read) problems.push(`${at}.issuerCertFile: ${read.problem}`);
    else if (read.certificates.length !== 1) {
      problems.push(
        `${at}.issuerCertFile: ${file} holds ${read.certificates.length} certificates; give a file with the one CA certificate that signs the writer's certificate`,
      );
    } else {
      const certificate = read.certificates[0] as X509Certificate;
      if (certificate.ca) issuer = { fingerprint256: certificate.fingerprint256, certificate, key: 'issuerCertFile' };
      else {
        problems.push(
          `${at}.issuerCertFile: ${file} is not a CA certificate (basicConstraints CA:TRUE) but "${oneLineName(certificate.subject)}"; give the CA that signs the writer's certificate`,
        );
      }
    }
  }
  const fingerprint256 = rule.fingerprint === undefined ? null : normaliseFingerprint(rule.fingerprint);
  return problems.length > count ? null : { subject, issuer, fingerprint256 };
}

/**
 * Binds each `issuerFingerprint` of `writers` to its certificate among the server's client root
 * CAs (the files of `key`), whose public key then checks a writer's certificate. A fingerprint
 * that no client root CA has is a ConfigError naming the rule: a CA the fleet cannot check
 * against would refuse that writer every time, silently.
 */
export function bindWriterIssuers(config: FleetConfig, clientRootCAFiles: readonly string[], key: string): FleetConfig {
  if (!config.writers.some((rule) => rule.issuer !== null && rule.issuer.certificate === null)) return config;
  const problems: string[] = [];
  const cas = new Map<string, X509Certificate>();
  for (const file of clientRootCAFiles) {
    const read = readCertificates(file);
    if ('problem' in read) problems.push(`${config.source}: writers: reading ${key} for issuerFingerprint: ${read.problem}`);
    else for (const certificate of read.certificates) cas.set(certificate.fingerprint256, certificate);
  }
  const writers = config.writers.map((rule, index) => {
    if (rule.issuer === null || rule.issuer.certificate !== null) return rule;
    const certificate = cas.get(rule.issuer.fingerprint256);
    if (certificate === undefined) {
      problems.push(
        `${config.source}: writers[${index}].issuerFingerprint: no certificate of ${key} (${clientRootCAFiles.join(', ')}) has the SHA-256 fingerprint ${rule.issuer.fingerprint256}; pin the CA that signs the writer's certificate, or give a CA outside ${key} (an intermediate) with issuerCertFile`,
      );
      return rule;
    }
    return { ...rule, issuer: { ...rule.issuer, certificate } };
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...config, writers };
}

/** Reads and checks a fleet configuration file (YAML or JSON). Throws ConfigError naming the file and key. */
export function loadFleetConfig(file: string): FleetConfig {
  const source = path.resolve(file);
  // As certificates are read: a regular file only (a FIFO does not block the start), bounded.
  const read = readRegularFileSync(source, { maxBytes: maxFleetConfigBytes, kind: 'a fleet configuration' });
  if (!read.ok) throw new ConfigError([`fleet configuration ${source}: cannot read: ${read.problem}`]);
  const text = read.bytes.toString('utf8');
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
