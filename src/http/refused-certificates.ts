import type http from 'node:http';
import type https from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { WarningLimiter } from '../logging/warning-limiter';
import { systemClock, type Clock } from '../time';
import { formatClientSubject } from '../tls/subject';
import { tcpSocketUnder } from './node-internals';

/** A refused client certificate, as reported (ServerEvents.onRefusedClientCertificate). */
export interface RefusedCertificate {
  remoteAddress: string;
  reason: string;
  subject: string;
  /** How many refusals were not reported before this one (rate limit). */
  suppressed: number;
}

/** Where the refusals are reported, and the clock their rate limit goes by (default the system clock). */
export interface RefusalEvents {
  onRefusedClientCertificate(details: RefusedCertificate): void;
  clock?: Clock;
}

/** Refused client certificates are reported at most this many times in any 10 s. */
const refusalReportsPerWindow = 10;
const refusalReportWindowMs = 10_000;

const peerAddress = Symbol('fabric-ops peer address');
type PeerSocket = Socket & { [peerAddress]?: string | undefined };

/**
 * Refuses a client certificate that does not verify (and, with `clientAuthRequired`, none at all)
 * and reports each refusal, rate-limited.
 */
export function reportRefusedClientCertificates(server: http.Server | https.Server, clientAuthRequired: boolean, events: RefusalEvents): void {
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
  if (clientAuthRequired) {
    // Here the handshake itself refuses: OpenSSL when no certificate comes, Node (before
    // 'secureConnection', and without the certificate) when it does not verify. Other
    // handshake failures (timeouts, resets, versions) are not about the client's certificate.
    server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => {
      const reason = err.code === 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE' ? 'no client certificate presented' : (socket.authorizationError ?? null);
      if (reason === null) return;
      // The address as the TCP socket under the TLS one was accepted (see the 'connection' listener).
      const raw: PeerSocket | undefined = tcpSocketUnder(socket);
      refused({
        remoteAddress: socket.remoteAddress ?? raw?.[peerAddress] ?? 'unknown',
        reason: String(reason),
        subject: 'unknown (refused during the handshake)',
      });
    });
  }
}
