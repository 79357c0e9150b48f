/** `fabric-ops fleet ...`: a terminal client of a running fleet endpoint (README, "The fleet command"). */
import https from 'node:https';
import { parseArgs } from 'node:util';
import { parsePositiveDurationMs } from '../config/values';
import { parseLabelSelector } from './selector';
import { fleetDialects, type NodeSelector } from './types';
import { messageOf } from '../errors';
import { readPemFileSync } from '../tls/files';
import { FabricOpsError } from '../errors';

export const fleetUsage = `Usage: fabric-ops fleet COMMAND [options]

Commands:
  status                       every node's health (GET /fleet/healthz)
  versions                     versions and commits, grouped; skew flagged (GET /fleet/version)
  logspec get                  each node's logging spec (GET /fleet/logspec)
  logspec set SPEC             set SPEC on the selected nodes (PUT /fleet/logspec)
      --selector K=V[,K=V]     nodes with these labels      --node NAME   (repeatable)
      --group NAME (repeatable)                             --dialect peer|orderer|unknown
      --ttl DURATION           put the previous spec back after it (e.g. 15m)
      --all-or-nothing         when any node fails, put back the ones that took it
  logspec restore              put back every pending TTL now (DELETE /fleet/logspec);
                               the selector options narrow it

One-shot, without a running server (status, versions and logspec get only):
  --fleet-config FILE  ask the nodes of this fleet configuration directly, with its groups'
                       credentials; writes go through a running fleet endpoint, whose
                       process owns the TTL put-backs

Connection (or the environment variables named):
  --url URL        the fleet endpoint, https://host:port (FABRIC_OPS_FLEET_URL)
  --cert FILE      client certificate (FABRIC_OPS_FLEET_CERT)
  --key FILE       its key (FABRIC_OPS_FLEET_KEY)
  --cacert FILE    CA of the fleet server's certificate (FABRIC_OPS_FLEET_CACERT)
  --timeout DURATION   whole request, default 60s
  --json           print the server's answer as JSON instead of a table

Exit status: 0 when the fleet answered 2xx; 1 when it answered an error or a partial
result (503 unhealthy, 502 some node failed) or could not be reached; 2 for bad arguments.
`;

class UsageError extends Error {}

/** How long a one-shot run waits for every discovery source to list. */
const oneShotSyncTimeoutMs = 30_000;

interface Connection {
  url: string;
  cert: string;
  key: string;
  ca: string;
  timeoutMs: number;
}

function readPem(flag: string, file: string): string {
  const read = readPemFileSync(file);
  if (!read.ok) throw new UsageError(`${flag}: cannot read ${file}: ${read.problem}`);
  return read.bytes.toString('utf8');
}

function connection(values: Record<string, unknown>, env: NodeJS.ProcessEnv): Connection {
  const pick = (flag: string, variable: string): string => {
    const value = (values[flag] as string | undefined) ?? env[variable];
    if (value === undefined || value === '') throw new UsageError(`--${flag} (or ${variable}) is required`);
    return value;
  };
  const url = pick('url', 'FABRIC_OPS_FLEET_URL');
  if (!/^https:\/\/[^/]+\/?$/.test(url)) throw new UsageError(`--url: "${url}" must be https://host:port (the fleet endpoints need mutual TLS)`);
  const timeout = parsePositiveDurationMs((values.timeout as string | undefined) ?? '60s');
  if (!timeout.ok) throw new UsageError(`--timeout: ${timeout.problem}`);
  return {
    url: url.replace(/\/$/, ''),
    cert: readPem('--cert', pick('cert', 'FABRIC_OPS_FLEET_CERT')),
    key: readPem('--key', pick('key', 'FABRIC_OPS_FLEET_KEY')),
    ca: readPem('--cacert', pick('cacert', 'FABRIC_OPS_FLEET_CACERT')),
    timeoutMs: timeout.value,
  };
}

/**
 * Largest answer read from the fleet endpoint. The largest real one is GET /fleet/logspec: a
 * spec of up to 16 KiB per node, so about 8 MiB for 500 nodes; past this the endpoint is not
 * answering as a fleet does, and reading on would only grow this process.
 */
export const maxAnswerBytes = 32 * 1024 * 1024;

/** The fleet endpoint's answer is larger than maxAnswerBytes: not read further. */
class AnswerTooLargeError extends Error {}

function call(conn: Connection, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(`${conn.url}${path}`, {
      method,
      cert: conn.cert,
      key: conn.key,
      ca: conn.ca,
      agent: false,
      headers: payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${conn.timeoutMs} ms`)), conn.timeoutMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = Number(res.headers['content-length'] ?? 0);
      const tooLarge = (): void => {
        clearTimeout(timer);
        req.destroy(new AnswerTooLargeError(`the answer is larger than ${maxAnswerBytes} bytes (status ${res.statusCode ?? 0}); not read further`));
      };
      if (size > maxAnswerBytes) return tooLarge();
      size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxAnswerBytes) tooLarge();
        else chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, json, text });
      });
      res.on('error', reject);
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(payload);
  });
}

/** Pure: columns padded to their widest cell. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((cell, index) => Math.max(cell.length, ...rows.map((row) => (row[index] ?? '').length)));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

type Json = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));

function renderStatus(body: Json): string {
  const nodes = (body.nodes as Json[] | undefined) ?? [];
  const rows = nodes.map((node) => [
    str(node.name),
    str(node.group),
    str(node.dialect),
    str(node.status),
    `${str(node.latencyMs)}ms`,
    node.status === 'failing'
      ? ((node.failed_checks as Json[] | undefined) ?? []).map((check) => `${str(check.component)}: ${str(check.reason)}`).join('; ')
      : str(node.error),
  ]);
  // With discovery not yet listed, the reason says why the answer is 503 whatever the nodes say.
  const reason = typeof body.reason === 'string' ? `${body.reason}\n` : '';
  return `${table(['NODE', 'GROUP', 'DIALECT', 'STATUS', 'LATENCY', 'DETAIL'], rows)}${str(body.healthy)}/${str(body.total)} healthy (${str(body.required)} required): ${str(body.status)}\n${reason}`;
}

function renderVersions(body: Json): string {
  const versions = (body.versions as Json[] | undefined) ?? [];
  const unreachable = (body.unreachable as Json[] | undefined) ?? [];
  const rows = versions.map((group) => [str(group.version), str(group.commit), ((group.nodes as string[] | undefined) ?? []).join(', ')]);
  for (const node of unreachable) rows.push(['-', '-', `${str(node.name)} (${str(node.reason)}: ${str(node.error)})`]);
  return `${table(['VERSION', 'COMMIT', 'NODES'], rows)}${body.skew === true ? 'version skew: the nodes run more than one version\n' : 'no version skew\n'}`;
}

function renderLogSpecs(body: Json): string {
  const nodes = (body.nodes as Json[] | undefined) ?? [];
  return table(
    ['NODE', 'GROUP', 'SPEC', 'PUT BACK AT'],
    nodes.map((node) => [
      str(node.name),
      str(node.group),
      node.status === 'ok' ? str(node.spec) : `(${str(node.status)}: ${str(node.error)})`,
      str(node.putBackAt),
    ]),
  );
}

function renderSet(body: Json): string {
  const nodes = (body.nodes as Json[] | undefined) ?? [];
  const head = `spec '${str(body.spec)}'${body.putBackAt ? `, put back at ${str(body.putBackAt)}` : ''}${body.complete === true ? '' : ': NOT applied on every node'}\n`;
  return (
    head +
    table(
      ['NODE', 'RESULT', 'PREVIOUS', 'DETAIL'],
      nodes.map((node) => [str(node.name), str(node.result), str(node.previous), node.reason ? `${str(node.reason)}: ${str(node.error)}` : '']),
    )
  );
}

function renderRestore(body: Json): string {
  const nodes = (body.nodes as Json[] | undefined) ?? [];
  if (nodes.length === 0) return 'no pending put-back\n';
  return table(
    ['NODE', 'RESULT', 'SPEC', 'DETAIL'],
    nodes.map((node) => [str(node.name), str(node.result), str(node.spec), str(node.error)]),
  );
}

function selectorFrom(values: Record<string, unknown>): NodeSelector {
  const selector: { names?: string[]; groups?: string[]; dialect?: NodeSelector['dialect']; labels?: Record<string, string> } = {};
  const names = values.node as string[] | undefined;
  const groups = values.group as string[] | undefined;
  if (names && names.length > 0) selector.names = names;
  if (groups && groups.length > 0) selector.groups = groups;
  const dialect = values.dialect as string | undefined;
  if (dialect !== undefined) {
    if (!(fleetDialects as readonly string[]).includes(dialect))
      throw new UsageError(`--dialect: must be one of ${fleetDialects.join(', ')}; got "${dialect}"`);
    selector.dialect = dialect as NodeSelector['dialect'];
  }
  const labels = values.selector as string | undefined;
  if (labels !== undefined) {
    const parsed = parseLabelSelector(labels);
    if (typeof parsed === 'string') throw new UsageError(`--selector: ${parsed}`);
    selector.labels = parsed;
  }
  return selector;
}

/**
 * The read-only commands without a server: a FleetService of this process asks the nodes and
 * answers what the endpoint would. Loaded here only (zod, the node client).
 */
async function oneShot(file: string, path: string, err: NodeJS.WritableStream): Promise<{ status: number; json: Json }> {
  /* eslint-disable @typescript-eslint/no-require-imports -- the fleet service only for --fleet-config */
  const { loadFleetConfig } = require('./config') as typeof import('./config');
  const { FleetService } = require('./service') as typeof import('./service');
  const { LoggingSystem } = require('../logging/logging-system') as typeof import('../logging/logging-system');
  const { DisabledProvider } = require('../metrics/disabled/provider') as typeof import('../metrics/disabled/provider');
  /* eslint-enable @typescript-eslint/no-require-imports */
  let config;
  try {
    config = loadFleetConfig(file);
  } catch (error) {
    throw new UsageError(`--fleet-config: ${messageOf(error)}`);
  }
  const logging = new LoggingSystem({ spec: 'warning', stream: err });
  let fleet;
  try {
    fleet = new FleetService({ ...config, minRoundIntervalMs: 0 }, { logger: logging.getLogger('fleet'), metrics: new DisabledProvider() });
  } catch (error) {
    throw new UsageError(`--fleet-config: ${messageOf(error)}`);
  }
  try {
    // With discovery (discovery.kubernetes): connect, and wait until every source has listed.
    await fleet.startReadOnly();
    await fleet.whenSynced(oneShotSyncTimeoutMs);
    switch (path) {
      case '/fleet/healthz': {
        const report = await fleet.health();
        return { status: report.status === 'OK' ? 200 : 503, json: report as unknown as Json };
      }
      case '/fleet/version':
        return { status: 200, json: (await fleet.versions()) as unknown as Json };
      default:
        return { status: 200, json: { nodes: await fleet.readLogSpecs() } };
    }
  } finally {
    await fleet.stop();
  }
}

/** Runs the command; returns the exit status. Writes to the given streams. */
export async function runFleetCommand(argv: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        url: { type: 'string' },
        cert: { type: 'string' },
        key: { type: 'string' },
        cacert: { type: 'string' },
        timeout: { type: 'string' },
        json: { type: 'boolean' },
        selector: { type: 'string' },
        node: { type: 'string', multiple: true },
        group: { type: 'string', multiple: true },
        dialect: { type: 'string' },
        ttl: { type: 'string' },
        'all-or-nothing': { type: 'boolean' },
        'fleet-config': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      out.write(fleetUsage);
      return 0;
    }
    const command = positionals.join(' ');
    let method: string;
    let path: string;
    let body: unknown;
    let render: (json: Json) => string;
    const rest = (expected: number): void => {
      if (positionals.length !== expected)
        throw new UsageError(`fleet ${positionals.slice(0, expected).join(' ')}: unexpected argument "${positionals[expected] ?? ''}"`);
    };
    switch (positionals[0] === 'logspec' ? `logspec ${positionals[1] ?? ''}` : (positionals[0] ?? '')) {
      case 'status':
        rest(1);
        [method, path, render] = ['GET', '/fleet/healthz', renderStatus];
        break;
      case 'versions':
        rest(1);
        [method, path, render] = ['GET', '/fleet/version', renderVersions];
        break;
      case 'logspec get':
        rest(2);
        [method, path, render] = ['GET', '/fleet/logspec', renderLogSpecs];
        break;
      case 'logspec set': {
        const spec = positionals[2];
        if (spec === undefined) throw new UsageError('fleet logspec set: the SPEC argument is missing (e.g. gossip=debug:info)');
        rest(3);
        let ttl: string | undefined;
        if (values.ttl !== undefined) {
          const parsed = parsePositiveDurationMs(values.ttl);
          if (!parsed.ok) throw new UsageError(`--ttl: ${parsed.problem}`);
          ttl = values.ttl;
        }
        body = { spec, selector: selectorFrom(values), ...(ttl !== undefined ? { ttl } : {}), ...(values['all-or-nothing'] ? { allOrNothing: true } : {}) };
        [method, path, render] = ['PUT', '/fleet/logspec', renderSet];
        break;
      }
      case 'logspec restore':
        rest(2);
        body = { selector: selectorFrom(values) };
        [method, path, render] = ['DELETE', '/fleet/logspec', renderRestore];
        break;
      default:
        throw new UsageError(command === '' ? 'a command is required: status, versions, logspec get|set|restore' : `unknown fleet command "${command}"`);
    }
    const fleetConfig = values['fleet-config'];
    if (fleetConfig !== undefined) {
      if (method !== 'GET') {
        throw new UsageError(
          `fleet ${command}: --fleet-config answers status, versions and logspec get; writes go through a running fleet endpoint (--url), whose process owns the TTL put-backs`,
        );
      }
      const answer = await oneShot(fleetConfig, path, err);
      out.write(values.json ? `${JSON.stringify(answer.json, null, 2)}\n` : render(answer.json));
      return answer.status >= 200 && answer.status < 300 ? 0 : 1;
    }
    const conn = connection(values, env);
    let answer;
    try {
      answer = await call(conn, method, path, body);
    } catch (error) {
      err.write(
        error instanceof AnswerTooLargeError
          ? `fabric-ops fleet: ${conn.url}${path}: ${error.message}\n`
          : `fabric-ops fleet: cannot reach ${conn.url}: ${messageOf(error)}\n`,
      );
      return 1;
    }
    const json = answer.json as Json | undefined;
    if (json === undefined || (answer.status >= 400 && typeof json.error === 'string')) {
      err.write(`fabric-ops fleet: ${conn.url}${path} answered ${answer.status}: ${json ? str(json.error) : answer.text.slice(0, 200)}\n`);
      return 1;
    }
    out.write(values.json ? `${JSON.stringify(json, null, 2)}\n` : render(json));
    return answer.status >= 200 && answer.status < 300 ? 0 : 1;
  } catch (error) {
    if (error instanceof UsageError || (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      err.write(`fabric-ops fleet: ${messageOf(error)}\nrun fabric-ops fleet --help for usage\n`);
      return 2;
    }
    // One-shot: no Kubernetes credentials, a discovery source that cannot list (its name and the API server's message).
    if (error instanceof FabricOpsError) {
      err.write(`fabric-ops fleet: ${messageOf(error)}\n`);
      return 1;
    }
    throw error;
  }
}
