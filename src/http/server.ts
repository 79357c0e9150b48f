import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import https from 'node:https';
import { BoundSocket, isIP, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContextOptions, TLSSocket } from 'node:tls';
import type { HostPort } from '../config/types';
import { ListenError } from '../errors';
import { capConnections, type Activity } from './connection-cap';
import { formatClientSubject } from '../tls/subject';
import { rawErrorResponse, requestIdFor, sendBareError } from './errors';
import { seconds, type HttpLimits } from './limits';
import { WarningLimiter } from '../logging/warning-limiter';
import { systemClock, type Clock } from '../time';

export interface ServerTls {
  context: SecureContextOptions;
  /** When true the handshake itself demands a client certificate on every path. */
  clientAuthRequired: boolean;
}

export interface ServerLimits extends HttpLimits {
  /**
   * Connections open at once. When all are taken a new one closes the oldest with no request in
   * progress or with a request still waiting for its body (408); it is refused only when every one
   * has a request read in full and not yet answered. One client address holds at most 15/16 of
   * them (see connection-cap.ts).
   */
  maxConnections: number;
  /** An early answer drains an unread body up to this size; a larger or chunked one closes the connection. */
  drainLimitBytes: number;
}

export interface ListeningServer {
  readonly url: string;
  readonly address: HostPort;
  /** New connections use the new material; open ones keep theirs. */
  setSecureContext(context: SecureContextOptions): void;
  /**
   * Stops accepting, lets in-flight requests finish within graceMs; those still unanswered then
   * get 408 (body not in yet) or 503, and what is left is cut.
   */
  close(graceMs: number): Promise<void>;
}

function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function describeListenError(address: string, err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${address}: address already in use`;
    case 'EACCES':
      return `cannot listen on ${address}: permission denied`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${address}: address not available on this machine`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${address}: host not found`;
    default:
      return `cannot listen on ${address}: ${err.message}`;
  }
}

export interface ServerEvents {
  /**
   * A client certificate was refused (one that does not verify; with clientAuthRequired also none
   * at all) and the connection closed. Rate-limited: at most 10 in any 10 s, each with how many
   * were not reported before it.
   */
  onRefusedClientCertificate(details: { remoteAddress: string; reason: string; subject: string; suppressed: number }): void;
  /**
   * A connection was closed on accept: maxConnections were open (or its address held its share),
   * none of them free to close.
   */
  onConnectionRefused(): void;
  /** An answer written below the router (parser errors, CONNECT, Expect, Host), for the requests metric. */
  onBareAnswer(statusCode: number): void;
  /** The time the refusal reports are rate-limited by; default the system clock. */
  clock?: Clock;
}

/**
 * Node's parser refuses more than this many header fields (Host included) with the same error
 * as headers over http.maxHeaderSize bytes (measured with Node 24: 1,000 fields of 5 bytes pass,
 * 1,001 do not).
 */
const maxHeaderFields = 1000;

/**
 * Which of the two header limits a HPE_HEADER_OVERFLOW met: fewer bytes received for the request
 * than the size limit, or as many lines as the field limit in the bytes the parser had in hand,
 * mean the count; anything else the size.
 */
function headerOverflowMessage(err: NodeJS.ErrnoException & { rawPacket?: unknown }, bytesOfRequest: number): string {
  let lines = 0;
  if (Buffer.isBuffer(err.rawPacket)) {
    for (let index = err.rawPacket.indexOf(10); index >= 0; index = err.rawPacket.indexOf(10, index + 1)) lines += 1;
  }
  if (bytesOfRequest <= http.maxHeaderSize || lines >= maxHeaderFields) return `request has more than ${maxHeaderFields} header fields`;
  return `request headers are larger than ${http.maxHeaderSize} bytes`;
}

/** What the HTTP parser's errors are answered with (Node writes them without a body). */
function parserErrorAnswer(err: NodeJS.ErrnoException, readTimeoutMs: number, bytesOfRequest: number): { status: number; message: string } | null {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: `request headers and body must arrive within ${seconds(readTimeoutMs)}` };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: headerOverflowMessage(err, bytesOfRequest) };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'request chunk extensions are too large' };
    default:
      if (err.code?.startsWith('HPE_')) return { status: 400, message: `malformed request: ${err.message.replace(/^Parse Error: /, '')}` };
      // Socket errors (ECONNRESET, ...): nobody to answer.
      return null;
  }
}

/** Go's server answers 400 to a request with several Host headers, or none in HTTP/1.1. */
function hostProblem(req: IncomingMessage): string | null {
  let hosts = 0;
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    if (req.rawHeaders[index]?.toLowerCase() === 'host') hosts += 1;
  }
  if (hosts > 1) return 'more than one Host header';
  if (hosts === 0 && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) return 'missing required Host header';
  return null;
}

/**
 * An answer given before the request body was read would make Node read (drain) the rest of
 * it to keep the connection: for a body over `drainLimitBytes`, a chunked one, or one the
 * client holds back for a 100 Continue, the answer says `Connection: close` and the
 * connection is closed instead. Node has no hook before the head is written, hence the wrap.
 */
function closeInsteadOfDraining(req: IncomingMessage, res: ServerResponse, drainLimitBytes: number): void {
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const large = Number(req.headers['content-length'] ?? 0) > drainLimitBytes;
  const waitsForContinue = req.headers.expect?.toLowerCase() === '100-continue';
  if (!chunked && !large && !waitsForContinue) return;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with apply(this)
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]): ServerResponse {
    if (!req.complete) this.setHeader('Connection', 'close');
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  };
}

/**
 * What the server keeps per connection, as a property of its socket rather than a Map entry per
 * request: a Map holding every in-flight response made V8 promote each request's objects out of
 * the young generation (2-7 MB per scavenge under HTTPS keep-alive load, peak RSS 250 MB instead
 * of about 110 MB).
 *
 * Node's parser reads ahead: it emits 'request' for every pipelined request it finds, while the
 * answer to the one before is still being decided. Requests therefore run one at a time per
 * connection, in order, as Go's server runs them: the next one starts only when the answer before
 * it has finished and left the connection open. Once an answer closes the connection (400 for the
 * Host header, 417, an early answer before an unread body, the client's own `Connection: close`),
 * nothing read after it runs.
 */
interface Connection {
  /** The response being written (undefined between requests), for the stop grace and parser errors. */
  active: ServerResponse | undefined;
  /** Requests read behind the active one, in order. */
  waiting: Array<{ req: IncomingMessage; res: ServerResponse; run: Handler }>;
  /** An answer closed (or is closing) the connection: nothing more from it runs. */
  closing: boolean;
  /** A parser error met behind the active request: answered once that one is done. */
  pendingBareAnswer: { status: number; message: string } | undefined;
}
const connectionState = Symbol('fabric-ops connection');
type TrackedSocket = Socket & { [connectionState]?: Connection };
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Past maxPipelinedRequests read ahead the server stops reading from the connection (TCP then
 * holds the client back, as Go's server does by reading one request at a time); requests Node
 * had already parsed past this many times that limit close the connection at once.
 */
const pipelinedDropFactor = 8;

/**
 * Node's own way to stop reading from an HTTP connection (it does the same when answers pile up
 * unread): the flag makes it pause its parser after the bytes in hand, and resume on drain.
 */
type ReadableConnection = Socket & { _paused?: boolean; parser?: { pause(): void; resume(): void } | null };

function stopReading(socket: ReadableConnection): void {
  if (socket._paused === true) return;
  socket._paused = true;
  socket.pause();
}

function resumeReading(socket: ReadableConnection): void {
  if (socket._paused !== true || socket.destroyed) return;
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}

/** Refused client certificates are reported at most this many times in any 10 s. */
const refusalReportsPerWindow = 10;
const refusalReportWindowMs = 10_000;

const peerAddress = Symbol('fabric-ops peer address');
type PeerSocket = Socket & { [peerAddress]?: string | undefined };

/** Writes a whole error answer on a socket with no usable response object, then closes it. */
function answerOnSocket(socket: Duplex, status: number, message: string, requestId?: string): boolean {
  if (!socket.writable) {
    socket.destroy();
    return false;
  }
  const timer = setTimeout(() => socket.destroy(), 1000).unref();
  socket.end(rawErrorResponse(status, message, requestId), () => {
    clearTimeout(timer);
    socket.destroy();
  });
  return true;
}

export async function startServer(
  listen: HostPort,
  app: RequestListener,
  tls: ServerTls | null,
  events: ServerEvents,
  limits: ServerLimits,
): Promise<ListeningServer> {
  const server = createNodeServer(tls, limits);
  const { inFlight, activityOf } = serveInOrder(server, withBareAnswers(app, events), limits, events);
  capConnections(server, limits, () => events.onConnectionRefused(), activityOf);
  if (tls) reportRefusedClientCertificates(server, tls, events);
  await listenOn(server, listen);

  const bound = server.address() as AddressInfo;
  const address: HostPort = { host: bound.address, port: bound.port };
  const url = `${tls ? 'https' : 'http'}://${formatHostPort(bound.address, bound.port)}`;

  return {
    url,
    address,
    setSecureContext(context: SecureContextOptions): void {
      (server as https.Server).setSecureContext(context);
    },
    close: (graceMs: number) => closeGracefully(server, inFlight, graceMs),
  };
}

/** Node's server with Go's timeouts: read (headers and request), keep-alive, and the TLS handshake. */
function createNodeServer(tls: ServerTls | null, limits: ServerLimits): http.Server | https.Server {
  // Node enforces the read timeouts when it sweeps its connections; sweep every second (more often
  // under shorter limits), not every 30 s. requireHostHeader off: the Host checks below answer with a JSON body.
  const options = { connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.readTimeoutMs / 4)), requireHostHeader: false };
  const server: http.Server | https.Server = tls
    ? https.createServer({
        ...options,
        ...tls.context,
        requestCert: true,
        rejectUnauthorized: tls.clientAuthRequired,
        // Go bounds the handshake by its read timeouts; a silent connection is closed like a plain one.
        handshakeTimeout: limits.handshakeTimeoutMs,
      })
    : http.createServer(options);
  server.headersTimeout = limits.readTimeoutMs;
  server.requestTimeout = limits.readTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  return server;
}

/**
 * Serves each connection's requests one at a time, in order (see Connection), and answers the
 * requests Node's parser refuses. Returns what lists the responses in progress, for close(), and
 * what a connection is doing, for the connection cap.
 */
function serveInOrder(
  server: http.Server | https.Server,
  handle: Handler,
  limits: ServerLimits,
  events: ServerEvents,
): { inFlight: () => ServerResponse[]; activityOf: (raw: Socket) => Activity } {
  const connections = new Set<TrackedSocket>();
  const connectionOf = (socket: TrackedSocket): Connection => {
    let connection = socket[connectionState];
    if (connection === undefined) {
      const created: Connection = { active: undefined, waiting: [], closing: false, pendingBareAnswer: undefined };
      connection = created;
      socket[connectionState] = created;
      // Over TLS the cap sees the TCP socket under the TLS one.
      const raw = (socket as TrackedSocket & { _parent?: TrackedSocket | null })._parent;
      if (raw) raw[connectionState] = created;
      connections.add(socket);
      socket.once('close', () => {
        connections.delete(socket);
        created.closing = true;
        created.waiting.length = 0;
      });
    }
    return connection;
  };

  /** Runs requests of one connection one at a time; see Connection. */
  const dispatch = (run: Handler) => (req: IncomingMessage, res: ServerResponse) => {
    // Requests already read from a connection refused after its handshake are not served.
    if (req.socket.destroyed) return;
    const socket = req.socket as TrackedSocket;
    const connection = connectionOf(socket);
    if (connection.closing) return;
    if (connection.active !== undefined) {
      if (connection.waiting.length >= limits.maxPipelinedRequests * pipelinedDropFactor) {
        // More requests sent ahead of their answers than any client needs: Node has parsed them
        // all (one read can hold thousands) and holds them until the connection closes.
        connection.closing = true;
        connection.waiting.length = 0;
        socket.destroy();
        return;
      }
      connection.waiting.push({ req, res, run });
      if (connection.waiting.length >= limits.maxPipelinedRequests) stopReading(socket);
      return;
    }
    start(socket, connection, req, res, run);
  };

  const start = (socket: TrackedSocket, connection: Connection, req: IncomingMessage, res: ServerResponse, run: Handler): void => {
    connection.active = res;
    const done = (): void => {
      res.off('finish', done);
      res.off('close', done);
      if (connection.active !== res) return;
      connection.active = undefined;
      // Node's own 'finish' listener ran first: after an answer that closes the connection it has
      // already ended the socket.
      if (socket.destroyed || socket.writableEnded || !res.writableFinished) connection.closing = true;
      if (connection.pendingBareAnswer !== undefined && !connection.closing) {
        const { status, message } = connection.pendingBareAnswer;
        connection.closing = true;
        if (answerOnSocket(socket, status, message)) events.onBareAnswer(status);
      }
      if (connection.closing) {
        connection.waiting.length = 0;
        if (!socket.writableEnded) socket.end(() => socket.destroy());
        return;
      }
      const next = connection.waiting.shift();
      if (connection.waiting.length < limits.maxPipelinedRequests / 2) resumeReading(socket);
      if (next !== undefined) start(socket, connection, next.req, next.res, next.run);
    };
    res.on('finish', done);
    res.on('close', done);
    closeInsteadOfDraining(req, res, limits.drainLimitBytes);
    run(req, res);
  };
  const activityOf = (raw: Socket): Activity => {
    // Over TLS the cap sees the TCP socket under the TLS one; connectionOf marks both.
    const connection = (raw as TrackedSocket)[connectionState];
    if (connection === undefined || connection.closing) return { kind: 'idle' };
    const res = connection.active;
    if (res === undefined) return connection.waiting.length > 0 ? { kind: 'answering' } : { kind: 'idle' };
    return !res.req.complete && !res.headersSent ? { kind: 'body', res } : { kind: 'answering' };
  };
  const inFlight = (): ServerResponse[] => {
    const responses: ServerResponse[] = [];
    for (const socket of connections) {
      const res = socket[connectionState]?.active;
      if (res !== undefined) responses.push(res);
    }
    return responses;
  };
  server.on('request', dispatch(handle));
  // Without this listener Node sends 100 Continue at once; the body reader sends it when it wants the body.
  server.on('checkContinue', dispatch(handle));
  server.on(
    'checkExpectation',
    dispatch((req: IncomingMessage, res: ServerResponse) => {
      sendBareError(
        res,
        417,
        `Expect: ${JSON.stringify(String(req.headers.expect).slice(0, 40))} is not supported; only 100-continue is`,
        requestIdFor(req.headers['x-request-id']),
      );
      events.onBareAnswer(417);
    }),
  );
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    if (answerOnSocket(socket, 405, 'method CONNECT is not supported', requestIdFor(req.headers['x-request-id']))) events.onBareAnswer(405);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const connection = (socket as TrackedSocket)[connectionState];
    // Before a first request every byte read is its head; after one, the count is unknown.
    const bytesOfRequest = connection === undefined ? (socket as Socket).bytesRead : Number.POSITIVE_INFINITY;
    const answer = parserErrorAnswer(err, limits.readTimeoutMs, bytesOfRequest);
    if (answer !== null && connection?.closing === false && connection.active?.req.complete === true) {
      // A request read in full before the malformed one is still being answered: the error answer follows it.
      connection.waiting.length = 0;
      connection.pendingBareAnswer = answer;
      return;
    }
    if (answer === null || connection?.closing === true || connection?.active?.headersSent === true) {
      socket.destroy();
      return;
    }
    if (connection !== undefined) {
      connection.waiting.length = 0;
      connection.closing = true;
    }
    if (answerOnSocket(socket, answer.status, answer.message)) events.onBareAnswer(answer.status);
  });
  return { inFlight, activityOf };
}

/** What Go's server answers itself, before the application sees the request: a bad Host, a transfer coding but chunked. */
function withBareAnswers(app: RequestListener, events: ServerEvents): Handler {
  return (req, res) => {
    const problem = hostProblem(req);
    if (problem !== null) {
      sendBareError(res, 400, problem, requestIdFor(req.headers['x-request-id']));
      events.onBareAnswer(400);
      return;
    }
    const transferEncoding = req.headers['transfer-encoding'];
    if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
      // Go's server answers 501 to any transfer coding but chunked alone (Node's parser has
      // already taken the chunked framing off; what is left would be a gzip or other stream).
      sendBareError(
        res,
        501,
        `Transfer-Encoding ${JSON.stringify(transferEncoding.slice(0, 40))} is not supported; only chunked is`,
        requestIdFor(req.headers['x-request-id']),
      );
      events.onBareAnswer(501);
      return;
    }
    app(req, res);
  };
}

function reportRefusedClientCertificates(server: http.Server | https.Server, tls: ServerTls, events: ServerEvents): void {
  const refusals = new WarningLimiter(refusalReportWindowMs, refusalReportsPerWindow);
  // Kept for the report: once a handshake is refused the address is gone.
  server.on('connection', (raw: PeerSocket) => {
    raw[peerAddress] = raw.remoteAddress;
  });
  const refused = (details: { remoteAddress: string; reason: string; subject: string }): void => {
    const allowed = refusals.take('refused client certificate', (events.clock ?? systemClock).now());
    if (allowed !== null) events.onRefusedClientCertificate({ ...details, suppressed: allowed.suppressed });
  };
  // A client that presents a certificate that does not verify is refused on every path,
  // as Go's VerifyClientCertIfGiven does, even when client auth is optional.
  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.authorized) return;
    const presented = socket.getPeerCertificate();
    if (!presented || Object.keys(presented).length === 0) return;
    refused({
      remoteAddress: socket.remoteAddress ?? 'unknown',
      reason: String(socket.authorizationError ?? 'not verified'),
      subject: formatClientSubject(presented),
    });
    socket.destroy();
  });
  if (tls.clientAuthRequired) {
    // Here the handshake itself refuses: OpenSSL when no certificate comes, Node (before
    // 'secureConnection', and without the certificate) when it does not verify. Other
    // handshake failures (timeouts, resets, versions) are not about the client's certificate.
    server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => {
      const reason = err.code === 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE' ? 'no client certificate presented' : (socket.authorizationError ?? null);
      if (reason === null) return;
      const raw = (socket as TLSSocket & { _parent?: PeerSocket | null })._parent;
      refused({
        remoteAddress: socket.remoteAddress ?? raw?.[peerAddress] ?? 'unknown',
        reason: String(reason),
        subject: 'unknown (refused during the handshake)',
      });
    });
  }
}

/**
 * Binds the address; a failure is a ListenError naming it and why. An IP address is bound first
 * with net.BoundSocket (Node >= 24.19) and the server listens on that socket: `listen(port, host)`
 * looks the host up even when it is an address and then tests every answer against Node's IPv6
 * pattern, about 3 ms of every start (compiling that pattern, and loading node:dns) for nothing
 * (issue 20). A host name, the empty host (every address, dual-stack) and older Node.js listen
 * as before.
 */
async function listenOn(server: http.Server | https.Server, listen: HostPort): Promise<void> {
  const wanted = formatHostPort(listen.host === '' ? '0.0.0.0' : listen.host, listen.port);
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => reject(new ListenError(wanted, describeListenError(wanted, err)));
    const ready = (): void => {
      server.off('error', onError);
      resolve();
    };
    if (listen.host !== '' && typeof BoundSocket === 'function' && isIP(listen.host) !== 0) {
      let bound: BoundSocket;
      try {
        bound = new BoundSocket({ host: listen.host, port: listen.port });
      } catch (err) {
        onError(err as NodeJS.ErrnoException);
        return;
      }
      server.once('error', onError);
      server.listen(bound, ready);
      return;
    }
    server.once('error', onError);
    if (listen.host === '') server.listen(listen.port, ready);
    else server.listen(listen.port, listen.host, ready);
  });
}

/**
 * Stops accepting, lets the requests in progress finish for at most graceMs, then answers those
 * still unanswered (503, or 408 while the body is still arriving) and closes every connection.
 */
async function closeGracefully(server: http.Server | https.Server, inFlight: () => ServerResponse[], graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
  const drained = new Promise<void>((resolve) => {
    const check = (): void => {
      if (inFlight().length === 0) resolve();
      else setTimeout(check, 25).unref();
    };
    check();
  });
  await Promise.race([drained, deadline]);
  // server.close() stopped Node's read-timeout sweep: a request still uploading gets its 408 here.
  const answered: Array<Promise<void>> = [];
  for (const res of inFlight()) {
    const { req } = res;
    if (res.headersSent || req.socket.destroyed) continue;
    answered.push(new Promise((resolve) => res.once('close', () => resolve())));
    if (req.complete) sendBareError(res, 503, 'the server is stopping and could not finish this request in time');
    else sendBareError(res, 408, 'the server is stopping and the request body did not arrive in time');
  }
  if (answered.length > 0) await Promise.race([Promise.all(answered), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  server.closeAllConnections();
  await closed;
}
