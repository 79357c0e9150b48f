import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { SecureContextOptions } from 'node:tls';
import type { HostPort } from '../config/types';
import { refuseConnect, withBareAnswers } from './bare-answers';
import { capConnections } from './connection-cap';
import { sendBareError } from './errors';
import type { HttpLimits } from './limits';
import { boundAddress, listenOn } from './listen';
import { reportRefusedClientCertificates } from './refused-certificates';
import { RequestIdResponse } from './request-ids';
import { RequestOrder } from './request-order';
import { settleStreamShapes } from './stream-shapes';
import type { Clock } from '../time';

/**
 * The operations server: Node's HTTP(S) server with Go's timeouts, and what is in the files beside
 * this one: listen.ts (binding), request-order.ts (each connection's requests one at a time, in
 * order), bare-answers.ts (what Go's server answers before the router), connection-cap.ts
 * (maxConnections), refused-certificates.ts (client certificates refused and reported),
 * stream-shapes.ts (no deoptimization storm at the first connection reset).
 */

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
  /** An answer written on a bare socket (parser errors, CONNECT), for the requests metric. */
  onBareAnswer(statusCode: number): void;
  /**
   * An answer to a parsed request was written in full, for the requests metric: the router's and
   * those below it (Host, transfer coding, Expect). One cut short is not counted.
   */
  onAnswered(req: IncomingMessage, statusCode: number): void;
  /** A response was not started within limits.responseTimeoutMs and was answered 503. */
  onGaveUp(details: { method: string | undefined; path: string; limitMs: number }): void;
  /** The time the refusal reports are rate-limited by; default the system clock. */
  clock?: Clock;
}

export async function startServer(
  listen: HostPort,
  app: RequestListener,
  tls: ServerTls | null,
  events: ServerEvents,
  limits: ServerLimits,
): Promise<ListeningServer> {
  settleStreamShapes();
  const server = createNodeServer(tls, limits);
  const order = new RequestOrder(limits, events);
  order.serve(server, withBareAnswers(app));
  server.on('connect', refuseConnect(events));
  capConnections(
    server,
    limits,
    () => events.onConnectionRefused(),
    (raw) => order.activityOf(raw),
  );
  if (tls) reportRefusedClientCertificates(server, tls.clientAuthRequired, events);
  await listenOn(server, listen);
  const { url, address } = boundAddress(server, tls ? 'https' : 'http');

  return {
    url,
    address,
    setSecureContext(context: SecureContextOptions): void {
      (server as https.Server).setSecureContext(context);
    },
    close: (graceMs: number) => closeGracefully(server, () => order.inFlight(), graceMs),
  };
}

/** Node's server with Go's timeouts: read (headers and request), keep-alive, and the TLS handshake. */
function createNodeServer(tls: ServerTls | null, limits: ServerLimits): http.Server | https.Server {
  // Node enforces the read timeouts when it sweeps its connections; sweep every second (more often
  // under shorter limits), not every 30 s. requireHostHeader off: the Host checks (bare-answers.ts) answer with a JSON body.
  // Its responses write the request id into their heads (request-ids.ts).
  const options = {
    connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.readTimeoutMs / 4)),
    requireHostHeader: false,
    ServerResponse: RequestIdResponse,
  };
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
