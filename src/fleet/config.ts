import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parsePositiveDurationMs } from '../config/values';
import { ConfigError, messageOf } from '../errors';
import { describeFileError } from '../file-errors';
import { fleetDialects, type FleetNode } from './types';

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

const FleetFileSchema = z
  .object({
    stateDirectory: z.string().min(1),
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
    writers: z.array(z.string().min(1)).default([]),
    groups: z.record(z.string().min(1), GroupSchema),
    nodes: z.array(NodeSchema).min(1, 'at least one node'),
  })
  .strict();

export interface GroupTlsFiles {
  certFile?: string;
  keyFile?: string;
  caFiles: string[];
}

export interface FleetConfig {
  /** The file read (absolute), for messages. */
  source: string;
  stateDirectory: string;
  nodeTimeoutMs: number;
  concurrency: number;
  maxResponseBytes: number;
  /** 0: no background round. */
  pollIntervalMs: number;
  /** A health or version round that ended less than this ago answers the next caller (0: never). */
  minRoundIntervalMs: number;
  healthy: { minShare: number } | { minCount: number };
  writers: string[];
  groups: Record<string, { tls: GroupTlsFiles | null }>;
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
    stateDirectory: resolve(file.stateDirectory),
    nodeTimeoutMs: file.nodeTimeout,
    concurrency: file.concurrency,
    maxResponseBytes: file.maxResponseBytes,
    pollIntervalMs: file.pollInterval,
    minRoundIntervalMs: file.minRoundInterval,
    healthy,
    writers: file.writers,
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
