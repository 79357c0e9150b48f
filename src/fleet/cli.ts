/** `fabric-ops fleet ...`: a terminal client of a running fleet endpoint (docs/fleet.md, "The fleet command"). */
import { parseArgs } from 'node:util';
import { environmentSchema, httpsEndpointProblem, readEnvironment } from '../config/environment';
import { parsePositiveDurationMs } from '../config/values';
import { parseLabelSelector } from './selector';
import { fleetDialects, type NodeSelector } from './types';
import { ConfigError, FabricOpsError, messageOf } from '../errors';
import { outboundRequest } from '../http-client';
import { keepAliveScheduler } from '../time';
import { readPemFileSync } from '../tls/files';
import { parseLogSpec } from '../logging/spec';
import { escapeForLog } from '../text';
import { ttlProblem } from './logspec';
import { describeTlsProblem, tlsProblemOf } from './tls-problems';
import { cutNote, outputWidth, prose, renderTable, type Cell, type Column } from './cli-table';
import { companionDetail, renderCertificates } from './certificates-cli';
import { renderChannels } from './cli-channels';

/**
 * The TTL a spec with a debug or payload level gets when neither --ttl nor --permanent is given:
 * debug on a peer costs throughput and disk, and the usual incident is a debug level nobody put
 * back. An hour covers a troubleshooting session; `logspec restore` ends it sooner.
 */
const defaultDebugTtl = '1h';

export const fleetUsage = `Usage: fabric-ops fleet COMMAND [options]

Commands:
  status              every node's health (GET /fleet/healthz)
  versions            versions and commits, skew flagged (GET /fleet/version)
  channels            every channel's height on every node, its lag and status
                      (GET /fleet/channels); exit 1 when a node is behind,
                      stalled or not read
  certs               every certificate of every node, soonest expiry first
                      (GET /fleet/certificates); exit 1 when one is expired or
                      expires within 7 days, or a node was not read
  logspec get         each node's logging spec (GET /fleet/logspec)
  logspec set SPEC    set SPEC on the selected nodes (PUT /fleet/logspec)
    --node NAME, --group NAME (repeatable), --dialect peer|orderer|unknown,
    --selector K=V[,K=V]   the nodes to change: all given must match
    --all               every node of the fleet (needed without a selector)
    --ttl DURATION      put the previous spec back after it, 1s to 168h (15m);
                        a spec with a debug (or payload) level gets --ttl ${defaultDebugTtl}
                        unless --ttl or --permanent is given
    --permanent         no TTL: the spec stays (logspec restore cannot undo it)
    --all-or-nothing    when any node fails, put back the ones that took it
  logspec restore     put back every pending TTL now (DELETE /fleet/logspec);
                      the selector options narrow it

One-shot, without a running server (status, versions, channels, certs and
logspec get; channels from one read: behind at once, stalled not seen):
  --fleet-config FILE   ask the nodes of this fleet configuration directly, with
                        its groups' credentials; writes go through a running
                        fleet endpoint, whose process owns the TTL put-backs

Connection (or the environment variables named):
  --url URL        the fleet endpoint, https://host:port (FABRIC_OPS_FLEET_URL)
  --cert FILE      client certificate (FABRIC_OPS_FLEET_CERT)
  --key FILE       its key (FABRIC_OPS_FLEET_KEY)
  --cacert FILE    CA of the fleet server's certificate
                   (FABRIC_OPS_FLEET_CACERT)
  --timeout DURATION   whole request, default 60s

Output:
  tables fit the terminal (COLUMNS, else 80 columns), long cells cut with ...
  --wide           every column, nothing cut
  --json           the server's answer as JSON
  Text from nodes and clients is shown with control characters escaped (\\u001b).

Exit status: 0 when the fleet answered and every node did; 1 when it answered
an error or a partial result (status: unhealthy; versions and logspec get: a
node did not answer; channels: a node behind, stalled or not read; certs: a
certificate expired or within 7 days, or a node not read; set: a node failed)
or could not be reached; 2 for bad arguments.

More, in the fabric-ops sources: docs/fleet.md (the fleet: its file, endpoints,
security and the command), docs/reference/command.md (every command and flag),
docs/troubleshooting.md (the messages and what to do).
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
  /** Where the client certificate and the CA came from, as errors name them (`--cert me.crt`, `FABRIC_OPS_FLEET_CACERT=ca.crt`). */
  certSource: string;
  caSource: string;
}

function readPem(flag: string, file: string): string {
  const read = readPemFileSync(file);
  if (!read.ok) throw new UsageError(`${flag}: cannot read ${file}: ${read.problem}`);
  return read.bytes.toString('utf8');
}

/** The connection flags and the variables that stand in for them (src/config/environment.ts). */
const connectionVariables = { url: 'fleetUrl', cert: 'fleetCert', key: 'fleetKey', cacert: 'fleetCacert' } as const;

function connection(values: Record<string, unknown>, env: NodeJS.ProcessEnv): Connection {
  const pick = (flag: keyof typeof connectionVariables): { value: string; source: string } => {
    const key = connectionVariables[flag];
    const variable = environmentSchema[key].env;
    const given = values[flag] as string | undefined;
    let value: string;
    if (given !== undefined) value = given;
    else {
      // The variable is read only when its flag is not given: a flag wins over a bad variable too.
      try {
        value = readEnvironment(env, [key])[key];
      } catch (error) {
        if (error instanceof ConfigError) throw new UsageError(error.problems.join('; '));
        throw error;
      }
    }
    if (value === '') throw new UsageError(`--${flag} (or ${variable}) is required`);
    return { value, source: given !== undefined ? `--${flag} ${value}` : `${variable}=${value}` };
  };
  const url = pick('url').value;
  // The check of FABRIC_OPS_FLEET_URL's format, which a value from there has passed already.
  const urlProblem = httpsEndpointProblem(url);
  if (urlProblem !== null) throw new UsageError(`--url: ${urlProblem}`);
  const timeout = parsePositiveDurationMs((values.timeout as string | undefined) ?? '60s');
  if (!timeout.ok) throw new UsageError(`--timeout: ${timeout.problem}`);
  const cert = pick('cert');
  const ca = pick('cacert');
  return {
    url: url.replace(/\/$/, ''),
    cert: readPem('--cert', cert.value),
    key: readPem('--key', pick('key').value),
    ca: readPem('--cacert', ca.value),
    timeoutMs: timeout.value,
    certSource: cert.source,
    caSource: ca.source,
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

/** The request failed: `message` says why in the operator's words (the TLS problems with the file to look at). */
class CallError extends Error {}

/** Why a request to the fleet endpoint failed, in one line: a TLS problem names --cert or --cacert; never OpenSSL's string. */
function describeCallFailure(conn: Connection, error: NodeJS.ErrnoException, handshakeDone: boolean, answered: boolean): string {
  const host = new URL(conn.url).host;
  const tls = tlsProblemOf(error, handshakeDone, answered);
  if (tls !== null) return `${conn.url}: ${describeTlsProblem(tls, { peer: 'the fleet server', caSource: conn.caSource, certSource: conn.certSource, host })}`;
  if (error.code === 'ECONNREFUSED') return `cannot reach ${conn.url}: connection refused (nothing listens at ${host})`;
  const code = error.code !== undefined && !error.message.includes(error.code) ? `${error.code}: ` : '';
  return `cannot reach ${conn.url}: ${code}${error.message}`;
}

async function call(conn: Connection, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const answer = await outboundRequest({
    url: `${conn.url}${path}`,
    method,
    headers: payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
    body: payload,
    tls: { cert: conn.cert, key: conn.key, ca: conn.ca },
    timeoutMs: conn.timeoutMs,
    // The command's own wait: its timer holds the process open as the connection does.
    scheduler: keepAliveScheduler,
    maxBytes: maxAnswerBytes,
    json: true,
  });
  if (answer.ok) return { status: answer.status, json: answer.json !== undefined && 'value' in answer.json ? answer.json.value : undefined, text: answer.text };
  switch (answer.reason) {
    case 'timeout':
      throw new CallError(`${conn.url}${path}: no answer within ${conn.timeoutMs} ms`);
    case 'too_large':
      throw new AnswerTooLargeError(`the answer is larger than ${maxAnswerBytes} bytes (status ${answer.status ?? 0}); not read further`);
    case 'aborted':
      throw new CallError(`${conn.url}${path}: ${messageOf(answer.error)}`);
    case 'bad_response':
      // The answer broke off: Node's words for it.
      if (answer.kind !== 'not-http') throw answer.error;
      break;
    default:
      break;
  }
  throw new CallError(describeCallFailure(conn, answer.error, answer.handshakeDone, answer.answered));
}

type Json = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/** What a command prints, and whether the answer was whole (every node answered, or the fleet said OK). */
interface Rendered {
  text: string;
  partial: boolean;
}

/** `width`: the columns to fit (none: --wide, nothing cut). */
type Renderer = (body: Json, width: number | undefined, wide: boolean) => Rendered;

/** A table and, when it cut cells, the line that says how to see them whole. */
function fitted(columns: readonly Column[], rows: ReadonlyArray<readonly Cell[]>, width: number | undefined): string {
  const table = renderTable(columns, rows, width);
  return table.text + (width === undefined ? '' : cutNote(table, width));
}

/** ISO 8601 to the second: `2026-11-27T06:00:40Z`. */
const toSecond = (iso: unknown): string => str(iso).replace(/\.\d+Z$/, 'Z');

const nodeColumn: Column = { header: 'NODE', min: 12, phase: 2 };
const groupColumn: Column = { header: 'GROUP', min: 8, phase: 2 };

function nodeDetail(node: Json): string {
  const detail =
    node.status === 'failing'
      ? list(node.failed_checks)
          .map((check) => `${str(check.component)}: ${str(check.reason)}`)
          .join('; ')
      : str(node.error);
  // Its companion's certificates and disk, when known (docs/fleet-certificates.md).
  const companion = companionDetail(node.companion);
  return detail === '' ? companion : companion === '' ? detail : `${detail}; ${companion}`;
}

const renderStatus: Renderer = (body, width, wide) => {
  const nodes = list(body.nodes);
  const columns: Column[] = [
    nodeColumn,
    groupColumn,
    { header: 'DIALECT' },
    { header: 'STATUS' },
    // Why a node is down matters more than its latency: the latency goes first when the table is too wide.
    { header: 'LATENCY', optional: true },
    ...(wide ? [{ header: 'URL' }] : []),
    { header: 'DETAIL', min: 12 },
  ];
  const rows = nodes.map((node) => [
    str(node.name),
    str(node.group),
    str(node.dialect),
    str(node.status),
    `${str(node.latencyMs)}ms`,
    ...(wide ? [str(node.url)] : []),
    nodeDetail(node),
  ]);
  // With discovery not yet listed, the reason says why the answer is 503 whatever the nodes say.
  const reason = typeof body.reason === 'string' ? prose(body.reason, width) : '';
  const summary = prose(`${str(body.healthy)}/${str(body.total)} healthy (${str(body.required)} required): ${str(body.status)}`, width);
  return { text: `${fitted(columns, rows, width)}${summary}${reason}`, partial: body.status !== 'OK' };
};

const renderVersions: Renderer = (body, width) => {
  const versions = list(body.versions);
  const unreachable = list(body.unreachable);
  const answered = versions.reduce((sum, group) => sum + (Array.isArray(group.nodes) ? group.nodes.length : 0), 0);
  let text = '';
  if (versions.length > 0) {
    text += fitted(
      [
        { header: 'VERSION', min: 10 },
        { header: 'COMMIT', min: 10 },
        { header: 'NODES', min: 16 },
      ],
      versions.map((group) => [str(group.version), str(group.commit), { list: (Array.isArray(group.nodes) ? group.nodes : []).map(str) }]),
      width,
    );
  }
  if (unreachable.length > 0) {
    if (text !== '') text += '\n';
    text += fitted(
      [{ ...nodeColumn, header: 'NOT ANSWERED' }, { header: 'REASON' }, { header: 'ERROR', min: 12 }],
      unreachable.map((node) => [str(node.name), str(node.reason), str(node.error)]),
      width,
    );
  }
  const nodes = (count: number): string => `${count} ${count === 1 ? 'node' : 'nodes'}`;
  let verdict: string;
  if (unreachable.length === 0) verdict = body.skew === true ? 'version skew: the nodes run more than one version' : 'no version skew';
  else if (answered === 0) verdict = `no node answered: ${nodes(unreachable.length)} did not, their versions are unknown`;
  else if (body.skew === true)
    verdict = `version skew: the ${nodes(answered)} that answered run ${versions.length} versions; ${nodes(unreachable.length)} did not answer`;
  else
    verdict = `no version skew among the ${nodes(answered)} that answered, but ${nodes(unreachable.length)} did not answer: their versions are unknown, so skew is not ruled out`;
  return { text: text + prose(verdict, width), partial: unreachable.length > 0 };
};

const renderLogSpecs: Renderer = (body, width) => {
  const nodes = list(body.nodes);
  const failed = nodes.filter((node) => node.status !== 'ok').length;
  const text = fitted(
    [nodeColumn, groupColumn, { header: 'SPEC', min: 16 }, { header: 'PUT BACK AT' }],
    nodes.map((node) => [
      str(node.name),
      str(node.group),
      node.status === 'ok' ? str(node.spec) : `(${str(node.status)}: ${str(node.error)})`,
      toSecond(node.putBackAt),
    ]),
    width,
  );
  if (failed === 0) return { text, partial: false };
  const verdict =
    failed === nodes.length
      ? `no node answered: ${failed} of ${nodes.length} did not, their specs are unknown`
      : `${failed} of ${nodes.length} nodes did not answer: their specs are unknown`;
  return { text: text + prose(verdict, width), partial: true };
};

const renderSet: Renderer = (body, width) => {
  const nodes = list(body.nodes);
  const took = nodes.filter((node) => node.result === 'applied' || node.result === 'rollback_failed').length;
  const rolledBack = nodes.filter((node) => node.result === 'rolled_back').length;
  const spec = `spec '${str(body.spec)}'`;
  let head: string;
  if (body.complete === true) {
    head = `${spec} set on ${nodes.length} of ${nodes.length} nodes, ${body.putBackAt ? `put back at ${toSecond(body.putBackAt)}` : 'permanently (no TTL)'}`;
  } else {
    head = `${spec}: NOT applied on every node`;
    if (rolledBack > 0) head += `; all-or-nothing put ${rolledBack} back`;
    head += took > 0 ? `; ${took} of ${nodes.length} hold it` : '; no node holds it';
    if (body.putBackAt) head += `, put back at ${toSecond(body.putBackAt)}`;
  }
  const table = fitted(
    [nodeColumn, { header: 'RESULT' }, { header: 'PREVIOUS', min: 10 }, { header: 'DETAIL', min: 12 }],
    nodes.map((node) => [str(node.name), str(node.result), str(node.previous), node.reason ? `${str(node.reason)}: ${str(node.error)}` : '']),
    width,
  );
  return { text: prose(head, width) + table, partial: body.complete !== true };
};

const renderRestore: Renderer = (body, width) => {
  const nodes = list(body.nodes);
  if (nodes.length === 0) return { text: 'no pending put-back\n', partial: false };
  const text = fitted(
    [nodeColumn, { header: 'RESULT' }, { header: 'SPEC', min: 10 }, { header: 'DETAIL', min: 12 }],
    nodes.map((node) => [str(node.name), str(node.result), str(node.spec), str(node.error)]),
    width,
  );
  return { text, partial: nodes.some((node) => node.result === 'failed') };
};

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

/** Pure: the nodes a selector means, in words (`every node of the fleet`, `the nodes of group org1 with role=peer`). */
export function describeSelector(selector: NodeSelector): string {
  const parts: string[] = [];
  if (selector.names) parts.push(`named ${selector.names.join(', ')}`);
  if (selector.groups) parts.push(`of group ${selector.groups.join(' or ')}`);
  if (selector.dialect) parts.push(`of dialect ${selector.dialect}`);
  if (selector.labels)
    parts.push(
      `with ${Object.entries(selector.labels)
        .map(([key, value]) => `${key}=${value}`)
        .join(',')}`,
    );
  return parts.length === 0 ? 'every node of the fleet' : `the nodes ${parts.join(' and ')}`;
}

/** Pure: does the spec set a debug (or payload) level anywhere? False for a spec that does not parse (the server says why). */
export function raisesToDebug(spec: string): boolean {
  try {
    const parsed = parseLogSpec(spec);
    return [parsed.defaultLevel, ...parsed.loggers.values()].some((level) => level === 'debug' || level === 'payload');
  } catch {
    return false;
  }
}

interface SetPlan {
  body: { spec: string; selector: NodeSelector; ttl?: string; allOrNothing?: true };
  /** What the command says before it changes anything. */
  announcement: string;
}

/**
 * `logspec set SPEC`: a selector or --all (a fleet-wide change needs the word), a TTL within its
 * bounds, and the debug default (defaultDebugTtl) unless --ttl or --permanent says otherwise.
 */
function planSet(spec: string, values: Record<string, unknown>): SetPlan {
  const selector = selectorFrom(values);
  const given = values.ttl as string | undefined;
  if (given !== undefined && values.permanent === true) throw new UsageError('--ttl and --permanent: give one (--permanent means no TTL)');
  const debug = raisesToDebug(spec);
  const ttl = given ?? (debug && values.permanent !== true ? defaultDebugTtl : undefined);
  if (ttl !== undefined) {
    const parsed = parsePositiveDurationMs(ttl);
    if (!parsed.ok) throw new UsageError(`--ttl: ${parsed.problem}`);
    const bounds = ttlProblem(parsed.value, ttl);
    if (bounds !== null) throw new UsageError(`--ttl: ${bounds}`);
  }
  const selected = Object.keys(selector).length > 0;
  if (values.all === true && selected) throw new UsageError('--all selects every node: give it alone, or --node, --group, --dialect, --selector without it');
  if (values.all !== true && !selected) {
    throw new UsageError('fleet logspec set: which nodes? Give --node, --group, --dialect or --selector, or --all to change every node of the fleet');
  }
  const how =
    given !== undefined
      ? `for ${given}, then put back (logspec restore puts it back sooner)`
      : ttl !== undefined
        ? `for ${ttl}, the default for a debug level, then put back (--ttl chooses, --permanent keeps it)`
        : 'permanently (no TTL: logspec restore cannot undo it)';
  const allOrNothing = values['all-or-nothing'] === true;
  return {
    body: { spec, selector, ...(ttl !== undefined ? { ttl } : {}), ...(allOrNothing ? { allOrNothing: true as const } : {}) },
    announcement: `setting '${spec}' on ${describeSelector(selector)}${values.all === true ? ' (--all)' : ''}, ${how}${allOrNothing ? ', all or nothing' : ''}`,
  };
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
    // One read of the chains: a node lagging is behind at once (behindFor cannot be seen), stalled cannot be seen.
    fleet = new FleetService(
      { ...config, minRoundIntervalMs: 0, channels: { ...config.channels, behindForMs: 0 } },
      { logger: logging.getLogger('fleet'), metrics: new DisabledProvider() },
    );
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
      case '/fleet/channels': {
        const report = await fleet.channels();
        return { status: report.reason === undefined ? 200 : 503, json: report as unknown as Json };
      }
      case '/fleet/certificates':
        return { status: 200, json: (await fleet.certificates()) as unknown as Json };
      default:
        return { status: 200, json: { nodes: await fleet.readLogSpecs() } };
    }
  } finally {
    await fleet.stop();
  }
}

/** The command's flags (node:util parseArgs). */
const fleetOptions = {
  url: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  cacert: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  wide: { type: 'boolean' },
  selector: { type: 'string' },
  node: { type: 'string', multiple: true },
  group: { type: 'string', multiple: true },
  dialect: { type: 'string' },
  all: { type: 'boolean' },
  ttl: { type: 'string' },
  permanent: { type: 'boolean' },
  'all-or-nothing': { type: 'boolean' },
  'fleet-config': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** What a command line asks for: the request to the fleet endpoint, how to show its answer, and what to say before a write. */
interface Plan {
  method: 'GET' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  render: Renderer;
  announcement: string | null;
}

/** Reads the command (its positionals) and the flags that go with it; UsageError naming what is wrong. */
function planCommand(positionals: readonly string[], values: Record<string, unknown>): Plan {
  const command = positionals.join(' ');
  const rest = (expected: number): void => {
    if (positionals.length !== expected)
      throw new UsageError(`fleet ${positionals.slice(0, expected).join(' ')}: unexpected argument "${positionals[expected] ?? ''}"`);
  };
  const writeOnly = (flags: string[]): void => {
    const given = flags.filter((flag) => values[flag] !== undefined);
    if (given.length > 0)
      throw new UsageError(`fleet ${command}: --${given.join(', --')} only go with logspec set${given.includes('all') ? ' and restore' : ''}`);
  };
  const read = (expected: number, path: string, render: Renderer): Plan => {
    rest(expected);
    writeOnly(['all', 'ttl', 'permanent', 'all-or-nothing']);
    return { method: 'GET', path, render, announcement: null };
  };
  const verb = positionals[0] === 'logspec' ? `logspec ${positionals[1] ?? ''}` : (positionals[0] ?? '');
  if (values['fleet-config'] !== undefined && (verb === 'logspec set' || verb === 'logspec restore')) {
    throw new UsageError(
      `fleet ${command}: --fleet-config answers status, versions, channels, certs and logspec get; writes go through a running fleet endpoint (--url), whose process owns the TTL put-backs`,
    );
  }
  switch (verb) {
    case 'status':
      return read(1, '/fleet/healthz', renderStatus);
    case 'versions':
      return read(1, '/fleet/version', renderVersions);
    case 'channels':
      return read(1, '/fleet/channels', renderChannels);
    case 'certs':
      return read(1, '/fleet/certificates', renderCertificates);
    case 'logspec get':
      return read(2, '/fleet/logspec', renderLogSpecs);
    case 'logspec set': {
      const spec = positionals[2];
      if (spec === undefined) throw new UsageError('fleet logspec set: the SPEC argument is missing (e.g. gossip=debug:info)');
      rest(3);
      const plan = planSet(spec, values);
      return { method: 'PUT', path: '/fleet/logspec', body: plan.body, render: renderSet, announcement: plan.announcement };
    }
    case 'logspec restore': {
      rest(2);
      writeOnly(['ttl', 'permanent', 'all-or-nothing']);
      // Without a selector every pending put-back is put back; --all says so, and takes no selector.
      const selector = selectorFrom(values);
      if (values.all === true && Object.keys(selector).length > 0)
        throw new UsageError('--all selects every node: give it alone, or --node, --group, --dialect, --selector without it');
      return { method: 'DELETE', path: '/fleet/logspec', body: { selector }, render: renderRestore, announcement: null };
    }
    default:
      throw new UsageError(
        command === '' ? 'a command is required: status, versions, channels, certs, logspec get|set|restore' : `unknown fleet command "${command}"`,
      );
  }
}

/** Runs the command; returns the exit status. Writes to the given streams. */
export async function runFleetCommand(argv: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  // Every line on stderr is escaped: it may quote what the server, a node or the command line said.
  const fail = (line: string): void => void err.write(`fabric-ops fleet: ${escapeForLog(line)}\n`);
  try {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: fleetOptions });
    if (values.help) {
      out.write(fleetUsage);
      return 0;
    }
    const fleetConfig = values['fleet-config'];
    const { method, path, body, render, announcement } = planCommand(positionals, values);
    const width = outputWidth(out, env, values.wide === true);
    const print = (json: Json, status: number): number => {
      const rendered = render(json, width, values.wide === true);
      // --json: the answer as the server gave it, each line escaped as a log line is (still JSON, the
      // same value: JSON already escapes the C0 controls in strings, so a raw line break is layout).
      out.write(values.json ? `${JSON.stringify(json, null, 2).split('\n').map(escapeForLog).join('\n')}\n` : rendered.text);
      return status >= 200 && status < 300 && !rendered.partial ? 0 : 1;
    };
    if (fleetConfig !== undefined) {
      const answer = await oneShot(fleetConfig, path, err);
      return print(answer.json, answer.status);
    }
    const conn = connection(values, env);
    if (announcement !== null) err.write(prose(`fabric-ops fleet: ${announcement}`, width));
    let answer;
    try {
      answer = await call(conn, method, path, body);
    } catch (error) {
      fail(error instanceof AnswerTooLargeError ? `${conn.url}${path}: ${error.message}` : messageOf(error));
      return 1;
    }
    const json = answer.json as Json | undefined;
    if (json === undefined || typeof json !== 'object' || json === null || Array.isArray(json) || (answer.status >= 400 && typeof json.error === 'string')) {
      fail(`${conn.url}${path} answered ${answer.status}: ${json && typeof json.error === 'string' ? json.error : answer.text.slice(0, 200)}`);
      return 1;
    }
    return print(json, answer.status);
  } catch (error) {
    if (error instanceof UsageError || (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      fail(messageOf(error));
      err.write('run fabric-ops fleet --help for usage\n');
      return 2;
    }
    // One-shot: no Kubernetes credentials, a discovery source that cannot list (its name and the API server's message).
    if (error instanceof FabricOpsError) {
      fail(messageOf(error));
      return 1;
    }
    throw error;
  }
}
