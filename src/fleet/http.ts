import { Router, type Request, type RequestHandler, type Response } from 'express';
import { LogSpecError } from '../errors';
import { readTextBody } from '../http/body';
import { sendError } from '../http/errors';
import { maxBodyBytes } from '../http/limits';
import { verifiedClientSubject } from '../http/middleware/client-auth';
import { FleetRequestError } from './logspec';
import { PutBackPersistError } from './putback-store';
import { parseRestoreRequest, parseSetRequest } from './request';
import type { FleetService } from './service';

/**
 * /fleet/*: parse, call the FleetService, map results to status codes. Every path demands a
 * verified client certificate whatever clientAuthRequired says; writes demand a listed subject.
 */
export function fleetRouter(fleet: FleetService, logger: { warn(message: string, fields?: Record<string, unknown>): void }): Router {
  const router = Router({ caseSensitive: true, strict: true });

  router.use((req, res, next) => {
    const subject = verifiedClientSubject(req);
    if (subject === undefined) {
      logger.warn('fleet: client certificate required', { method: req.method, path: req.originalUrl, remoteAddress: req.socket.remoteAddress });
      sendError(res, 401, `a client certificate issued by a trusted client CA is required for /fleet${req.path}`);
      return;
    }
    res.locals.subject = subject;
    next();
  });

  const writer: RequestHandler = (req, res, next) => {
    const subject = res.locals.subject as string;
    if (fleet.mayWrite(subject)) {
      next();
      return;
    }
    logger.warn('fleet: write refused', { method: req.method, path: req.originalUrl, subject });
    sendError(res, 403, `client "${subject}" may not change the fleet; writers are listed in ${fleet.config.source} (writers)`);
  };

  const body = async (req: Request, res: Response): Promise<string | null> => {
    const read = await readTextBody(req, res, maxBodyBytes);
    switch (read.kind) {
      case 'text':
        return read.text;
      case 'tooLarge':
        sendError(res, 413, `request body is larger than ${maxBodyBytes} bytes`);
        return null;
      case 'encoded':
        sendError(res, 415, `Content-Encoding ${read.contentEncoding} is not supported`);
        return null;
      case 'notUtf8':
        sendError(res, 400, 'request body is not UTF-8');
        return null;
      case 'aborted':
        return null;
    }
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

  route('/healthz', {
    get: (_req, res, next) => {
      fleet.health().then((report) => res.status(report.status === 'OK' ? 200 : 503).json(report), next);
    },
  });

  route('/version', {
    get: (_req, res, next) => {
      fleet.versions().then((report) => res.status(200).json(report), next);
    },
  });

  route('/logspec', {
    get: (_req, res, next) => {
      fleet.readLogSpecs().then((nodes) => res.status(200).json({ nodes }), next);
    },
    put: (req, res, next) => {
      void (async () => {
        const text = await body(req, res);
        if (text === null) return;
        const parsed = parseSetRequest(text);
        if (!parsed.ok) {
          sendError(res, 400, parsed.problem);
          return;
        }
        try {
          const answer = await fleet.setLogSpec(parsed.value, res.locals.subject as string);
          res.status(answer.complete ? 200 : 502).json(answer);
        } catch (error) {
          if (error instanceof LogSpecError || error instanceof FleetRequestError) sendError(res, 400, error.message);
          else if (error instanceof PutBackPersistError) sendError(res, 500, `${error.message}; no node was changed`);
          else throw error;
        }
      })().catch(next);
    },
    delete: (req, res, next) => {
      void (async () => {
        const text = await body(req, res);
        if (text === null) return;
        const parsed = parseRestoreRequest(text);
        if (!parsed.ok) {
          sendError(res, 400, parsed.problem);
          return;
        }
        const nodes = await fleet.restoreLogSpecs(parsed.value, res.locals.subject as string);
        res.status(nodes.every((node) => node.result !== 'failed') ? 200 : 502).json({ nodes });
      })().catch(next);
    },
  });

  return router;
}
