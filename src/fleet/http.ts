import type { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { LogSpecError, messageOf } from '../errors';
import { readBodyOrAnswer } from '../http/body-answer';
import { sendError } from '../http/errors';
import { sendJson } from '../http/json';
import { verifiedClientIdentity } from '../http/middleware/client-auth';
import { WarningLimiter } from '../logging/warning-limiter';
import { clip } from '../text';
import { systemClock } from '../time';
import { clientIdentity, matchingWriter, writerAuditFields, type ClientIdentity } from './writers';
import { FleetNotReadyError, FleetRequestError } from './logspec';
import { PutBackPersistError } from './putback-store';
import { parseRestoreRequest, parseSetRequest } from './request';
import type { FleetService } from './service';

/** Unauthenticated requests are reported as the server reports refused client certificates (src/http/refused-certificates.ts): at most ten lines in any 10 s. */
const unauthenticatedReportsPerWindow = 10;
const unauthenticatedReportWindowMs = 10_000;

/** Who writes, as the audit line names them: the subject, and the issuer and certificate fingerprint as fields. */
interface Writer {
  actor: string;
  fields: Record<string, string>;
}

/** The verified client certificate of the request (the first middleware admits only those). */
function peerCertificate(req: Request): X509Certificate | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerX509Certificate !== 'function' || socket.authorized !== true) return undefined;
  return socket.getPeerX509Certificate();
}

type WarnLogger = { warn(message: string, fields?: Record<string, unknown>): void };

/**
 * Every /fleet path demands a verified client certificate, whatever clientAuthRequired says. A
 * request without is reported as the server reports refused client certificates: at most ten lines
 * in any ten seconds (the next says how many were left out), each path cut at 200 characters; the
 * answer echoes no path.
 */
function requireClientCertificate(logger: WarnLogger): RequestHandler {
  const unauthenticated = new WarningLimiter(unauthenticatedReportWindowMs, unauthenticatedReportsPerWindow);
  return (req, res, next) => {
    if (verifiedClientIdentity(req) !== undefined) {
      next();
      return;
    }
    const allowed = unauthenticated.take('fleet: client certificate required', systemClock.now());
    if (allowed !== null) {
      logger.warn('fleet: client certificate required', {
        method: req.method,
        path: clip(req.originalUrl, 200),
        remoteAddress: req.socket.remoteAddress,
        suppressed: allowed.suppressed,
      });
    }
    sendError(res, 401, 'a client certificate issued by a trusted client CA is required for /fleet');
  };
}

/** A write needs a rule of `writers` the certificate satisfies (src/fleet/writers.ts); the write's audit line then names the subject (actor), its issuer and the certificate's fingerprint. */
function requireWriter(fleet: FleetService, logger: WarnLogger): RequestHandler {
  return (req, res, next) => {
    const certificate = peerCertificate(req);
    if (certificate === undefined) {
      sendError(res, 401, 'a client certificate issued by a trusted client CA is required for /fleet');
      return;
    }
    let identity: ClientIdentity;
    try {
      identity = clientIdentity(certificate);
    } catch (error) {
      logger.warn('fleet: write refused', { method: req.method, path: req.originalUrl, problem: messageOf(error) });
      sendError(res, 403, `the client certificate's subject and issuer cannot be read (${messageOf(error)}); it may not change the fleet`);
      return;
    }
    const rule = matchingWriter(fleet.config.writers, identity);
    if (rule !== null) {
      res.locals.writer = { actor: identity.subjectText, fields: writerAuditFields(identity, rule) } satisfies Writer;
      next();
      return;
    }
    const { subjectText: subject, issuerText: issuer, fingerprint256 } = identity;
    logger.warn('fleet: write refused', { method: req.method, path: req.originalUrl, subject, issuer, fingerprint256 });
    sendError(
      res,
      403,
      `client "${subject}" (issued by "${issuer}", certificate SHA-256 ${fingerprint256}) may not change the fleet; writers are listed in ${fleet.config.source} (writers)`,
    );
  };
}

/** Sends `answer` unless the request was answered meanwhile (the response limit, a stop). */
function send(res: Response, status: number, answer: unknown): void {
  if (!res.headersSent) sendJson(res, status, answer);
}

/** A write the domain refused before touching any node: 400 (the request), 503 (discovery not listed yet), 500 (put-backs not persisted). */
function answerWriteError(res: Response, error: unknown): void {
  if (res.headersSent) return;
  if (error instanceof LogSpecError || error instanceof FleetRequestError) sendError(res, 400, error.message);
  else if (error instanceof FleetNotReadyError) {
    res.setHeader('Retry-After', '1');
    sendError(res, 503, error.message);
  } else if (error instanceof PutBackPersistError) sendError(res, 500, `${error.message}; no node was changed`);
  else throw error;
}

/**
 * A write's handler: the body (bounded: 413 past maxBodyBytes), parsed (400 with the problem),
 * then `act` as the writer the middleware admitted; its domain refusals mapped by answerWriteError.
 */
function writeHandler<T>(
  maxBodyBytes: number,
  parse: (text: string) => { ok: true; value: T } | { ok: false; problem: string },
  act: (request: T, writer: Writer) => Promise<{ status: number; answer: unknown }>,
): RequestHandler {
  return async (req, res) => {
    const text = await readBodyOrAnswer(req, res, maxBodyBytes);
    if (text === null) return;
    const parsed = parse(text);
    if (!parsed.ok) {
      sendError(res, 400, parsed.problem);
      return;
    }
    try {
      const { status, answer } = await act(parsed.value, res.locals.writer as Writer);
      send(res, status, answer);
    } catch (error) {
      answerWriteError(res, error);
    }
  };
}

/**
 * /fleet/*: parse, call the FleetService, map results to status codes. Every path demands a
 * verified client certificate whatever clientAuthRequired says; writes demand one a rule of `writers` admits.
 * Bodies are limited as `PUT /logspec`'s are: the server's `httpLimits.maxBodyBytes` (413 past it).
 */
export function fleetRouter(fleet: FleetService, logger: WarnLogger, limits: { maxBodyBytes: number }): Router {
  const { maxBodyBytes } = limits;
  const router = Router({ caseSensitive: true, strict: true });
  router.use(requireClientCertificate(logger));
  const writer = requireWriter(fleet, logger);

  /** A path's methods; any other is 405 with Allow. */
  const route = (path: string, handlers: { get?: RequestHandler; put?: RequestHandler; delete?: RequestHandler }): void => {
    const allowed = [...(handlers.get ? ['GET', 'HEAD'] : []), ...(handlers.put ? ['PUT'] : []), ...(handlers.delete ? ['DELETE'] : [])].join(', ');
    if (handlers.get) router.get(path, handlers.get);
    if (handlers.put) router.put(path, writer, handlers.put);
    if (handlers.delete) router.delete(path, writer, handlers.delete);
    router.all(path, (req, res) => {
      res.setHeader('Allow', allowed);
      sendError(res, 405, `method ${req.method} not allowed on /fleet${path}; allowed: ${allowed}`);
    });
  };

  route('/healthz', {
    get: async (_req, res) => {
      const report = await fleet.health();
      send(res, report.status === 'OK' ? 200 : 503, report);
    },
  });

  route('/version', {
    get: async (_req, res) => send(res, 200, await fleet.versions()),
  });

  // Every channel's heights on every node and who lags (src/fleet/channels.ts): 200 with the nodes not read in the answer, as /version; 503 with the reason until discovery has listed, as /healthz.
  route('/channels', {
    get: async (_req, res) => {
      const report = await fleet.channels();
      send(res, report.reason === undefined ? 200 : 503, report);
    },
  });

  // Every certificate of every node, soonest expiry first (src/fleet/certificates.ts); 200 with the nodes not read in the answer, as /version.
  route('/certificates', {
    get: async (_req, res) => send(res, 200, await fleet.certificates()),
  });

  route('/logspec', {
    get: async (_req, res) => send(res, 200, { nodes: await fleet.readLogSpecs() }),
    put: writeHandler(maxBodyBytes, parseSetRequest, async (request, { actor, fields }) => {
      const answer = await fleet.setLogSpec(request, actor, fields);
      return { status: answer.complete ? 200 : 502, answer };
    }),
    delete: writeHandler(maxBodyBytes, parseRestoreRequest, async (request, { actor, fields }) => {
      const nodes = await fleet.restoreLogSpecs(request, actor, fields);
      return { status: nodes.every((node) => node.result !== 'failed') ? 200 : 502, answer: { nodes } };
    }),
  });

  return router;
}
