import type http from 'node:http';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { answerOnSocket, parserErrorAnswer, refuseExpectation, type BareAnswer, type BareAnswerEvents } from './bare-answers';
import type { Activity } from './connection-cap';
import { sendError } from './errors';
import { seconds } from './limits';
import { resumeReading, stopReading, tcpSocketUnder } from './node-internals';
import { requestPath } from './request-path';

/**
 * Each connection's requests, served one at a time and in order.
 *
 * Node's parser reads ahead: it emits 'request' for every pipelined request it finds, while the
 * answer to the one before is still being decided. Requests therefore run one at a time per
 * connection, in order, as Go's server runs them: the next one starts only when the answer before
 * it has finished and left the connection open. Once an answer closes the connection (400 for the
 * Host header, 417, an early answer before an unread body, the client's own `Connection: close`),
 * nothing read after it runs.
 *
 * RequestOrder (one per server) takes the server's events; ConnectionOrder (one per connection,
 * made at its first request) holds the connection's state and runs its requests. As it sees every
 * request start and every answer end, it also holds the response-time limit and reports each
 * answer for the requests metric: with one timer per connection and the listeners it has anyway,
 * instead of a timer and two listeners more on every response (issue 32; docs/performance.md).
 */

export interface OrderLimits {
  /** Headers and body of a request must arrive within this (the 408 the parser's timeout gets says so). */
  readTimeoutMs: number;
  /** Requests read ahead on one connection before the server stops reading from it. */
  maxPipelinedRequests: number;
  /** An early answer drains an unread body up to this size; a larger or chunked one closes the connection. */
  drainLimitBytes: number;
  /** A response not started within this is given up (503); one started and not finished is cut. */
  responseTimeoutMs: number;
}

/** What the order reports: the answers it sees end, and the responses it gives up. */
export interface OrderEvents extends BareAnswerEvents {
  /** An answer to a parsed request was written in full (one cut short is not), for the requests metric. */
  onAnswered(req: IncomingMessage, statusCode: number): void;
  /** A response not started within the response-time limit, answered 503 (one begun is cut without a word). */
  onGaveUp(details: { method: string | undefined; path: string; limitMs: number }): void;
}

/**
 * Past maxPipelinedRequests read ahead the server stops reading from the connection (TCP then
 * holds the client back, as Go's server does by reading one request at a time); requests Node
 * had already parsed past this many times that limit close the connection at once.
 */
const pipelinedDropFactor = 8;

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

/** A request read behind the one being answered, with what is to answer it. */
interface Queued {
  req: IncomingMessage;
  res: ServerResponse;
  run: RequestListener;
}

/** The property of a socket that holds its ConnectionOrder (see there why not a Map). */
const orderKey = Symbol('fabric-ops request order');
type OrderedSocket = Socket & { [orderKey]?: ConnectionOrder };

/**
 * One connection's requests, run one at a time in order (see the top of this file).
 *
 * It is kept as a property of the connection's socket rather than a Map entry per request: a Map
 * holding every in-flight response made V8 promote each request's objects out of the young
 * generation (2-7 MB per scavenge under HTTPS keep-alive load, peak RSS 250 MB instead of about
 * 110 MB).
 */
class ConnectionOrder {
  /** The response being written (undefined between requests), for the stop grace and parser errors. */
  private active: ServerResponse | undefined = undefined;
  /** Requests read behind the active one, in order. */
  private readonly waiting: Queued[] = [];
  /** An answer closed (or is closing) the connection: nothing more from it runs. */
  private closing = false;
  /** A parser error met behind the active request: answered once that one is done. */
  private pendingBareAnswer: BareAnswer | undefined = undefined;
  /**
   * The response-time limit of the active request: one timer for the connection, re-armed
   * (refresh()) as each request starts. Once it fires with no request in progress (the one it was
   * armed for was answered) it does nothing, and the next start re-arms it.
   */
  private limitTimer: NodeJS.Timeout | undefined = undefined;
  /** The 'finish' listener of the connection's responses (`this`: the response), one function for all of them. */
  private readonly onFinish: (this: ServerResponse) => void;

  private constructor(
    /** The connection's socket as the HTTP server has it (over TLS, the TLS socket). */
    private readonly socket: Socket,
    private readonly limits: OrderLimits,
    private readonly events: OrderEvents,
  ) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the listener's own `this` is the response
    const order = this;
    this.onFinish = function (this: ServerResponse): void {
      order.answered(this);
    };
  }

  /** The order of the connection on `socket` (over TLS, either the TLS socket or the TCP one under it); undefined before its first request. */
  static of(socket: Socket | Duplex): ConnectionOrder | undefined {
    return (socket as OrderedSocket)[orderKey];
  }

  /** Makes the order of the connection on `socket`, and keeps it on the socket. */
  static open(socket: Socket, limits: OrderLimits, events: OrderEvents): ConnectionOrder {
    const order = new ConnectionOrder(socket, limits, events);
    (socket as OrderedSocket)[orderKey] = order;
    // Over TLS the cap sees the TCP socket under the TLS one.
    const tcp = tcpSocketUnder(socket);
    if (tcp) (tcp as OrderedSocket)[orderKey] = order;
    return order;
  }

  /** The response being written, if any. */
  get inProgress(): ServerResponse | undefined {
    return this.active;
  }

  /** A request Node has parsed: run at once when none is being answered, else queued behind (or the connection dropped). */
  receive(req: IncomingMessage, res: ServerResponse, run: RequestListener): void {
    if (this.closing) return;
    if (this.active === undefined) {
      this.start(req, res, run);
      return;
    }
    if (this.waiting.length >= this.limits.maxPipelinedRequests * pipelinedDropFactor) {
      // More requests sent ahead of their answers than any client needs: Node has parsed them
      // all (one read can hold thousands) and holds them until the connection closes.
      this.closing = true;
      this.waiting.length = 0;
      this.socket.destroy();
      return;
    }
    this.waiting.push({ req, res, run });
    if (this.waiting.length >= this.limits.maxPipelinedRequests) stopReading(this.socket);
  }

  private start(req: IncomingMessage, res: ServerResponse, run: RequestListener): void {
    this.active = res;
    // Only 'finish': an answer of HTTP/1 ends without it only when its connection closes, which
    // closed() takes. The listener is not removed: a response finishes once.
    res.on('finish', this.onFinish);
    closeInsteadOfDraining(req, res, this.limits.drainLimitBytes);
    if (this.limitTimer === undefined) this.limitTimer = setTimeout(() => this.limitReached(), this.limits.responseTimeoutMs).unref();
    else this.limitTimer.refresh();
    run(req, res);
  }

  /** The response-time limit of the request in progress ran out: 503, or once its answer has begun, the connection cut. */
  private limitReached(): void {
    const res = this.active;
    if (res === undefined) return;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const limitMs = this.limits.responseTimeoutMs;
    this.events.onGaveUp({ method: res.req.method, path: requestPath(res.req), limitMs });
    sendError(res, 503, `no response within ${seconds(limitMs)}`);
  }

  /**
   * The answer `res` finished: counted (before the next request on the connection runs, so that a
   * pipelined /metrics sees it), then the next request runs, unless the connection is closing.
   */
  private answered(res: ServerResponse): void {
    if (this.active !== res) return;
    this.active = undefined;
    this.events.onAnswered(res.req, res.statusCode);
    const socket = this.socket;
    // Node's own 'finish' listener ran first: after an answer that closes the connection it has
    // already ended the socket.
    if (socket.destroyed || socket.writableEnded) this.closing = true;
    if (this.pendingBareAnswer !== undefined && !this.closing) {
      const { status, message } = this.pendingBareAnswer;
      this.closing = true;
      if (answerOnSocket(socket, status, message)) this.events.onBareAnswer(status);
    }
    if (this.closing) {
      this.waiting.length = 0;
      if (!socket.writableEnded) socket.end(() => socket.destroy());
      return;
    }
    const next = this.waiting.shift();
    if (this.waiting.length < this.limits.maxPipelinedRequests / 2) resumeReading(socket);
    if (next !== undefined) this.start(next.req, next.res, next.run);
  }

  /** The socket closed: nothing more runs, and an answer in progress ends unfinished (not counted). */
  closed(): void {
    this.closing = true;
    this.active = undefined;
    this.waiting.length = 0;
    clearTimeout(this.limitTimer);
  }

  /** What the connection is doing, as the connection cap sees it. */
  activity(): Activity {
    if (this.closing) return { kind: 'idle' };
    const res = this.active;
    if (res === undefined) return this.waiting.length > 0 ? { kind: 'answering' } : { kind: 'idle' };
    return !res.req.complete && !res.headersSent ? { kind: 'body', res } : { kind: 'answering' };
  }

  /** Node's parser refused what the connection sent after its first request; `answer` is the error answer due. */
  refused(answer: BareAnswer): void {
    if (!this.closing && this.active?.req.complete === true) {
      // A request read in full before the malformed one is still being answered: the error answer follows it.
      this.waiting.length = 0;
      this.pendingBareAnswer = answer;
      return;
    }
    if (this.closing || this.active?.headersSent === true) {
      this.socket.destroy();
      return;
    }
    this.waiting.length = 0;
    this.closing = true;
    if (answerOnSocket(this.socket, answer.status, answer.message)) this.events.onBareAnswer(answer.status);
  }
}

/**
 * A server's requests, each connection's served in order through one ConnectionOrder per
 * connection, and the answers to what Node's parser refuses.
 */
export class RequestOrder {
  /** The connections that have had a request, until they close. */
  private readonly connections = new Set<ConnectionOrder>();

  constructor(
    private readonly limits: OrderLimits,
    private readonly events: OrderEvents,
  ) {}

  /** Takes the server's requests, to run through `handle` each connection's in order, and its parser errors. */
  serve(server: http.Server | https.Server, handle: RequestListener): void {
    server.on('request', this.inOrder(handle));
    // Without this listener Node sends 100 Continue at once; the body reader sends it when it wants the body.
    server.on('checkContinue', this.inOrder(handle));
    server.on('checkExpectation', this.inOrder(refuseExpectation));
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.refuseUnparsed(err, socket));
  }

  /** The responses in progress, for the stop grace. */
  inFlight(): ServerResponse[] {
    const responses: ServerResponse[] = [];
    for (const connection of this.connections) {
      const res = connection.inProgress;
      if (res !== undefined) responses.push(res);
    }
    return responses;
  }

  /** What the connection on `raw`, a socket the server accepted (over TLS the TCP one), is doing, for the connection cap. */
  activityOf(raw: Socket): Activity {
    return ConnectionOrder.of(raw)?.activity() ?? { kind: 'idle' };
  }

  private inOrder(run: RequestListener): RequestListener {
    return (req, res) => {
      // Requests already read from a connection refused after its handshake are not served.
      if (req.socket.destroyed) return;
      this.connectionOf(req.socket).receive(req, res, run);
    };
  }

  private connectionOf(socket: Socket): ConnectionOrder {
    const known = ConnectionOrder.of(socket);
    if (known !== undefined) return known;
    const connection = ConnectionOrder.open(socket, this.limits, this.events);
    this.connections.add(connection);
    socket.once('close', () => {
      this.connections.delete(connection);
      connection.closed();
    });
    return connection;
  }

  /** Node's 'clientError': the parser refused what the connection sent (or the socket failed). */
  private refuseUnparsed(err: NodeJS.ErrnoException, socket: Duplex): void {
    const connection = ConnectionOrder.of(socket);
    // Before a first request every byte read is its head; after one, the count is unknown.
    const bytesOfRequest = connection === undefined ? (socket as Socket).bytesRead : Number.POSITIVE_INFINITY;
    const answer = parserErrorAnswer(err, this.limits.readTimeoutMs, bytesOfRequest);
    if (answer === null) {
      socket.destroy();
      return;
    }
    if (connection !== undefined) {
      connection.refused(answer);
      return;
    }
    if (answerOnSocket(socket, answer.status, answer.message)) this.events.onBareAnswer(answer.status);
  }
}
