import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * A Kubernetes API server on 127.0.0.1 (HTTPS, bearer token) for the parts fabric-ops uses:
 * core/v1 events create and patch; configmaps, services and pods list and watch, in one
 * namespace (`/api/v1/namespaces/<ns>/<resource>`) or in all (`/api/v1/<resource>`), with
 * resourceVersion, labelSelector, fieldSelector (metadata.name, metadata.namespace),
 * limit and continue (pages of one consistent list), timeoutSeconds, bookmarks and 410 Expired; and get, create and update of one object (the
 * put-back ConfigMap). Every body received is validated against the Kubernetes schemas
 * (kubernetes-models, plus unknown-field checks from @kubernetes/client-node's models); an
 * invalid one is answered 422 and kept in `invalid`.
 *
 * It behaves as kube-apiserver v1.28 was seen to behave (a v1.28.7 cluster: idle watches silent for 130 s), not as is convenient:
 * - one resourceVersion counter and one history for every resource, as etcd's revision is;
 * - an idle watch sends nothing at all, bookmarks included; with allowWatchBookmarks=true one
 *   BOOKMARK comes shortly before the watch's own timeoutSeconds expires, then the stream ends;
 * - a watch from a resourceVersion that is too old gets HTTP 200 and an in-stream ERROR event
 *   carrying a Status with code 410 (reason Expired), then the end of the stream; a watch
 *   without a resourceVersion (or "0") first gets an ADDED event for every object it selects;
 * - a label-selector watch sees an object relabelled out of its selector as DELETED (the
 *   object as it was, at the new resourceVersion) and one relabelled into it as ADDED: that is
 *   cacheWatcher.convertToWatchEvent in kubernetes'
 *   staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go (it filters the old and
 *   the new object: only old passes -> Deleted with the previous object and the event's
 *   resourceVersion, only new -> Added, both -> Modified), for live events and replays alike;
 * - an invalid labelSelector is a 400 BadRequest Status with labels.Parse's message
 *   (`unable to parse requirement: ...`; kubectl prefixes "Unable to find ... that match
 *   label selector" on its side), an unsupported field selector a 400 naming the field;
 * - list items carry no apiVersion/kind (the list has them), watch event objects do;
 * - an update with a stale metadata.resourceVersion is a 409 Conflict, one that changes
 *   nothing keeps the resourceVersion and sends no event;
 * - a restart (stop, then start) drops every watch and every resourceVersion a client holds is
 *   too old afterwards;
 * - 401 and 403 answers carry real Status bodies (403: `<resource> ["<name>" ]is forbidden:
 *   User "..." cannot <verb> resource "<resource>" in API group "" in the namespace "<ns>"`,
 *   or `at the cluster scope` for every namespace).
 * Faults: 401 (revoked token), 403 (RBAC: everything, or what `authorize` refuses), hanging
 * requests, watches dropped mid-stream, history compacted, watch streams that end after each
 * event, malformed watch streams.
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

/** The core/v1 resources whose objects the fake stores, list, watch, gets, creates and updates. */
export type FakeResource = 'configmaps' | 'services' | 'pods';

const kindOf: Record<FakeResource, 'ConfigMap' | 'Service' | 'Pod'> = { configmaps: 'ConfigMap', services: 'Service', pods: 'Pod' };

function isResource(value: string): value is FakeResource {
  return Object.hasOwn(kindOf, value);
}

/** A stored object, as the API server returns it. */
export interface StoredObject {
  apiVersion: 'v1';
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    resourceVersion: string;
    uid: string;
    creationTimestamp: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** What a test passes to setObject: at least a name; labels, spec, status, data as it likes. */
export interface ObjectInput {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; [field: string]: unknown };
  [field: string]: unknown;
}

/** One call as RBAC sees it, for `authorize`. */
export interface AuthorizationRequest {
  verb: string;
  resource: string;
  /** null: at the cluster scope (every namespace). */
  namespace: string | null;
  name: string | null;
}

type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface Change {
  rv: number;
  type: ChangeType;
  resource: FakeResource;
  /** The object after the change (for DELETED: as it was, at the deletion's resourceVersion). */
  object: StoredObject;
  /** The object before the change (null for ADDED). */
  previous: StoredObject | null;
}

interface OpenWatch {
  res: ServerResponse;
  resource: FakeResource;
  /** null: every namespace. */
  namespace: string | null;
  selects: (object: StoredObject) => boolean;
  sent: number;
  bookmarks: boolean;
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
  // client-node names the core Event CoreV1Event (events.k8s.io has its own), the others V1<Kind>.
  unknownFields(body, clientNode['CoreV1' + kind] ? 'CoreV1' + kind : 'V1' + kind, kind, errors, clientNode);
  parentPort.postMessage({ id, errors });
});
`;

/**
 * Label selectors as kube-apiserver parses them (labels.Parse in kubernetes'
 * staging/src/k8s.io/apimachinery/pkg/labels/selector.go): comma-joined requirements `k=v`,
 * `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>1`, `k<1`; keys and values
 * checked as label keys and values. Errors carry the parser's wording.
 */
type SelectorToken = { kind: 'id' | 'in' | 'notin' | '=' | '==' | '!=' | '!' | '(' | ')' | ',' | '>' | '<' | 'end'; text: string };

function lexSelector(text: string): SelectorToken[] {
  const tokens: SelectorToken[] = [];
  const special = '=!(),<>';
  let at = 0;
  for (;;) {
    while (at < text.length && ' \t\r\n'.includes(text[at] ?? '')) at += 1;
    if (at >= text.length) {
      tokens.push({ kind: 'end', text: '' });
      return tokens;
    }
    const two = text.slice(at, at + 2);
    if (two === '==' || two === '!=') {
      tokens.push({ kind: two, text: two });
      at += 2;
    } else if (special.includes(text[at] ?? '')) {
      const one = text[at] as '=' | '!' | '(' | ')' | ',' | '<' | '>';
      tokens.push({ kind: one, text: one });
      at += 1;
    } else {
      let end = at;
      while (end < text.length && !special.includes(text[end] ?? '') && !' \t\r\n'.includes(text[end] ?? '')) end += 1;
      const word = text.slice(at, end);
      tokens.push({ kind: word === 'in' || word === 'notin' ? word : 'id', text: word });
      at = end;
    }
  }
}

type Operator = 'exists' | '!' | '=' | '==' | '!=' | 'in' | 'notin' | 'gt' | 'lt';
interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

const labelName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkLabelKey(key: string): void {
  const slash = key.indexOf('/');
  const [prefix, name] = slash >= 0 ? [key.slice(0, slash), key.slice(slash + 1)] : [null, key];
  const problems: string[] = [];
  if (prefix !== null && (prefix === '' || prefix.length > 253 || !dnsSubdomain.test(prefix)))
    problems.push('prefix part must be a lowercase RFC 1123 subdomain');
  if (name.length === 0 || name.length > 63 || !labelName.test(name)) {
    problems.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, and be at most 63 characters",
    );
  }
  if (problems.length > 0) throw new Error(`Invalid value: "${key}": ${problems.join('; ')}`);
}

function checkLabelValue(key: string, value: string): void {
  if (value === '' || (value.length <= 63 && labelName.test(value))) return;
  throw new Error(
    `values[0][${key}]: Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, and be at most 63 characters`,
  );
}

/** Parses a label selector; throws an Error with the API server's message when it is invalid. */
export function parseLabelSelector(text: string): Requirement[] {
  const tokens = lexSelector(text);
  let position = 0;
  // In value position, `in` and `notin` are identifiers ("x in (in)").
  const asValue = (token: SelectorToken): SelectorToken => (token.kind === 'in' || token.kind === 'notin' ? { kind: 'id', text: token.text } : token);
  const peek = (): SelectorToken => asValue(tokens[position] ?? { kind: 'end', text: '' });
  const next = (values = true): SelectorToken => {
    const token = tokens[position] ?? { kind: 'end', text: '' };
    position += 1;
    return values ? asValue(token) : token;
  };

  const values = (): string[] => {
    const open = next();
    if (open.kind !== '(') throw new Error(`found '${open.text}' expected: '('`);
    const first = peek();
    if (first.kind === ')') {
      next();
      return [''];
    }
    if (first.kind !== 'id' && first.kind !== ',') throw new Error(`found '${first.text}', expected: ',', ')' or identifier`);
    const set = new Set<string>();
    for (;;) {
      const token = next();
      if (token.kind === 'id') {
        set.add(token.text);
        const after = peek();
        if (after.kind === ',') continue;
        if (after.kind === ')') break;
        throw new Error(`found '${after.text}', expected: ',' or ')'`);
      } else if (token.kind === ',') {
        if (set.size === 0) set.add('');
        const after = peek();
        if (after.kind === ')') {
          set.add('');
          break;
        }
        if (after.kind === ',') set.add('');
      } else {
        throw new Error(`found '${token.text}', expected: ',', or identifier`);
      }
    }
    const close = next();
    if (close.kind !== ')') throw new Error(`found '${first.text}', expected: ')'`);
    return [...set].sort();
  };

  const requirement = (): Requirement => {
    let token = next();
    let operator: Operator | null = null;
    if (token.kind === '!') {
      operator = '!';
      token = next();
    }
    if (token.kind !== 'id') throw new Error(`found '${token.text}', expected: identifier`);
    const key = token.text;
    checkLabelKey(key);
    const after = peek();
    if (after.kind === 'end' || after.kind === ',') return { key, operator: operator ?? 'exists', values: [] };
    const op = next(false);
    const operators: Partial<Record<SelectorToken['kind'], Operator>> = { in: 'in', notin: 'notin', '=': '=', '==': '==', '!=': '!=', '>': 'gt', '<': 'lt' };
    operator = operators[op.kind] ?? null;
    if (operator === null) throw new Error(`found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`);
    let list: string[];
    if (operator === 'in' || operator === 'notin') {
      list = values();
    } else {
      const value = peek();
      if (value.kind === 'end' || value.kind === ',') list = [''];
      else if (next().kind === 'id') list = [value.text];
      else throw new Error(`found '${value.text}', expected: identifier`);
    }
    if ((operator === 'gt' || operator === 'lt') && !list.every((value) => /^-?[0-9]+$/.test(value))) {
      throw new Error(`for 'Gt', 'Lt' operators, the value must be an integer`);
    }
    if (operator !== 'gt' && operator !== 'lt') for (const value of list) checkLabelValue(key, value);
    return { key, operator, values: list };
  };

  const requirements: Requirement[] = [];
  for (;;) {
    const token = peek();
    if (token.kind === 'end') return requirements;
    if (token.kind !== 'id' && token.kind !== '!') throw new Error(`found '${token.text}', expected: !, identifier, or 'end of string'`);
    try {
      requirements.push(requirement());
    } catch (error) {
      throw new Error(`unable to parse requirement: ${(error as Error).message}`, { cause: error });
    }
    const after = next();
    if (after.kind === 'end') return requirements;
    if (after.kind !== ',') throw new Error(`found '${after.text}', expected: ',' or 'end of string'`);
    const following = peek();
    if (following.kind !== 'id' && following.kind !== '!') throw new Error(`found '${following.text}', expected: identifier after ','`);
  }
}

/** Whether labels satisfy every requirement. */
export function labelsMatch(requirements: Requirement[], labels: Record<string, string> | undefined): boolean {
  return requirements.every(({ key, operator, values }) => {
    const has = labels !== undefined && Object.hasOwn(labels, key);
    const value = has ? labels[key] : undefined;
    switch (operator) {
      case 'exists':
        return has;
      case '!':
        return !has;
      case '=':
      case '==':
      case 'in':
        return has && values.includes(value ?? '');
      case '!=':
      case 'notin':
        return !has || !values.includes(value ?? '');
      case 'gt':
      case 'lt': {
        if (!has || !/^-?[0-9]+$/.test(value ?? '')) return false;
        const number = Number(value);
        const bound = Number(values[0]);
        return operator === 'gt' ? number > bound : number < bound;
      }
    }
    return false;
  });
}

/**
 * A field selector as the API server takes it for core objects: comma-joined `f=v`, `f==v`,
 * `f!=v` over metadata.name and metadata.namespace (the fields every resource supports).
 */
export function parseFieldSelector(text: string): (object: StoredObject) => boolean {
  const terms = text
    .split(',')
    .filter((term) => term.trim() !== '')
    .map((term) => {
      const match = /^([^=!]+)(==|=|!=)(.*)$/.exec(term.trim());
      if (!match) throw new Error(`invalid selector: '${text}'; can't understand '${term}'`);
      const [, field = '', operator, value = ''] = match;
      if (field !== 'metadata.name' && field !== 'metadata.namespace') {
        throw new Error(`"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
      }
      return { field, equal: operator !== '!=', value };
    });
  return (object) =>
    terms.every(({ field, equal, value }) => ((field === 'metadata.name' ? object.metadata.name : object.metadata.namespace) === value) === equal);
}

export class FakeApiServer {
  readonly requests: ReceivedRequest[] = [];
  /** Bodies refused by the schema check, with the errors. */
  readonly invalid: Array<{ body: unknown; errors: string[] }> = [];
  readonly events = new Map<string, StoredEvent>();
  fault: FaultMode = 'none';
  /** RBAC beyond `fault`: a call it returns false for is answered 403 as kube-apiserver does (null: everything allowed). */
  authorize: ((request: AuthorizationRequest) => boolean) | null = null;
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
  private readonly watches = new Set<OpenWatch>();
  private started = false;
  /** Every object, by `<resource>/<namespace>/<name>`. */
  private readonly objects = new Map<string, StoredObject>();
  /** One history for every resource, as etcd's revisions. */
  private readonly history: Change[] = [];
  /** Watches from a resourceVersion below this get 410 Gone. */
  private oldestRv = 0;
  private rv = 100;
  private nextUid = 1;
  /** Lists read in pages: the state each continue token reads. */
  private readonly listSnapshots = new Map<number, { id: number; rv: number; items: StoredObject[] }>();
  private nextSnapshot = 1;
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

  /**
   * Closes the listener, then every connection (watches end mid-stream, hanging requests die). The
   * listener first, as a stopping server stops accepting before it cuts what is open: a client
   * that reconnects when its watch is cut is refused (ECONNREFUSED). The other order let such a
   * reconnect be accepted in between and then cut (ECONNRESET; seen in CI).
   */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    for (const socket of this.sockets) socket.destroy();
    this.watches.clear();
    this.hung = [];
    await closed;
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
    this.listSnapshots.clear();
  }

  /**
   * Creates or replaces an object as a controller's write would (a new resourceVersion, an
   * ADDED or MODIFIED change; uid and creationTimestamp kept), and returns it as stored.
   */
  setObject(resource: FakeResource, namespace: string, input: ObjectInput): StoredObject {
    const key = `${resource}/${namespace}/${input.metadata.name}`;
    const existing = this.objects.get(key) ?? null;
    const object = this.stored(resource, namespace, input, existing);
    this.objects.set(key, object);
    this.publish(resource, existing ? 'MODIFIED' : 'ADDED', object, existing);
    return structuredClone(object);
  }

  /** Deletes an object (a DELETED change at a new resourceVersion); false when there was none. */
  deleteObject(resource: FakeResource, namespace: string, name: string): boolean {
    const key = `${resource}/${namespace}/${name}`;
    const existing = this.objects.get(key);
    if (!existing) return false;
    this.objects.delete(key);
    this.publish(resource, 'DELETED', { ...existing, metadata: { ...existing.metadata, resourceVersion: String(++this.rv) } }, existing);
    return true;
  }

  /** The stored object (a copy), or undefined. */
  getObject(resource: FakeResource, namespace: string, name: string): StoredObject | undefined {
    const object = this.objects.get(`${resource}/${namespace}/${name}`);
    return object ? structuredClone(object) : undefined;
  }

  setConfigMap(namespace: string, name: string, data: Record<string, string>): void {
    this.setObject('configmaps', namespace, { metadata: { name }, data });
  }

  deleteConfigMap(namespace: string, name: string): void {
    this.deleteObject('configmaps', namespace, name);
  }

  /** Sends a BOOKMARK with the current resourceVersion on every open watch that allowed bookmarks (as the API server sends them only to those). */
  sendBookmarks(): void {
    for (const watch of this.watches) if (watch.bookmarks) watch.res.write(this.bookmarkLine(watch.resource));
  }

  /** Watches open now (of one resource, or of all). */
  openWatchesOf(resource?: FakeResource): number {
    return [...this.watches].filter((watch) => resource === undefined || watch.resource === resource).length;
  }

  /** Watches open now. */
  get openWatches(): number {
    return this.watches.size;
  }

  /** Watch requests received so far. */
  watchRequests(): ReceivedRequest[] {
    return this.requests.filter((request) => request.method === 'GET' && request.query.get('watch') === 'true');
  }

  /** List requests (of configmaps unless told, not watching) received so far. */
  listRequests(resource: FakeResource = 'configmaps'): ReceivedRequest[] {
    return this.requests.filter((request) => request.method === 'GET' && request.query.get('watch') !== 'true' && request.path.endsWith(`/${resource}`));
  }

  /** Requests with this method whose path starts with the prefix. */
  received(method: string, prefix: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.method === method && request.path.startsWith(prefix));
  }

  private bookmarkLine(resource: FakeResource): string {
    return `${JSON.stringify({ type: 'BOOKMARK', object: { kind: kindOf[resource], apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } } })}\n`;
  }

  /** An input made a stored object: the server's metadata (resourceVersion, uid, creationTimestamp) over the caller's. */
  private stored(resource: FakeResource, namespace: string, input: ObjectInput, existing: StoredObject | null): StoredObject {
    const copy = structuredClone(input) as ObjectInput & { apiVersion?: unknown; kind?: unknown };
    const { apiVersion: _apiVersion, kind: _kind, metadata, ...rest } = copy;
    return {
      apiVersion: 'v1',
      kind: kindOf[resource],
      ...rest,
      metadata: {
        ...metadata,
        name: metadata.name,
        namespace,
        resourceVersion: String(++this.rv),
        uid: existing?.metadata.uid ?? `uid-${metadata.name}-${this.nextUid++}`,
        creationTimestamp: existing?.metadata.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    };
  }

  private publish(resource: FakeResource, type: ChangeType, object: StoredObject, previous: StoredObject | null): void {
    const change: Change = { rv: Number(object.metadata.resourceVersion), type, resource, object, previous };
    this.history.push(change);
    for (const watch of [...this.watches]) {
      const event = this.eventFor(watch, change);
      if (event === null) continue;
      watch.res.write(event);
      watch.sent += 1;
      if (this.endWatchesAfterEvents !== null && watch.sent >= this.endWatchesAfterEvents) {
        this.watches.delete(watch);
        watch.res.end();
      }
    }
  }

  /**
   * The event line a watch gets for a change, or null: the watch cache's convertToWatchEvent
   * (see the comment at the top): the old and the new object are both filtered.
   */
  private eventFor(watch: Pick<OpenWatch, 'resource' | 'namespace' | 'selects'>, change: Change): string | null {
    if (change.resource !== watch.resource) return null;
    const passes = (object: StoredObject | null): boolean =>
      object !== null && (watch.namespace === null || object.metadata.namespace === watch.namespace) && watch.selects(object);
    const now = change.type !== 'DELETED' && passes(change.object);
    const before = passes(change.previous);
    if (now) return `${JSON.stringify({ type: before ? 'MODIFIED' : 'ADDED', object: change.object })}\n`;
    if (!before || change.previous === null) return null;
    const gone = { ...change.previous, metadata: { ...change.previous.metadata, resourceVersion: String(change.rv) } };
    return `${JSON.stringify({ type: 'DELETED', object: gone })}\n`;
  }

  private validate(kind: 'Event' | 'ConfigMap' | 'Service' | 'Pod', body: unknown): Promise<string[]> {
    const id = this.nextValidation++;
    if (this.validatorError !== null) return Promise.resolve([this.validatorError]);
    return new Promise((resolve) => {
      this.pendingValidations.set(id, resolve);
      this.validator.postMessage({ id, kind, body });
    });
  }

  /** The RBAC verb, resource, namespace and name of a request, as kube-apiserver's request info resolves them. */
  private static requestInfo(method: string, url: URL): AuthorizationRequest | null {
    const namespaced = /^\/api\/v1\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/.exec(url.pathname);
    const cluster = /^\/api\/v1\/([^/]+)$/.exec(url.pathname);
    if (!namespaced && (!cluster || cluster[1] === 'namespaces')) return null;
    const resource = namespaced ? (namespaced[2] ?? '') : (cluster?.[1] ?? '');
    const namespace = namespaced ? decodeURIComponent(namespaced[1] ?? '') : null;
    const name = namespaced?.[3] === undefined ? null : decodeURIComponent(namespaced[3]);
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: name === null ? 'deletecollection' : 'delete' };
    const verb = method === 'GET' ? (watch ? 'watch' : name === null ? 'list' : 'get') : (verbs[method] ?? method.toLowerCase());
    return { verb, resource, namespace, name };
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
    const method = req.method ?? '';
    // What kube-apiserver answers: authentication first (a bare 'Unauthorized' Status), then RBAC.
    if (req.headers.authorization !== `Bearer ${this.token}` || this.fault === 'unauthorized') return this.status(res, 401, 'Unauthorized', 'Unauthorized');
    const info = FakeApiServer.requestInfo(method, url);
    if (info && (this.fault === 'forbidden' || (this.authorize !== null && !this.authorize(info)))) {
      const { verb, resource, namespace, name } = info;
      const scope = namespace === null ? 'at the cluster scope' : `in the namespace "${namespace}"`;
      return this.status(
        res,
        403,
        'Forbidden',
        `${resource}${name === null ? '' : ` "${name}"`} is forbidden: User "${fakeServiceAccountUser}" cannot ${verb} resource "${resource}" in API group "" ${scope}`,
        { ...(name === null ? {} : { name }), kind: resource },
      );
    }

    const eventsPath = /^\/api\/v1\/namespaces\/([^/]+)\/events(?:\/([^/]+))?$/.exec(url.pathname);
    if (eventsPath && method === 'POST' && !eventsPath[2]) return this.createEvent(res, eventsPath[1] ?? '', body);
    if (eventsPath && method === 'PATCH' && eventsPath[2]) return this.patchEvent(req, res, eventsPath[1] ?? '', eventsPath[2], body);
    if (info && isResource(info.resource)) {
      const { verb, resource, namespace, name } = info;
      if (verb === 'list' || verb === 'watch') return this.listOrWatch(res, url, resource, namespace, verb === 'watch');
      if (namespace !== null && verb === 'get' && name !== null) return this.getObjectRequest(res, resource, namespace, name);
      if (namespace !== null && verb === 'create') return this.createObject(req, res, resource, namespace, body);
      if (namespace !== null && verb === 'update' && name !== null) return this.updateObject(req, res, resource, namespace, name, body);
    }
    return this.status(res, 404, 'NotFound', `${method} ${url.pathname}: not served by the fake API server`);
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

  private getObjectRequest(res: ServerResponse, resource: FakeResource, namespace: string, name: string): void {
    const object = this.objects.get(`${resource}/${namespace}/${name}`);
    if (!object) return this.status(res, 404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource });
    this.json(res, 200, object);
  }

  /** The body of a create or update, checked as kube-apiserver does before storing it; null when refused (the answer is sent). */
  private async checkedBody(req: IncomingMessage, res: ServerResponse, resource: FakeResource, namespace: string, body: unknown): Promise<ObjectInput | null> {
    const contentType =
      String(req.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    if (contentType !== 'application/json') {
      this.invalid.push({ body, errors: [`${req.method} with Content-Type ${contentType}`] });
      this.status(res, 415, 'UnsupportedMediaType', `the body of the request was in an unknown format: ${contentType}`);
      return null;
    }
    const errors = await this.validate(kindOf[resource], body);
    const object = body as Partial<ObjectInput> | null;
    if (typeof object?.metadata?.name !== 'string' || object.metadata.name === '')
      errors.push('metadata.name: Required value: name or generateName is required');
    const bodyNamespace = object?.metadata?.namespace;
    if (bodyNamespace !== undefined && bodyNamespace !== namespace) {
      this.invalid.push({ body, errors: ['metadata.namespace does not match the URL'] });
      this.status(res, 400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
      return null;
    }
    if (resource === 'configmaps') {
      const data = (object as { data?: Record<string, string>; binaryData?: Record<string, string> } | null) ?? {};
      let bytes = 0;
      for (const [key, value] of [...Object.entries(data.data ?? {}), ...Object.entries(data.binaryData ?? {})]) bytes += key.length + String(value).length;
      if (bytes > 1024 * 1024) errors.push(`[]: Too long: must have at most 1048576 bytes`);
    }
    if (errors.length > 0) {
      this.invalid.push({ body, errors });
      this.status(res, 422, 'Invalid', `${kindOf[resource]} "${object?.metadata?.name ?? ''}" is invalid: ${errors.join('; ')}`, {
        ...(typeof object?.metadata?.name === 'string' ? { name: object.metadata.name } : {}),
        kind: kindOf[resource],
      });
      return null;
    }
    return object as ObjectInput;
  }

  private async createObject(req: IncomingMessage, res: ServerResponse, resource: FakeResource, namespace: string, body: unknown): Promise<void> {
    const input = await this.checkedBody(req, res, resource, namespace, body);
    if (input === null) return;
    const name = input.metadata.name;
    const version = input.metadata.resourceVersion;
    if (typeof version === 'string' && version !== '') {
      // The etcd3 store refuses it (an internal error, not a 4xx).
      return this.status(res, 500, 'InternalError', 'Internal error occurred: resourceVersion should not be set on objects to be created');
    }
    if (this.objects.has(`${resource}/${namespace}/${name}`)) {
      return this.status(res, 409, 'AlreadyExists', `${resource} "${name}" already exists`, { name, kind: resource });
    }
    this.json(res, 201, this.setObject(resource, namespace, input));
  }

  private async updateObject(req: IncomingMessage, res: ServerResponse, resource: FakeResource, namespace: string, name: string, body: unknown): Promise<void> {
    const input = await this.checkedBody(req, res, resource, namespace, body);
    if (input === null) return;
    if (input.metadata.name !== name) {
      this.invalid.push({ body, errors: ['metadata.name does not match the URL'] });
      return this.status(res, 400, 'BadRequest', `the name of the object (${input.metadata.name}) does not match the name on the URL (${name})`);
    }
    const existing = this.objects.get(`${resource}/${namespace}/${name}`);
    if (!existing) {
      // kube-apiserver checks a body's metadata.uid as a precondition against the stored object: for
      // an object deleted meanwhile that fails in storage and is a 409 Conflict, not a 404 (seen on
      // v1.28 by the issue that reported it). Without a uid the update is a plain 404.
      const uid = (input.metadata as { uid?: unknown }).uid;
      if (typeof uid === 'string' && uid !== '') {
        return this.status(
          res,
          409,
          'Conflict',
          `Operation cannot be fulfilled on ${resource} "${name}": StorageError: invalid object, Code: 4, Key: /registry/${resource}/${namespace}/${name}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: `,
          { name, kind: resource },
        );
      }
      return this.status(res, 404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource });
    }
    const version = input.metadata.resourceVersion;
    // ConfigMaps, Services and Pods allow an unconditional update (no resourceVersion); a stale one is a conflict.
    if (typeof version === 'string' && version !== '' && version !== existing.metadata.resourceVersion) {
      return this.status(
        res,
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        { name, kind: resource },
      );
    }
    // An update that changes nothing is not written: same resourceVersion, no watch event.
    const comparable = (object: ObjectInput | StoredObject): string => {
      const { apiVersion: _a, kind: _k, metadata, ...rest } = object as StoredObject;
      const { resourceVersion: _r, uid: _u, creationTimestamp: _c, namespace: _n, ...meta } = metadata;
      return JSON.stringify({ meta, rest }, (_key, value: unknown) =>
        value && typeof value === 'object' && !Array.isArray(value)
          ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
          : value,
      );
    };
    if (comparable(input) === comparable(existing)) return this.json(res, 200, existing);
    this.json(res, 200, this.setObject(resource, namespace, input));
  }

  /**
   * A list, whole or in pages (`limit`, then `continue`): every page of one list reads the state
   * of its first page, as etcd reads at that revision; a token whose revision was compacted
   * meanwhile (or a restart) is a 410 Expired answer, as kube-apiserver gives.
   */
  private list(res: ServerResponse, url: URL, resource: FakeResource, current: () => StoredObject[]): void {
    const limitText = url.searchParams.get('limit') ?? '';
    const continueText = url.searchParams.get('continue') ?? '';
    if (!/^[0-9]*$/.test(limitText)) return this.status(res, 400, 'BadRequest', `limit: Invalid value: "${limitText}": must be a number`);
    let snapshot: { id: number; rv: number; items: StoredObject[] };
    let start = 0;
    if (continueText !== '') {
      if ((url.searchParams.get('resourceVersion') ?? '') !== '') {
        return this.status(res, 400, 'BadRequest', 'specifying resource version is not allowed when using continue');
      }
      let token: { id?: unknown; rv?: unknown; start?: unknown };
      try {
        token = JSON.parse(Buffer.from(continueText, 'base64url').toString('utf8')) as typeof token;
      } catch {
        return this.status(res, 400, 'BadRequest', 'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
      }
      const found = typeof token.id === 'number' ? this.listSnapshots.get(token.id) : undefined;
      if (typeof token.rv !== 'number' || typeof token.start !== 'number') return this.status(res, 400, 'BadRequest', 'continue key is not valid');
      if (!found || token.rv < this.oldestRv) {
        return this.status(
          res,
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        );
      }
      snapshot = found;
      start = token.start;
    } else {
      snapshot = { id: this.nextSnapshot++, rv: this.rv, items: current() };
    }
    const limit = Number(limitText);
    const end = limit > 0 ? start + limit : snapshot.items.length;
    const more = end < snapshot.items.length;
    if (more) {
      this.listSnapshots.set(snapshot.id, snapshot);
      // Lists given up halfway are forgotten after a while (their tokens expire).
      if (this.listSnapshots.size > 64) this.listSnapshots.delete(this.listSnapshots.keys().next().value as number);
    } else {
      this.listSnapshots.delete(snapshot.id);
    }
    const selected = (url.searchParams.get('labelSelector') ?? '') !== '' || (url.searchParams.get('fieldSelector') ?? '') !== '';
    this.json(res, 200, {
      apiVersion: 'v1',
      kind: `${kindOf[resource]}List`,
      metadata: {
        resourceVersion: String(snapshot.rv),
        ...(more
          ? {
              continue: Buffer.from(JSON.stringify({ id: snapshot.id, rv: snapshot.rv, start: end })).toString('base64url'),
              // The API server counts what is left only when nothing filters the list.
              ...(selected ? {} : { remainingItemCount: snapshot.items.length - end }),
            }
          : {}),
      },
      // List items carry no apiVersion and kind: the list does.
      items: snapshot.items.slice(start, end).map(({ apiVersion: _apiVersion, kind: _kind, ...item }) => item),
    });
  }

  private listOrWatch(res: ServerResponse, url: URL, resource: FakeResource, namespace: string | null, watching: boolean): void {
    let selects: (object: StoredObject) => boolean;
    try {
      const labels = parseLabelSelector(url.searchParams.get('labelSelector') ?? '');
      const fields = parseFieldSelector(url.searchParams.get('fieldSelector') ?? '');
      selects = (object) => labelsMatch(labels, object.metadata.labels) && fields(object);
    } catch (error) {
      return this.status(res, 400, 'BadRequest', (error as Error).message);
    }
    const inScope = (object: StoredObject): boolean => namespace === null || object.metadata.namespace === namespace;
    const current = (): StoredObject[] =>
      [...this.objects.entries()]
        .filter(([key, object]) => key.startsWith(`${resource}/`) && inScope(object) && selects(object))
        .map(([, object]) => object)
        .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
    if (!watching) return this.list(res, url, resource, current);
    const fromText = url.searchParams.get('resourceVersion') ?? '';
    const from = Number(fromText);
    if (!/^[0-9]*$/.test(fromText)) return this.status(res, 400, 'BadRequest', `resourceVersion: Invalid value: "${fromText}": must be a number`);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    // kube-apiserver flushes the headers as soon as the watch is established (serveWatch).
    res.flushHeaders();
    if (this.malformedWatches) {
      res.end('this is not a watch event\n');
      return;
    }
    const watch: OpenWatch = { res, resource, namespace, selects, sent: 0, bookmarks: url.searchParams.get('allowWatchBookmarks') === 'true' };
    if (fromText === '' || fromText === '0') {
      // No resourceVersion (or "0", any): the current state as ADDED events, then the changes.
      for (const object of current()) {
        res.write(`${JSON.stringify({ type: 'ADDED', object })}\n`);
        watch.sent += 1;
      }
    } else if (from < this.oldestRv) {
      // What the API server does: 200, one ERROR event with a 410 Status, then the end.
      res.end(
        `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${from} (${this.oldestRv})`, reason: 'Expired', code: 410 } })}\n`,
      );
      return;
    } else {
      for (const change of this.history) {
        if (change.rv <= from) continue;
        const event = this.eventFor(watch, change);
        if (event === null) continue;
        res.write(event);
        watch.sent += 1;
      }
    }
    if (this.bookmarkEveryWatch && watch.bookmarks) {
      res.write(this.bookmarkLine(resource));
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
      if (watch.bookmarks) {
        timers.push(setTimeout(() => res.write(this.bookmarkLine(resource)), Math.max(0, timeoutMs - this.bookmarkBeforeTimeoutMs)));
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
