import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * A Kubernetes API server on 127.0.0.1 (HTTPS, bearer token) for the parts fabric-ops uses:
 * core/v1 events create and patch, configmaps list and watch (resourceVersion, fieldSelector,
 * timeoutSeconds, bookmarks, 410 Expired). Every body received is validated against the
 * Kubernetes schemas (kubernetes-models, plus unknown-field checks from @kubernetes/client-node's
 * models); an invalid one is answered 422 and kept in `invalid`.
 *
 * It behaves as kube-apiserver v1.28 was seen to behave (a v1.28.7 cluster: idle watches silent for 130 s), not as is convenient:
 * - an idle watch sends nothing at all, bookmarks included; with allowWatchBookmarks=true one
 *   BOOKMARK comes shortly before the watch's own timeoutSeconds expires, then the stream ends;
 * - a watch from a resourceVersion that is too old gets HTTP 200 and an in-stream ERROR event
 *   carrying a Status with code 410 (reason Expired), then the end of the stream;
 * - a restart (stop, then start) drops every watch and every resourceVersion a client holds is
 *   too old afterwards;
 * - 401 and 403 answers carry real Status bodies (403: `<resource> is forbidden: User "..."
 *   cannot <verb> resource "<resource>" in API group "" in the namespace "<ns>"`).
 * Faults: 401 (revoked token), 403 (RBAC), hanging requests, watches dropped mid-stream,
 * history compacted, watch streams that end after each event, malformed watch streams.
 */

export interface ReceivedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string;
  authorization: string;
  body: unknown;
}

export interface StoredEvent {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  involvedObject: { kind: string; name: string; namespace: string; uid?: string };
  reason: string;
  message: string;
  type: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string };
  [field: string]: unknown;
}

interface ConfigMapObject {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: { name: string; namespace: string; resourceVersion: string; uid: string };
  data: Record<string, string>;
}

export type FaultMode = 'none' | 'unauthorized' | 'forbidden' | 'hang';

/** The subject of the fake's service-account token, as RBAC messages name it. */
export const fakeServiceAccountUser = 'system:serviceaccount:fabric:fabric-ops';

const validatorSource = `
const { parentPort, workerData } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
const load = (file) => import(pathToFileURL(workerData.root + '/node_modules/' + file).href);
const ready = Promise.all([load('kubernetes-models/v1/index.js'), load('@kubernetes/client-node/dist/index.js')]);
function unknownFields(value, typeName, at, errors, clientNode) {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(typeName);
  if (array) { if (Array.isArray(value)) value.forEach((item, i) => unknownFields(item, array[1], at + '[' + i + ']', errors, clientNode)); return; }
  const map = /^\\{ \\[key: string\\]: (.+); \\}$/.exec(typeName);
  if (map) { for (const [key, item] of Object.entries(value)) unknownFields(item, map[1], at + '.' + key, errors, clientNode); return; }
  const model = clientNode[typeName];
  if (!model || !Array.isArray(model.attributeTypeMap) || typeof value !== 'object') return;
  const fields = new Map(model.attributeTypeMap.map((a) => [a.baseName, a.type]));
  for (const [key, item] of Object.entries(value)) {
    const type = fields.get(key);
    if (type === undefined) errors.push(at + '.' + key + ': unknown field');
    else unknownFields(item, type, at + '.' + key, errors, clientNode);
  }
}
parentPort.on('message', async ({ id, kind, body }) => {
  const [models, clientNode] = await ready;
  const errors = [];
  try { new models[kind](body).validate(); } catch (error) {
    const details = error && Array.isArray(error.errors) ? error.errors.map((e) => (e.instancePath || '/') + ' ' + e.message) : [String(error && error.message || error)];
    errors.push(...details);
  }
  unknownFields(body, 'CoreV1' + kind, kind, errors, clientNode);
  parentPort.postMessage({ id, errors });
});
`;

export class FakeApiServer {
  readonly requests: ReceivedRequest[] = [];
  /** Bodies refused by the schema check, with the errors. */
  readonly invalid: Array<{ body: unknown; errors: string[] }> = [];
  readonly events = new Map<string, StoredEvent>();
  fault: FaultMode = 'none';
  /** Watch streams end after this many events (null: they stay open). Issue 18 item 8. */
  endWatchesAfterEvents: number | null = null;
  /** Every watch gets a BOOKMARK as soon as it is open (with endWatchesAfterEvents 1: a stream that ends after one event). */
  bookmarkEveryWatch = false;
  /** Watch streams answer 200 and then send a line that is not JSON. */
  malformedWatches = false;
  /** Before its timeoutSeconds expires, a watch with allowWatchBookmarks gets a BOOKMARK this long before the end. */
  bookmarkBeforeTimeoutMs = 1000;
  /** Watches that ended because their timeoutSeconds expired. */
  watchesTimedOut = 0;

  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly watches = new Set<{ res: ServerResponse; namespace: string; name: string | null; sent: number; bookmarks: boolean }>();
  private started = false;
  private readonly configMaps = new Map<string, ConfigMapObject>();
  private readonly history: Array<{ rv: number; type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: ConfigMapObject }> = [];
  /** Watches from a resourceVersion below this get 410 Gone. */
  private oldestRv = 0;
  private rv = 100;
  private validator: Worker;
  private pendingValidations = new Map<number, (errors: string[]) => void>();
  private nextValidation = 0;
  private hung: ServerResponse[] = [];
  private validatorError: string | null = null;
  port = 0;

  constructor(
    private readonly tls: { cert: string; key: string },
    readonly token: string,
  ) {
    this.validator = new Worker(validatorSource, { eval: true, workerData: { root: path.resolve(__dirname, '../..') } });
    this.validator.on('message', ({ id, errors }: { id: number; errors: string[] }) => {
      this.pendingValidations.get(id)?.(errors);
      this.pendingValidations.delete(id);
    });
    // A validator that cannot run refuses everything, loudly, rather than letting requests hang.
    this.validator.on('error', (error: Error) => {
      this.validatorError = `schema validator failed: ${error.message}`;
      for (const resolve of this.pendingValidations.values()) resolve([this.validatorError]);
      this.pendingValidations.clear();
    });
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<void> {
    const server = createServer({ cert: this.tls.cert, key: this.tls.key }, (req, res) => void this.handle(req, res));
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
    // A restarted API server: every resourceVersion a client holds is too old now.
    if (this.started) this.compact();
    this.started = true;
  }

  /** Closes the listener and every connection (watches end mid-stream, hanging requests die). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    this.watches.clear();
    this.hung = [];
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async close(): Promise<void> {
    await this.stop();
    await this.validator.terminate();
  }

  /** Ends every open watch by destroying its connection, as a dropped network would. */
  dropWatches(): void {
    for (const watch of this.watches) watch.res.socket?.destroy();
    this.watches.clear();
  }

  /** Forgets the change history: a watch from an older resourceVersion gets 410 Gone. */
  compact(): void {
    // As after an etcd compaction: every resourceVersion a client holds is too old; a list gives a new one.
    this.rv += 1;
    this.oldestRv = this.rv;
    this.history.length = 0;
  }

  setConfigMap(namespace: string, name: string, data: Record<string, string>): void {
    const key = `${namespace}/${name}`;
    const existing = this.configMaps.get(key);
    const object: ConfigMapObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace, resourceVersion: String(++this.rv), uid: existing?.metadata.uid ?? `uid-${name}` },
      data,
    };
    this.configMaps.set(key, object);
    this.publish(existing ? 'MODIFIED' : 'ADDED', object);
  }

  deleteConfigMap(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const existing = this.configMaps.get(key);
    if (!existing) return;
    this.configMaps.delete(key);
    this.publish('DELETED', { ...existing, metadata: { ...existing.metadata, resourceVersion: String(++this.rv) } });
  }

  /** Sends a BOOKMARK with the current resourceVersion on every open watch that allowed bookmarks (as the API server sends them only to those). */
  sendBookmarks(): void {
    for (const watch of this.watches) if (watch.bookmarks) watch.res.write(this.bookmarkLine());
  }

  /** Watches open now. */
  get openWatches(): number {
    return this.watches.size;
  }

  /** Watch requests received so far. */
  watchRequests(): ReceivedRequest[] {
    return this.requests.filter((request) => request.method === 'GET' && request.query.get('watch') === 'true');
  }

  /** List requests (configmaps, not watching) received so far. */
  listRequests(): ReceivedRequest[] {
    return this.requests.filter((request) => request.method === 'GET' && request.query.get('watch') !== 'true' && request.path.endsWith('/configmaps'));
  }

  private bookmarkLine(): string {
    return `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } } })}\n`;
  }

  /** Requests with this method whose path starts with the prefix. */
  received(method: string, prefix: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.method === method && request.path.startsWith(prefix));
  }

  private publish(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: ConfigMapObject): void {
    this.history.push({ rv: Number(object.metadata.resourceVersion), type, object });
    for (const watch of [...this.watches]) {
      if (watch.namespace === object.metadata.namespace && (watch.name === null || watch.name === object.metadata.name)) {
        watch.res.write(`${JSON.stringify({ type, object })}\n`);
        watch.sent += 1;
        if (this.endWatchesAfterEvents !== null && watch.sent >= this.endWatchesAfterEvents) {
          this.watches.delete(watch);
          watch.res.end();
        }
      }
    }
  }

  private validate(kind: 'Event', body: unknown): Promise<string[]> {
    const id = this.nextValidation++;
    if (this.validatorError !== null) return Promise.resolve([this.validatorError]);
    return new Promise((resolve) => {
      this.pendingValidations.set(id, resolve);
      this.validator.postMessage({ id, kind, body });
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = text;
    }
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      contentType: String(req.headers['content-type'] ?? ''),
      authorization: String(req.headers.authorization ?? ''),
      body,
    });
    if (this.fault === 'hang') {
      this.hung.push(res);
      return;
    }
    // What kube-apiserver answers: authentication first (a bare 'Unauthorized' Status), then RBAC.
    if (req.headers.authorization !== `Bearer ${this.token}` || this.fault === 'unauthorized') return this.status(res, 401, 'Unauthorized', 'Unauthorized');
    if (this.fault === 'forbidden') {
      const namespace = /^\/api\/v1\/namespaces\/([^/]+)\/([^/]+)/.exec(url.pathname);
      const resource = namespace?.[2] ?? 'unknown';
      const verb =
        req.method === 'POST'
          ? 'create'
          : req.method === 'PATCH'
            ? 'patch'
            : url.searchParams.get('watch') === 'true'
              ? 'watch'
              : namespace && /\/[^/]+\/[^/]+$/.test(url.pathname.slice(namespace[0].length))
                ? 'get'
                : 'list';
      return this.status(
        res,
        403,
        'Forbidden',
        `${resource} is forbidden: User "${fakeServiceAccountUser}" cannot ${verb} resource "${resource}" in API group "" in the namespace "${namespace?.[1] ?? ''}"`,
        { kind: resource },
      );
    }

    const eventsPath = /^\/api\/v1\/namespaces\/([^/]+)\/events(?:\/([^/]+))?$/.exec(url.pathname);
    const configMapsPath = /^\/api\/v1\/namespaces\/([^/]+)\/configmaps$/.exec(url.pathname);
    if (eventsPath && req.method === 'POST' && !eventsPath[2]) return this.createEvent(res, eventsPath[1] ?? '', body);
    if (eventsPath && req.method === 'PATCH' && eventsPath[2]) return this.patchEvent(req, res, eventsPath[1] ?? '', eventsPath[2], body);
    if (configMapsPath && req.method === 'GET') return this.configMapsGet(req, res, url, configMapsPath[1] ?? '');
    return this.status(res, 404, 'NotFound', `${req.method} ${url.pathname}: not served by the fake API server`);
  }

  private async createEvent(res: ServerResponse, namespace: string, body: unknown): Promise<void> {
    const errors = await this.validate('Event', body);
    const event = body as StoredEvent;
    if (event?.metadata?.namespace !== undefined && event.metadata.namespace !== namespace) errors.push('metadata.namespace does not match the URL');
    if (errors.length > 0) {
      this.invalid.push({ body, errors });
      return this.status(res, 422, 'Invalid', errors.join('; '));
    }
    const key = `${namespace}/${event.metadata.name}`;
    if (this.events.has(key)) return this.status(res, 409, 'AlreadyExists', `events "${event.metadata.name}" already exists`);
    const stored = { ...event, metadata: { ...event.metadata, namespace, resourceVersion: String(++this.rv) } };
    this.events.set(key, stored);
    this.json(res, 201, stored);
  }

  private async patchEvent(req: IncomingMessage, res: ServerResponse, namespace: string, name: string, body: unknown): Promise<void> {
    const contentType = String(req.headers['content-type'] ?? '');
    if (!['application/merge-patch+json', 'application/strategic-merge-patch+json'].includes(contentType)) {
      this.invalid.push({ body, errors: [`PATCH with Content-Type ${contentType}`] });
      return this.status(res, 415, 'UnsupportedMediaType', `the body of the request was in an unknown format: ${contentType}`);
    }
    const existing = this.events.get(`${namespace}/${name}`);
    if (!existing) return this.status(res, 404, 'NotFound', `events "${name}" not found`);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      this.invalid.push({ body, errors: ['a merge patch must be an object'] });
      return this.status(res, 422, 'Invalid', 'a merge patch must be an object');
    }
    const merged = { ...existing, ...(body as Record<string, unknown>) };
    const errors = await this.validate('Event', { ...merged, metadata: { name: merged.metadata.name, namespace } });
    if (errors.length > 0) {
      this.invalid.push({ body, errors });
      return this.status(res, 422, 'Invalid', errors.join('; '));
    }
    merged.metadata = { ...existing.metadata, resourceVersion: String(++this.rv) };
    this.events.set(`${namespace}/${name}`, merged);
    this.json(res, 200, merged);
  }

  private configMapsGet(req: IncomingMessage, res: ServerResponse, url: URL, namespace: string): void {
    const selector = url.searchParams.get('fieldSelector') ?? '';
    const match = /^metadata\.name=(.+)$/.exec(selector);
    if (selector !== '' && !match) return this.status(res, 400, 'BadRequest', `unsupported fieldSelector ${selector}`);
    const name = match?.[1] ?? null;
    const selected = (object: ConfigMapObject): boolean => object.metadata.namespace === namespace && (name === null || object.metadata.name === name);
    if (url.searchParams.get('watch') !== 'true') {
      return this.json(res, 200, {
        apiVersion: 'v1',
        kind: 'ConfigMapList',
        metadata: { resourceVersion: String(this.rv) },
        items: [...this.configMaps.values()].filter(selected),
      });
    }
    const from = Number(url.searchParams.get('resourceVersion') ?? '0');
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    // kube-apiserver flushes the headers as soon as the watch is established (serveWatch).
    res.flushHeaders();
    if (this.malformedWatches) {
      res.end('this is not a watch event\n');
      return;
    }
    if (from < this.oldestRv) {
      // What the API server does: 200, one ERROR event with a 410 Status, then the end.
      res.end(
        `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${from} (${this.oldestRv})`, reason: 'Expired', code: 410 } })}\n`,
      );
      return;
    }
    const bookmarks = url.searchParams.get('allowWatchBookmarks') === 'true';
    const watch = { res, namespace, name, sent: 0, bookmarks };
    for (const change of this.history) {
      if (change.rv > from && selected(change.object)) {
        res.write(`${JSON.stringify({ type: change.type, object: change.object })}\n`);
        watch.sent += 1;
      }
    }
    if (this.bookmarkEveryWatch && bookmarks) {
      res.write(this.bookmarkLine());
      watch.sent += 1;
    }
    if (this.endWatchesAfterEvents !== null && watch.sent >= this.endWatchesAfterEvents) {
      res.end();
      return;
    }
    this.watches.add(watch);
    // Nothing is sent on an idle watch. The server ends it when its timeoutSeconds expires, with
    // a BOOKMARK shortly before when the client allowed bookmarks.
    const timers: NodeJS.Timeout[] = [];
    const timeoutSeconds = Number(url.searchParams.get('timeoutSeconds') ?? '0');
    if (timeoutSeconds > 0) {
      const timeoutMs = timeoutSeconds * 1000;
      if (bookmarks) {
        timers.push(setTimeout(() => res.write(this.bookmarkLine()), Math.max(0, timeoutMs - this.bookmarkBeforeTimeoutMs)));
      }
      timers.push(
        setTimeout(() => {
          this.watchesTimedOut += 1;
          this.watches.delete(watch);
          res.end();
        }, timeoutMs),
      );
    }
    res.on('close', () => {
      for (const timer of timers) clearTimeout(timer);
      this.watches.delete(watch);
    });
  }

  private json(res: ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private status(res: ServerResponse, code: number, reason: string, message: string, details?: Record<string, unknown>): void {
    this.json(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code });
  }
}

/** A kubeconfig for the fake server (CA data inline, bearer token). */
export function kubeconfigFor(server: FakeApiServer, caPem: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster: { server: server.url, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'fabric-ops', user: { token: server.token } }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fabric-ops', namespace: 'fabric' } }],
    'current-context': 'fake',
  });
}
