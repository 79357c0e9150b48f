import { Router, type RequestHandler, type Response } from 'express';
import { LogSpecError } from '../errors';
import { readBodyOrAnswer } from '../http/body-answer';
import { sendError } from '../http/errors';
import { sendJson } from '../http/json';
import { verifiedClientIdentity } from '../http/middleware/client-auth';
import type { ClientIdentity } from './writers';
import { FleetNotReadyError, FleetRequestError } from './logspec';
import { PutBackPersistError } from './putback-store';
import { parseRestoreRequest, parseSetRequest } from './request';
import type { FleetService } from './service';

/**
 * /fleet/*: parse, call the FleetService, map results to status codes. Every path demands a
 * verified client certificate whatever clientAuthRequired says; writes demand a listed subject.
 * Bodies are limited as `PUT /logspec`'s are: the server's `httpLimits.maxBodyBytes` (413 past it).
 */
export function fleetRouter(
  fleet: FleetService,
  logger: { warn(message: string, fields?: Record<string, unknown>): void },
  limits: { maxBodyBytes: number },
): Router {
  const { maxBodyBytes } = limits;
  const router = Router({ caseSensitive: true, strict: true });

  router.use((req, res, next) => {
    const identity = verifiedClientIdentity(req);
    if (identity === undefined) {
      logger.warn('fleet: client certificate required', { method: req.method, path: req.originalUrl, remoteAddress: req.socket.remoteAddress });
      sendError(res, 401, `a client certificate issued by a trusted client CA is required for /fleet${req.path}`);
      return;
    }
    res.locals.subject = identity.subject;
    res.locals.identity = identity;
    next();
  });

  const writer: RequestHandler = (req, res, next) => {
    const identity = res.locals.identity as ClientIdentity;
    if (fleet.mayWrite(identity)) {
      next();
      return;
    }
    const { subject, issuer } = identity;
    logger.warn('fleet: write refused', { method: req.method, path: req.originalUrl, subject, issuer, fingerprint256: identity.fingerprint256 });
    sendError(res, 403, `client "${subject}" (issued by "${issuer}") may not change the fleet; writers are listed in ${fleet.config.source} (writers)`);
  };

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

  /** Sends `answer` unless the request was answered meanwhile (the response limit, a stop). */
  const send = (res: Response, status: number, answer: unknown): void => {
    if (!res.headersSent) sendJson(res, status, answer);
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

  /** A write the domain refused before touching any node: 400 (the request), 503 (discovery not listed yet), 500 (put-backs not persisted). */
  const answerWriteError = (res: Response, error: unknown): void => {
    if (res.headersSent) return;
    if (error instanceof LogSpecError || error instanceof FleetRequestError) sendError(res, 400, error.message);
    else if (error instanceof FleetNotReadyError) {
      res.setHeader('Retry-After', '1');
      sendError(res, 503, error.message);
    } else if (error instanceof PutBackPersistError) sendError(res, 500, `${error.message}; no node was changed`);
    else throw error;
  };

  route('/logspec', {
    get: async (_req, res) => send(res, 200, { nodes: await fleet.readLogSpecs() }),
    put: async (req, res) => {
      const text = await readBodyOrAnswer(req, res, maxBodyBytes);
      if (text === null) return;
      const parsed = parseSetRequest(text);
      if (!parsed.ok) {
        sendError(res, 400, parsed.problem);
        return;
      }
      try {
        const answer = await fleet.setLogSpec(parsed.value, res.locals.subject as string);
        send(res, answer.complete ? 200 : 502, answer);
      } catch (error) {
        answerWriteError(res, error);
      }
    },
    delete: async (req, res) => {
      const text = await readBodyOrAnswer(req, res, maxBodyBytes);
      if (text === null) return;
      const parsed = parseRestoreRequest(text);
      if (!parsed.ok) {
        sendError(res, 400, parsed.problem);
        return;
      }
      try {
        const nodes = await fleet.restoreLogSpecs(parsed.value, res.locals.subject as string);
        send(res, nodes.every((node) => node.result !== 'failed') ? 200 : 502, { nodes });
      } catch (error) {
        answerWriteError(res, error);
      }
    },
  });

  return router;
}
