import { isHttpCase, type Answer, type AnyCase, type HttpCase } from './model';

/**
 * The deliberate deviations of fabric-ops from Fabric's operations service. The differential
 * suite reads this table, live (test/real/compat) and in the replay of recordings (replay.test.ts):
 * a difference no entry explains fails the run, and so does an entry no case needs. Rendered into
 * docs/reference/deviations.md and docs/compatibility.md (`make compat`, `make compat-record`).
 *
 * A matcher must be narrow: it names the request it applies to and both answers, and never
 * hides a difference in the state afterwards unless the deviation is about that state.
 */
export interface Deviation {
  id: string;
  title: string;
  fabric: string;
  ours: string;
  why: string;
  /** Release lines (`2.5`, `3.0`) where Fabric behaves as `fabric` says; absent: every release compared. */
  releases?: readonly string[];
  matches(c: AnyCase, fabric: Answer, ours: Answer): boolean;
}

/** Whether a deviation applies to a release line (`3.0`). */
export function appliesTo(deviation: Deviation, line: string): boolean {
  return deviation.releases === undefined || deviation.releases.includes(line);
}

type HttpAnswer = Extract<Answer, { kind: 'http' }>;

const endpoints = new Set(['/logspec', '/healthz', '/metrics', '/version']);
const protectedPaths = new Set(['/logspec', '/metrics']);

function endpointOf(c: HttpCase): string | null {
  const path = c.path.split('?')[0] ?? '';
  return endpoints.has(path) ? path : null;
}

/** Both answered over HTTP, for an HTTP case, with the same state afterwards. */
function httpPair(c: AnyCase, fabric: Answer, ours: Answer): { c: HttpCase; f: HttpAnswer; o: HttpAnswer } | null {
  if (!isHttpCase(c) || fabric.kind !== 'http' || ours.kind !== 'http') return null;
  if (fabric.state !== ours.state) return null;
  return { c, f: fabric, o: ours };
}

function values(c: AnyCase, fabric: Answer, ours: Answer, topic: string): { f: string; o: string } | null {
  if (isHttpCase(c) || c.topic !== topic || fabric.kind !== 'value' || ours.kind !== 'value') return null;
  return { f: fabric.value, o: ours.value };
}

const jsonError = (a: HttpAnswer, status: number): boolean =>
  a.status === status && a.contentType === 'application/json' && /^\{error:string\}$|^empty$/.test(a.body);

/** The spec would be refused by a strict `{"spec": <string>}` reading. */
function notStrictSpecBody(body: string | undefined): boolean {
  try {
    const value = JSON.parse(body ?? '') as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return true;
    const keys = Object.keys(value);
    return !(keys.length === 1 && keys[0] === 'spec' && typeof (value as { spec: unknown }).spec === 'string');
  } catch {
    return true;
  }
}

export const deviations: readonly Deviation[] = [
  {
    id: 'D1',
    title: 'another method on a known path',
    fabric:
      '/logspec and /version: 400 {"error"} (on /version the key is "Error"); /healthz: 405 with no body and no Content-Type; /metrics: answers every method like GET',
    ours: '405 {"error":"method X not allowed ..."} with an Allow header, on every path',
    why: 'one status and one body shape for the same mistake everywhere; 405 with Allow is what HTTP defines',
    matches(c, fabric, ours) {
      const p = httpPair(c, fabric, ours);
      if (!p || !endpointOf(p.c) || ['GET', 'HEAD', 'OPTIONS'].includes(p.c.method)) return false;
      if (p.c.method === 'PUT' && endpointOf(p.c) === '/logspec') return false;
      return jsonError(p.o, 405) && [400, 405, 200].includes(p.f.status);
    },
  },
  {
    id: 'D2',
    title: 'HEAD',
    fabric: '400 on /logspec and /version, 405 on /healthz',
    ours: 'answered as GET without the body, wherever GET is allowed',
    why: 'HTTP requires HEAD wherever GET works; probes and monitors use it',
    matches(c, fabric, ours) {
      const p = httpPair(c, fabric, ours);
      if (!p) return false;
      // GET /healthz is 503 while a checker fails; HEAD answers the same.
      const getStatuses = endpointOf(p.c) === '/healthz' ? [200, 503] : [200];
      return p.c.method === 'HEAD' && !!endpointOf(p.c) && getStatuses.includes(p.o.status) && p.o.body === 'empty' && [400, 405].includes(p.f.status);
    },
  },
  {
    id: 'D3',
    title: 'OPTIONS',
    fabric: '400 on /logspec and /version, 405 on /healthz, 200 with the exposition on /metrics, 401 on protected paths without a certificate',
    ours: '204 with an Allow header and no body, also without a client certificate (it reveals only the methods)',
    why: 'lets clients discover the allowed methods; nothing but the Allow list is disclosed',
    matches(c, fabric, ours) {
      const p = httpPair(c, fabric, ours);
      return !!p && p.c.method === 'OPTIONS' && !!endpointOf(p.c) && p.o.status === 204 && p.o.body === 'empty' && p.f.status !== 204;
    },
  },
  {
    id: 'D4',
    title: 'unknown path (also /logspec/, /LOGSPEC)',
    fabric: '404 text/plain "404 page not found", without X-Request-Id',
    ours: '404 {"error":"no such resource: <path>"} with X-Request-Id',
    why: 'JSON errors everywhere, and a request id on every answer for log correlation',
    matches(c, fabric, ours) {
      const p = httpPair(c, fabric, ours);
      return !!p && p.f.status === 404 && p.f.contentType === 'text/plain' && jsonError(p.o, 404) && p.o.requestId !== 'absent';
    },
  },
  {
    id: 'D5',
    title: 'non-canonical path (//logspec)',
    fabric: '301 redirect to the cleaned path (Go ServeMux), without X-Request-Id',
    ours: '404 {"error"}: paths are exact',
    why: 'paths are exact and case-sensitive (spec); a redirect would send a PUT body nowhere',
    matches(c, fabric, ours) {
      const p = httpPair(c, fabric, ours);
      return !!p && p.c.path.startsWith('//') && p.f.status === 301 && jsonError(p.o, 404);
    },
  },
  {
    id: 'D6',
    title: 'protected path without a client certificate (TLS on)',
    fabric: '401 with no body, no Content-Type, no X-Request-Id',
    ours: '401 {"error":"a client certificate issued by a trusted client CA is required for <path>"} with X-Request-Id',
    why: 'say what is missing; JSON errors and request ids everywhere',
    matches(c, fabric, ours) {
      const p = httpPair(c, fabric, ours);
      return !!p && p.c.client === 'none' && protectedPaths.has(endpointOf(p.c) ?? '') && p.f.status === 401 && p.f.body === 'empty' && jsonError(p.o, 401);
    },
  },
  {
    id: 'D7',
    title: 'PUT /logspec body other than {"spec": "<string>"}',
    fabric:
      'unknown keys ignored, key names case-insensitive ("SPEC"), {} and a body without "spec" reset the spec to the default, JSON null accepted, data after the first JSON value ignored: 204',
    ours: '400 {"error"} naming the problem; the spec is unchanged',
    why: 'the spec asks for exactly {"spec": string}; a typo must not silently reset every logger to info',
    matches(c, fabric, ours) {
      if (!isHttpCase(c) || fabric.kind !== 'http' || ours.kind !== 'http') return false;
      return c.method === 'PUT' && c.path === '/logspec' && notStrictSpecBody(c.body) && fabric.status === 204 && jsonError(ours, 400);
    },
  },
  {
    id: 'D8',
    title: 'the payload level in GET /logspec',
    fabric: 'shown as Level(-2), which PUT /logspec then refuses',
    ours: 'shown as payload: whatever GET returns can be PUT back',
    why: 'round trip of the spec (Fabric bug: zap has no name for its custom level)',
    matches(c, fabric, ours) {
      if (!isHttpCase(c) || fabric.kind !== 'http' || ours.kind !== 'http' || fabric.state === undefined) return false;
      return fabric.state.includes('Level(-2)') && fabric.state.replace(/Level\(-2\)/g, 'payload') === ours.state && fabric.status === ours.status;
    },
  },
  {
    id: 'D9',
    title: 'counter names in /metrics',
    fabric: 'logging_entries_checked, logging_entries_written (no _total in the text format)',
    ours: 'logging_entries_checked_total, logging_entries_written_total',
    why: 'promtool check metrics rejects a counter without _total; Prometheus stores <name>_total either way',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'metrics');
      if (!v || isHttpCase(c)) return false;
      return /: logging_entries_(checked|written): name, type, labels$/.test(c.id) && v.f === v.o.replace(/^(\w+)_total /, '$1 ');
    },
  },
  {
    id: 'D10',
    title: "the service's own metric families",
    fabric: 'fabric_version and the logging counters',
    ours: 'also logging_spec_changes, health_check_duration_seconds, health_check_status and operations_requests (and StatsD buckets logging.spec_changes, operations.requests.*)',
    why: 'operators asked to see spec changes, health checks and request counts',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'metrics') ?? values(c, fabric, ours, 'statsd');
      return (
        !!v && v.f === 'absent' && v.o !== 'absent' && /(logging_spec_changes|health_check_|operations_requests|spec_changes|operations\.requests)/.test(c.id)
      );
    },
  },
  {
    id: 'D11',
    title: 'the version in fabric_version and /version',
    fabric: 'the Fabric release (label version="2.5.12", StatsD bucket fabric_version.2_5_12)',
    ours: "fabric-ops' own package version",
    why: 'fabric-ops is not that Fabric release; claiming its version would mislead',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'statsd') ?? values(c, fabric, ours, 'metrics');
      return (
        !!v &&
        /fabric_version/.test(c.id) &&
        v.f.replace(/fabric_version\.[\w]+/g, 'fabric_version.V').replace(/version="[^"]*"/g, '') ===
          v.o.replace(/fabric_version\.[\w]+/g, 'fabric_version.V').replace(/version="[^"]*"/g, '')
      );
    },
  },
  {
    id: 'D12',
    title: 'logging spec changes are logged',
    fabric: 'changes the spec silently (no log entry, so logging_entries_* do not move)',
    ours: 'logs each change at info (old spec, new spec, client certificate subject): logging.entries_checked/written{level="info"} count one more per change',
    why: 'an audit trail of who changed the log levels (spec)',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'metrics');
      // The sequence makes three successful changes (debug, warning, info).
      return !!v && /: logging_entries_(checked|written): values$/.test(c.id) && v.f === 'increments none' && v.o === 'increments {level="info"}+3';
    },
  },
  {
    id: 'D13',
    title: 'TLS on, client authentication required, no clientRootCAs',
    fabric: 'starts, and then refuses every client',
    ours: 'refuses to start, naming the key',
    why: 'a server nobody can reach is a configuration mistake best caught at start',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'config');
      return !!v && /clientRootCAs empty/.test(c.id) && v.f.startsWith('starts') && v.o.startsWith('refused at start');
    },
  },
  {
    id: 'D14',
    title: 'unknown metrics provider',
    fabric: 'a warning; metrics disabled',
    ours: 'refuses to start, naming the key and the allowed values',
    why: 'a typo would otherwise switch monitoring off silently',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'config');
      return !!v && /provider prometeus/.test(c.id) && v.f.startsWith('starts') && v.o.startsWith('refused at start');
    },
  },
  {
    id: 'D15',
    title: 'StatsD over TCP with the daemon down at start',
    fabric: 'refuses to start',
    ours: 'starts, warns, drops metrics until the daemon answers (then reconnects)',
    why: 'a metrics daemon must not decide whether a node runs',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'config');
      return !!v && /statsd tcp daemon down/.test(c.id) && v.f.startsWith('refused at start') && v.o.startsWith('starts');
    },
  },
  {
    id: 'D16',
    title: 'list values in environment variables',
    fabric:
      'the peer takes only a whitespace-separated list (CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES="[a, b]" names the files "[a," and "b]" and fails at start); the orderer takes only [a, b] (a space-separated value is one file name, fails at start)',
    ours: 'both forms in both dialects',
    why: 'documented: lists are whitespace-separated or [a, b]; one rule for both node types',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'config');
      return !!v && /: list /.test(c.id) && v.f === 'refused at start' && v.o.startsWith('starts; ');
    },
  },
  {
    id: 'D17',
    title: 'a duration without a unit (writeInterval: 10)',
    fabric: 'read as nanoseconds (a 10 ns StatsD flush loop)',
    ours: 'refused at start: a Go duration needs a unit (500ms, 10s, 1m30s)',
    why: 'documented: values that do not parse as Go durations are configuration errors naming the key',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'config');
      return !!v && /: duration \S+=\d+$/.test(c.id) && v.f.startsWith('starts') && v.o === 'refused at start';
    },
  },
  {
    id: 'D18',
    title: 'plain HTTP sent to the TLS port',
    fabric: '400 in clear text: "Client sent an HTTP request to an HTTPS server."',
    ours: 'the connection is closed without an answer',
    why: "Node's TLS server owns the socket from the first byte; answering in clear text would need a byte-peeking front socket or a JavaScript stream wrapper on every TLS connection, which costs every handshake (probes open one per request)",
    matches(c, fabric, ours) {
      return isHttpCase(c) && c.transport === 'plain-to-tls' && fabric.kind === 'http' && fabric.status === 400 && ours.kind === 'no-answer';
    },
  },
  {
    id: 'D19',
    title: 'charset parameter on JSON answers',
    fabric: 'Content-Type: application/json',
    ours: 'Content-Type: application/json; charset=utf-8 (express)',
    why: 'express always names the charset; JSON is UTF-8 by definition (RFC 8259) and clients ignore the parameter',
    matches(c, fabric, ours) {
      const p = httpPair(c, fabric, ours);
      return (
        !!p &&
        p.c.fullContentType === true &&
        p.f.contentType === 'application/json' &&
        p.o.contentType === 'application/json; charset=utf-8' &&
        p.f.status === p.o.status &&
        p.f.body === p.o.body
      );
    },
  },
  {
    id: 'D20',
    title: 'escaping parameter on the text exposition format',
    fabric: 'Content-Type: text/plain; version=0.0.4; charset=utf-8; escaping=values',
    ours: 'Content-Type: text/plain; version=0.0.4; charset=utf-8 (prom-client)',
    why: "escaping= belongs to Prometheus' newer UTF-8 name negotiation; our metric names never need escaping, and Prometheus reads both",
    releases: ['2.5'],
    matches(c, fabric, ours) {
      const p = httpPair(c, fabric, ours);
      return (
        !!p &&
        p.c.fullContentType === true &&
        p.f.contentType === 'text/plain; version=0.0.4; charset=utf-8; escaping=values' &&
        p.o.contentType === 'text/plain; version=0.0.4; charset=utf-8' &&
        p.f.status === p.o.status
      );
    },
  },
  {
    id: 'D21',
    title: "a boolean environment value outside Go's ParseBool spellings (peer)",
    fabric: 'the peer starts and reads it as false (viper/cast): CORE_OPERATIONS_TLS_ENABLED=yes serves plain HTTP; the orderer refuses to start',
    ours: 'refuses to start in both dialects, naming the key, the value and the accepted spellings',
    why: 'an operator who wrote "yes" meant true: silently serving /logspec without TLS is the worst reading',
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'config');
      return !!v && /: boolean CORE_\w+=\S+$/.test(c.id) && v.f.startsWith('starts') && v.o === 'refused at start';
    },
  },
  {
    id: 'D22',
    title: 'an empty environment variable (CORE_OPERATIONS_TLS_ENABLED=, CORE_METRICS_PROVIDER=), peer',
    fabric:
      "3.0's peer applies the empty value: TLS off (plain HTTP where the file turns TLS on), metrics off (GET /metrics 404); 2.5, and 3.0's orderer, ignore it as fabric-ops does",
    ours: "read as unset on every release (2.5's rule): the file's value applies; one warning per empty variable says so, and that TLS stays as the file sets it",
    why: 'an empty variable must never turn TLS off silently; 2.5 LTS behaviour; one rule for a fleet running 2.5 and 3.x side by side during an upgrade (docs/reference/configuration.md: how values are read)',
    releases: ['3.0'],
    matches(c, fabric, ours) {
      const v = values(c, fabric, ours, 'config');
      if (!v || !/: empty \w+= \(file: \w+\)$/.test(c.id)) return false;
      return (v.f === 'starts; plain HTTP' && v.o === 'starts; HTTPS') || (v.f === 'starts; GET /metrics 404' && v.o === 'starts; GET /metrics 200');
    },
  },
];
