import type { TLSSocket } from 'node:tls';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../../logging/types';
import { formatClientSubject } from '../../tls/subject';
import { sendError } from '../errors';

/** The verified client certificate's subject (formatClientSubject: `O=org1,CN=operator`), or undefined. */
export function verifiedClientSubject(req: Request): string | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function' || socket.authorized !== true) return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  return formatClientSubject(cert);
}

/** The verified client certificate's subject, issuer and SHA-256 fingerprint (fleet writers), or undefined. */
export function verifiedClientIdentity(req: Request): { subject: string; issuer: string; fingerprint256: string } | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function' || socket.authorized !== true) return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  return { subject: formatClientSubject(cert), issuer: formatClientSubject({ subject: cert.issuer }), fingerprint256: cert.fingerprint256 };
}

/**
 * Paths that need a client certificate chaining to clientRootCAs when TLS is on.
 * Without TLS every path is open (README, TLS).
 */
export function requireClientCertificate(tlsEnabled: boolean, logger: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!tlsEnabled || verifiedClientSubject(req) !== undefined) {
      next();
      return;
    }
    logger.warn('client certificate required', {
      method: req.method,
      path: req.path,
      remoteAddress: req.socket.remoteAddress,
    });
    sendError(res, 401, `a client certificate issued by a trusted client CA is required for ${req.path}`);
  };
}
