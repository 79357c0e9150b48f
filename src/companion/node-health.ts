import type { CompanionConfig, Dialect } from '../config/types';
import { ConfigError, messageOf } from '../errors';
import { NodeClient } from '../fleet/client';
import type { GroupMaterial } from '../fleet/credentials';
import type { FleetNode } from '../fleet/types';
import type { CheckResult, HealthChecker } from '../health/types';
import { excerpt } from '../health/quote';
import { readPemFileSync } from '../tls/files';
import { certificateBlocks } from '../tls/pem';
import { realScheduler, type Scheduler } from '../time';
import { companionKeysFor } from '../config/companion-keys';

/**
 * The `node` health checker of companion mode: the node's own `/healthz`, over its operations
 * endpoint (address and TLS from the node's configuration; fabric-ops' own client certificate
 * when one is configured). Each failure starts with its reason: `unreachable:`, `tls:`,
 * `timeout:`, `unhealthy:` (a 503 with the node's failed_checks), `unauthorized:`, `bad_response:`.
 */

/** A node's /healthz answer is a few hundred bytes; more is not a Fabric node. */
const maxAnswerBytes = 64 * 1024;

export interface NodeHealthOptions {
  dialect: Dialect;
  node: CompanionConfig['node'];
  /** The call's own bound (the health service's checker timeout). */
  timeoutMs: number;
  scheduler?: Scheduler;
}

function nodeUrl(node: CompanionConfig['node']): string {
  const host = node.address.host.includes(':') ? `[${node.address.host}]` : node.address.host;
  return `${node.tls.enabled ? 'https' : 'http'}://${host}:${node.address.port}`;
}

/** Reads the trust anchors and the client pair; ConfigError naming the key and file. Only fabric-ops' own key file is opened here. */
export function readNodeClientMaterial(dialect: Dialect, tls: CompanionConfig['node']['tls']): GroupMaterial {
  const keys = companionKeysFor(dialect);
  const problems: string[] = [];
  const text = (key: string, file: string): string | undefined => {
    const read = readPemFileSync(file);
    if (!read.ok) {
      problems.push(`${key}: cannot read ${file}: ${read.problem}`);
      return undefined;
    }
    return read.bytes.toString('utf8');
  };
  const ca: string[] = [];
  for (const file of tls.rootCAFiles) {
    const content = text(keys.nodeRootCAs, file);
    if (content === undefined) continue;
    const blocks = certificateBlocks(content);
    if (blocks.length === 0) problems.push(`${keys.nodeRootCAs}: ${file} holds no PEM certificate`);
    ca.push(...blocks);
  }
  const material: GroupMaterial = { ca };
  if (tls.certFile !== '' && tls.keyFile !== '') {
    const cert = text(keys.nodeClientCertFile, tls.certFile);
    const key = text(keys.nodeClientKeyFile, tls.keyFile);
    if (cert !== undefined) material.cert = cert;
    if (key !== undefined) material.key = key;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return material;
}

function failedChecksOf(body: unknown): string {
  const checks = (body as { failed_checks?: unknown } | null)?.failed_checks;
  if (!Array.isArray(checks) || checks.length === 0) return 'no failed_checks in the answer';
  return checks
    .slice(0, 10)
    .map((check: unknown) => {
      const { component, reason } = (check ?? {}) as { component?: unknown; reason?: unknown };
      const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value ?? null));
      return `${excerpt(text(component))}: ${excerpt(text(reason))}`;
    })
    .join('; ');
}

export class NodeHealthChecker implements HealthChecker {
  private readonly client: NodeClient;
  private readonly target: FleetNode;
  private material: GroupMaterial | null;

  constructor(private readonly options: NodeHealthOptions) {
    const { node } = options;
    this.material = node.tls.enabled ? readNodeClientMaterial(options.dialect, node.tls) : null;
    this.client = new NodeClient({
      timeoutMs: options.timeoutMs,
      maxResponseBytes: maxAnswerBytes,
      scheduler: options.scheduler ?? realScheduler,
      material: () => this.material,
    });
    this.target = {
      name: 'node',
      url: nodeUrl(node),
      dialect: options.dialect,
      labels: {},
      group: 'node',
      ...(node.tls.enabled && node.tls.serverName !== node.address.host ? { tlsServerName: node.tls.serverName } : {}),
    };
  }

  get url(): string {
    return `${this.target.url}/healthz`;
  }

  /**
   * Reads the trust anchors and client pair again (a rotated file is used from the next call; the
   * same contents keep the same object, so the client's TLS context is reused); on a problem the
   * former material stays, and the problem is returned.
   */
  reload(): string | null {
    if (!this.options.node.tls.enabled || this.material === null) return null;
    try {
      const fresh = readNodeClientMaterial(this.options.dialect, this.options.node.tls);
      const same = fresh.cert === this.material.cert && fresh.key === this.material.key && fresh.ca.join('') === this.material.ca.join('');
      if (!same) this.material = fresh;
      return null;
    } catch (error) {
      return messageOf(error);
    }
  }

  async check(signal: AbortSignal): Promise<CheckResult> {
    this.reload();
    const outcome = await this.client.call(this.target, 'GET', '/healthz', undefined, signal);
    if (!outcome.ok) return { ok: false, reason: `${outcome.reason}: ${this.url}: ${outcome.error}` };
    if (outcome.status === 200) return { ok: true };
    if (outcome.status === 503) return { ok: false, reason: `unhealthy: ${this.url} answered 503: ${failedChecksOf(outcome.body)}` };
    return { ok: false, reason: `bad_response: ${this.url} answered ${outcome.status}: ${excerpt(outcome.text)}` };
  }
}
