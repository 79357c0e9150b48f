import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { SecureContextOptions, TLSSocket } from 'node:tls';
import type { RequestListener } from 'node:http';
import type { HostPort } from '../config/types';
import { ListenError } from '../errors';

/** Like Fabric's: headers and body within 10 s, idle keep-alive connections closed after 5 s. */
export const readTimeoutMs = 10_000;
export const keepAliveTimeoutMs = 5_000;

export interface ServerTls {
  context: SecureContextOptions;
  /** When true the handshake itself demands a client certificate on every path. */
  clientAuthRequired: boolean;
}

export interface ListeningServer {
  readonly url: string;
  readonly address: HostPort;
  /** New connections use the new material; open ones keep theirs. */
  setSecureContext(context: SecureContextOptions): void;
  /** Stops accepting, lets in-flight requests finish within graceMs, then cuts what is left. */
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
  /** A client presented a certificate that does not verify; its connection was closed. */
  onRefusedClientCertificate(details: { remoteAddress: string; reason: string; subject: string }): void;
}

export async function startServer(
  listen: HostPort,
  app: RequestListener,
  tls: ServerTls | null,
  events: ServerEvents,
): Promise<ListeningServer> {
  // Requests already read from a connection refused after its handshake are not served.
  const listener: RequestListener = (req, res) => {
    if (!req.socket.destroyed) app(req, res);
  };
  // Node enforces the read timeouts when it sweeps its connections; sweep every second, not every 30 s.
  const limits = { connectionsCheckingInterval: 1000 };
  const server: http.Server | https.Server = tls
    ? https.createServer({ ...limits, ...tls.context, requestCert: true, rejectUnauthorized: tls.clientAuthRequired }, listener)
    : http.createServer(limits, listener);
  server.headersTimeout = readTimeoutMs;
  server.requestTimeout = readTimeoutMs;
  server.keepAliveTimeout = keepAliveTimeoutMs;

  if (tls) {
    // A client that presents a certificate that does not verify is refused on every path,
    // as Go's VerifyClientCertIfGiven does, even when client auth is optional.
    server.on('secureConnection', (socket: TLSSocket) => {
      if (socket.authorized) return;
      const presented = socket.getPeerCertificate();
      if (!presented || Object.keys(presented).length === 0) return;
      events.onRefusedClientCertificate({
        remoteAddress: socket.remoteAddress ?? 'unknown',
        reason: String(socket.authorizationError ?? 'not verified'),
        subject: Object.entries(presented.subject ?? {})
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(','),
      });
      socket.destroy();
    });
  }

  const inFlight = new Set<Socket>();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    inFlight.add(req.socket);
    res.on('close', () => inFlight.delete(req.socket));
  });

  const wanted = formatHostPort(listen.host === '' ? '0.0.0.0' : listen.host, listen.port);
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => reject(new ListenError(wanted, describeListenError(wanted, err)));
    server.once('error', onError);
    const ready = (): void => {
      server.off('error', onError);
      resolve();
    };
    if (listen.host === '') server.listen(listen.port, ready);
    else server.listen(listen.port, listen.host, ready);
  });

  const bound = server.address() as AddressInfo;
  const address: HostPort = { host: bound.address, port: bound.port };
  const url = `${tls ? 'https' : 'http'}://${formatHostPort(bound.address, bound.port)}`;

  return {
    url,
    address,
    setSecureContext(context: SecureContextOptions): void {
      (server as https.Server).setSecureContext(context);
    },
    async close(graceMs: number): Promise<void> {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
      const drained = new Promise<void>((resolve) => {
        const check = (): void => {
          if (inFlight.size === 0) resolve();
          else setTimeout(check, 25).unref();
        };
        check();
      });
      await Promise.race([drained, deadline]);
      server.closeAllConnections();
      await closed;
    },
  };
}
