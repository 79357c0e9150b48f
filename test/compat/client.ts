import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { KeyPair } from '../support/pki';
import type { Answer, ClientCert, HttpAnswer, HttpCase } from './model';

/** Where a case is sent: one operations server, Fabric's or ours. */
export interface Target {
  port: number;
  /** Null: plain HTTP. */
  tls: null | { ca: string; clients: Record<Exclude<ClientCert, 'none'>, KeyPair> };
  /** Keep-alive agent for bulk plain requests. */
  agent?: http.Agent;
}

export const sentRequestId = 'compat-request-0001';
const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type SendRequest = { method: string; path: string; client?: ClientCert; body?: string; headers?: Record<string, string> };

/**
 * One request. A keep-alive socket the server closed as idle (Node's and Go's idle timeouts) at
 * the moment it is reused resets before any answer: the server never read that request, so it is
 * sent once more on a new socket, as Node's documentation advises (request.reusedSocket).
 */
export async function send(target: Target, request: SendRequest): Promise<RawAnswer> {
  try {
    return await sendOnce(target, request);
  } catch (error) {
    if ((error as { reusedSocket?: boolean }).reusedSocket === true && (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
      return sendOnce(target, request);
    }
    throw error;
  }
}

function sendOnce(target: Target, request: SendRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const client = request.client ?? 'trusted';
    const headers: Record<string, string | number> = { ...request.headers };
    if (request.body !== undefined) headers['Content-Length'] = Buffer.byteLength(request.body);
    const common: http.RequestOptions = {
      host: '127.0.0.1',
      port: target.port,
      method: request.method,
      path: request.path,
      headers,
      timeout: 10_000,
    };
    const onResponse = (res: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    };
    let req: http.ClientRequest;
    if (target.tls) {
      const pair = client === 'none' ? undefined : target.tls.clients[client];
      req = https.request({ ...common, agent: false, ca: target.tls.ca, cert: pair?.certPem, key: pair?.keyPem, servername: 'localhost' }, onResponse);
    } else {
      req = http.request({ ...common, agent: target.agent ?? false }, onResponse);
    }
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out after 10 s'), { code: 'TIMEOUT' })));
    req.on('error', (error) => reject(Object.assign(error, { reusedSocket: req.reusedSocket })));
    req.end(request.body);
  });
}

/** The spec GET /logspec shows (with the trusted client), or a description of what came instead. */
export async function readSpec(target: Target): Promise<string> {
  const answer = await send(target, { method: 'GET', path: '/logspec' });
  if (answer.status !== 200) return `<GET /logspec answered ${answer.status}>`;
  try {
    const parsed = JSON.parse(answer.body) as { spec?: unknown };
    return typeof parsed.spec === 'string' ? parsed.spec : `<${answer.body}>`;
  } catch {
    return `<${answer.body}>`;
  }
}

export async function putSpec(target: Target, spec: string): Promise<void> {
  const answer = await send(target, { method: 'PUT', path: '/logspec', body: JSON.stringify({ spec }), headers: { 'Content-Type': 'application/json' } });
  if (answer.status !== 204) throw new Error(`PUT /logspec ${spec} to port ${target.port} answered ${answer.status}: ${answer.body}`);
}

const shownValues = new Set(['spec', 'status', 'component']);

/** The JSON's shape: key names (sorted) and value types; the values of spec, status and component. */
export function jsonShape(value: unknown, key?: string): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${[...new Set(value.map((v) => jsonShape(v)))].join('|')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${k}:${jsonShape(v, k)}`).join(',')}}`;
  }
  if (typeof value === 'string' && key !== undefined && shownValues.has(key)) return JSON.stringify(value);
  return typeof value;
}

export function describeBody(body: string): string {
  if (body === '') return 'empty';
  if (/^# (HELP|TYPE) /.test(body)) return 'Prometheus text exposition';
  try {
    return jsonShape(JSON.parse(body));
  } catch {
    const text = body.trim();
    return `text ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}`;
  }
}

/** The body itself when short and not the text exposition: recordings keep it for the reader (Fabric's error texts). */
export function rawBody(body: string): string | undefined {
  return body.length <= 256 && !/^# (HELP|TYPE) /.test(body) ? body : undefined;
}

function describeRequestId(value: string | string[] | undefined): string {
  if (value === undefined) return 'absent';
  if (value === sentRequestId) return 'echoed';
  if (typeof value === 'string' && uuidV4.test(value)) return 'uuid';
  return 'other';
}

function contentTypeOf(headers: http.IncomingHttpHeaders, full: boolean): string | null {
  const value = headers['content-type'];
  if (value === undefined) return null;
  return full ? value : (value.split(';')[0] ?? '').trim().toLowerCase();
}

/** How a failed request looks: a refused handshake, or a connection that gave no answer. */
function describeFailure(error: unknown, tls: boolean): Answer {
  const err = error as NodeJS.ErrnoException;
  const code = err.code ?? '';
  const alert = /^ERR_SSL_.*ALERT_(\w+)$/.exec(code);
  if (alert?.[1]) return { kind: 'tls-refused', detail: `alert ${alert[1].toLowerCase().replace(/_/g, ' ')}` };
  if (tls && (code === 'ECONNRESET' || /socket hang up/.test(err.message))) return { kind: 'tls-refused', detail: 'connection closed during the handshake' };
  return { kind: 'no-answer', detail: code || err.message };
}

/** An HTTP/1.1 request written in clear text to a TLS port; what comes back, if anything. */
function plainToTls(port: number, path: string): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    const finish = (detail?: string): void => {
      socket.destroy();
      const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(data);
      if (!statusLine?.[1]) {
        resolve({ kind: 'no-answer', detail: detail ?? (data === '' ? 'connection closed' : `not HTTP: ${JSON.stringify(data.slice(0, 20))}`) });
        return;
      }
      const [head = '', body = ''] = data.split('\r\n\r\n');
      const headers: http.IncomingHttpHeaders = {};
      for (const line of head.split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        kind: 'http',
        status: Number(statusLine[1]),
        contentType: contentTypeOf(headers, false),
        body: describeBody(body),
        requestId: describeRequestId(headers['x-request-id']),
        raw: rawBody(body),
      });
    };
    socket.setTimeout(3000, () => finish('no answer within 3 s'));
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('error', (error: NodeJS.ErrnoException) => finish(data === '' ? (error.code ?? error.message) : undefined));
    socket.on('end', () => finish());
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
  });
}

/** Sends the case, then (when asked) reads the spec; resets it to `info` when it changed. */
export async function runCase(target: Target, c: HttpCase): Promise<Answer> {
  if (c.transport === 'plain-to-tls') return plainToTls(target.port, c.path);
  let answer: Answer;
  try {
    const raw = await send(target, { method: c.method, path: c.path, client: c.client, body: c.body, headers: c.headers });
    answer = {
      kind: 'http',
      status: raw.status,
      contentType: contentTypeOf(raw.headers, c.fullContentType === true),
      body: describeBody(raw.body),
      requestId: describeRequestId(raw.headers['x-request-id']),
      raw: rawBody(raw.body),
    };
  } catch (error) {
    answer = describeFailure(error, target.tls !== null);
  }
  if (c.checkState && answer.kind === 'http') {
    answer.state = await readSpec(target);
    if (answer.state !== 'info') await putSpec(target, 'info');
  }
  return answer;
}

/**
 * PUT /logspec with a generated body, then the spec GET /logspec shows: what the generated cases
 * compare (status, media type, body shape, whether a request id came, the spec afterwards).
 */
export async function putAndRead(target: Target, body: string): Promise<HttpAnswer> {
  const raw = await send(target, { method: 'PUT', path: '/logspec', body, headers: { 'Content-Type': 'application/json' } });
  const state = await readSpec(target);
  return {
    kind: 'http',
    status: raw.status,
    contentType: raw.headers['content-type']?.split(';')[0]?.trim() ?? null,
    body: describeBody(raw.body),
    requestId: raw.headers['x-request-id'] ? 'present' : 'absent',
    state,
  };
}
