import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '../../logging/types';
import { formatClientSubject } from '../../tls/subject';
import { sendError } from '../errors';
import { requestPath } from '../request-path';

/** The verified client certificate's subject (formatClientSubject: `O=org1,CN=operator`), or undefined. */
export function verifiedClientSubject(req: IncomingMessage): string | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function' || socket.authorized !== true) return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  return formatClientSubject(cert);
}

/** The verified client certificate's subject, issuer and SHA-256 fingerprint (fleet writers), or undefined. */
export function verifiedClientIdentity(req: IncomingMessage): { subject: string; issuer: string; fingerprint256: string } | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function' || socket.authorized !== true) return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  return { subject: formatClientSubject(cert), issuer: formatClientSubject({ subject: cert.issuer }), fingerprint256: cert.fingerprint256 };
}

/**
 * The client-certificate rule of a protected path: when TLS is on and the request carries no
 * verified client certificate chaining to clientRootCAs, answers 401 (and logs it) and returns
 * true. Without TLS every path is open (README, TLS).
 */
export function refuseWithoutClientCertificate(tlsEnabled: boolean, logger: Logger): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (!tlsEnabled || verifiedClientSubject(req) !== undefined) return false;
    logger.warn('client certificate required', {
      method: req.method,
      path: requestPath(req),
      remoteAddress: req.socket.remoteAddress,
    });
    sendError(res, 401, `a client certificate issued by a trusted client CA is required for ${requestPath(req)}`);
    return true;
  };
}

/** The same rule as a middleware, for routers: `next()` when the request may go on. */
export function requireClientCertificate(tlsEnabled: boolean, logger: Logger): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const refuse = refuseWithoutClientCertificate(tlsEnabled, logger);
  return (req, res, next) => {
    if (!refuse(req, res)) next();
  };
}
