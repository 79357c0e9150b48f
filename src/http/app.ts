import { clip } from '../text';
import express, { type ErrorRequestHandler, type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from '../logging/types';
import type { OperationsDomain } from './domain';
import { sendError } from './errors';
import { getHealth } from './handlers/health';
import { getLogSpec, putLogSpec } from './handlers/logspec';
import { getMetrics } from './handlers/metrics';
import { getVersion } from './handlers/version';
import { requireClientCertificate } from './middleware/client-auth';
import { requestId } from './middleware/request-id';
import { seconds, type HttpLimits } from './limits';

export interface AppOptions {
  tlsEnabled: boolean;
  logger: Logger;
  limits: Pick<HttpLimits, 'responseTimeoutMs' | 'maxBodyBytes'>;
  /** Routers of other concerns (fleet mode's /fleet), each guarding its own paths. */
  mounts?: ReadonlyArray<{ path: string; handler: RequestHandler }>;
}

interface Route {
  path: string;
  protected: boolean;
  get: RequestHandler;
  put?: RequestHandler;
}

/** The methods of a route, as `Allow` and the 405 message both list them. */
function allowed(route: Route): string {
  return route.put ? 'GET, HEAD, PUT, OPTIONS' : 'GET, HEAD, OPTIONS';
}

/** The operations API: routes, the client-certificate rule, and the error shapes. */
export function createOperationsApp(domain: OperationsDomain, options: AppOptions): Express {
  const app = express();
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('x-powered-by', false);
  app.set('etag', false);

  const routes: Route[] = [
    // Probes first: the layers are matched in order, and /healthz is the most asked path.
    { path: '/healthz', protected: false, get: getHealth(domain) },
    { path: '/logspec', protected: true, get: getLogSpec(domain), put: putLogSpec(domain, options.limits.maxBodyBytes) },
    { path: '/version', protected: false, get: getVersion(domain) },
  ];
  if (domain.scrape) routes.push({ path: '/metrics', protected: true, get: getMetrics(domain.scrape) });

  // What every request gets, in one layer (each layer is a match per request): its id, its count
  // in the request metric once answered, and the response time limit.
  const count = countResponses(domain);
  const limit = limitResponseTime(options.logger, options.limits.responseTimeoutMs);
  app.use((req, res, next) => {
    requestId(req, res, () => count(req, res, () => limit(req, res, next)));
  });

  // Other concerns' paths before the operations API's own: companion mode answers /logspec itself (the node's).
  for (const mount of options.mounts ?? []) app.use(mount.path, mount.handler);

  const clientCertificate = requireClientCertificate(options.tlsEnabled, options.logger);

  // One express route per path, its methods in order, then any other method (405). A route's
  // all() is one layer; app.all() would add one per HTTP method (34), at every start (issue 20).
  for (const route of routes) {
    const guard: RequestHandler[] = route.protected ? [clientCertificate] : [];
    const methods = app.route(route.path);
    methods.get(...guard, route.get);
    if (route.put) methods.put(...guard, route.put);
    methods.options((_req, res) => {
      res.setHeader('Allow', allowed(route));
      res.status(204).end();
    });
    methods.all(...guard, (req, res) => {
      res.setHeader('Allow', allowed(route));
      sendError(res, 405, `method ${req.method} not allowed on ${route.path}; allowed: ${allowed(route)}`);
    });
  }

  app.use((req: Request, res: Response) => {
    sendError(res, 404, `no such resource: ${clip(req.path, 200)}`);
  });
  app.use(errorHandler(options.logger));
  return app;
}

function countResponses(domain: OperationsDomain): RequestHandler {
  return (req, res, next) => {
    res.on('finish', () => {
      const path = (req.route as { path?: string } | undefined)?.path;
      // A mounted router's route path is relative to its mount point (/fleet + /healthz).
      const route = path === undefined ? 'unmatched' : `${req.baseUrl}${path}`;
      domain.observeRequest(route, res.statusCode);
    });
    next();
  };
}

function limitResponseTime(logger: Logger, responseTimeoutMs: number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const timer = setTimeout(() => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      logger.warn('response took too long; giving up', { method: req.method, path: req.path, limitMs: responseTimeoutMs });
      sendError(res, 503, `no response within ${seconds(responseTimeoutMs)}`);
    }, responseTimeoutMs);
    timer.unref();
    res.on('close', () => clearTimeout(timer));
    next();
  };
}

function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    logger.error('request failed', {
      method: req.method,
      path: req.path,
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
    sendError(res, 500, 'internal error; see the server log');
  };
}
