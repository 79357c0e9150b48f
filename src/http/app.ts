import { messageOf } from '../errors';
import { clip } from '../text';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { Router, type RequestHandler } from 'express';
import type { Logger } from '../logging/types';
import type { OperationsDomain } from './domain';
import { sendError } from './errors';
import { getHealth } from './handlers/health';
import { getLogSpec, putLogSpec } from './handlers/logspec';
import { getMetrics } from './handlers/metrics';
import { getVersion } from './handlers/version';
import { requireClientCertificate } from './middleware/client-auth';
import { requestId } from './middleware/request-id';
import type { HttpLimits } from './limits';
import { requestPath } from './request-path';

export interface AppOptions {
  tlsEnabled: boolean;
  logger: Logger;
  limits: Pick<HttpLimits, 'maxBodyBytes'>;
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

type Next = (error?: unknown) => void;

/**
 * The operations API: routes, the client-certificate rule, and the error shapes, on express's
 * router. Its handlers take node:http's request and response: no express application sits in
 * front of them, because an application re-parents every request and response onto its own
 * prototypes (two `Object.setPrototypeOf` a request), which was a fifth of the server's time on a
 * keep-alive /healthz and made V8 re-optimise Node's own stream code (issue 32;
 * docs/performance.md). The mounts of other concerns, written for express, run inside an express
 * application of their own, as before.
 */
export function createOperationsApp(domain: OperationsDomain, options: AppOptions): RequestListener {
  const app = Router({ caseSensitive: true, strict: true });

  const routes: Route[] = [
    // Probes first: the layers are matched in order, and /healthz is the most asked path.
    { path: '/healthz', protected: false, get: getHealth(domain) },
    { path: '/logspec', protected: true, get: getLogSpec(domain), put: putLogSpec(domain, options.limits.maxBodyBytes) },
    { path: '/version', protected: false, get: getVersion(domain) },
  ];
  if (domain.scrape) routes.push({ path: '/metrics', protected: true, get: getMetrics(domain.scrape) });

  // Other concerns' paths before the operations API's own: companion mode answers /logspec itself (the node's).
  for (const mount of options.mounts ?? []) app.use(mount.path, expressAppFor(mount.handler));

  const clientCertificate = requireClientCertificate(options.tlsEnabled, options.logger);

  // One express route per path, its methods in order, then any other method (405). A route's
  // all() is one layer; app.all() would add one per HTTP method (34), at every start (issue 20).
  for (const route of routes) {
    const guard: RequestHandler[] = route.protected ? [clientCertificate] : [];
    const methods = app.route(route.path);
    methods.get(...guard, route.get);
    if (route.put) methods.put(...guard, route.put);
    methods.options((_req: IncomingMessage, res: ServerResponse) => {
      res.setHeader('Allow', allowed(route));
      res.statusCode = 204;
      res.end();
    });
    methods.all(...guard, (req: IncomingMessage, res: ServerResponse) => {
      res.setHeader('Allow', allowed(route));
      sendError(res, 405, `method ${req.method} not allowed on ${route.path}; allowed: ${allowed(route)}`);
    });
  }

  app.use((req: IncomingMessage, res: ServerResponse) => {
    sendError(res, 404, `no such resource: ${clip(requestPath(req), 200)}`);
  });
  app.use(errorHandler(options.logger));
  // express's types give the router express's request; the router itself works on node:http's.
  const handle = app as unknown as (req: IncomingMessage, res: ServerResponse, next: Next) => void;
  // Every request gets its id before the router (not as a layer of it: each layer is a match per
  // request). Its count in the requests metric and its response-time limit are the server's
  // (request-order.ts), which sees every answer end.
  return (req, res) => {
    requestId(req, res);
    handle(req, res, routerExit);
  };
}

/**
 * A mount's handler inside an express application of its own, at the mount's path: its router
 * gets express's request and response (req.path, res.status, res.locals, ...), with the settings
 * the operations API had when it was an express application itself, and only the requests under
 * its path pay for that. A request the mount does not answer goes on to the routes.
 */
function expressAppFor(handler: RequestHandler): express.Express {
  const app = express();
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('x-powered-by', false);
  app.set('etag', false);
  app.use(handler);
  return app;
}

/** A request's matched route as the requests metric names it: `unmatched`, `/healthz`, `/fleet/nodes/:name` ... */
export function routeOf(req: IncomingMessage): string {
  const routed = req as IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };
  const path = routed.route?.path;
  if (typeof path !== 'string') return 'unmatched';
  // A mounted router's route path is relative to its mount point (/fleet + /healthz). Without one,
  // the route's own string: the metric's lookups by it are then of a string V8 has hashed before.
  return routed.baseUrl ? routed.baseUrl + path : path;
}

/**
 * A handler's error: a 500, or once the answer has begun (it cannot be finished) the connection
 * closed, as express's final handler closed it. Logged either way.
 */
function errorHandler(logger: Logger): (err: unknown, req: IncomingMessage, res: ServerResponse, next: Next) => void {
  // Four parameters: the router takes a handler of four for an error handler.
  return (err, req, res, _next) => {
    if (res.headersSent) {
      logger.error('request failed after its answer began', { method: req.method, path: requestPath(req), error: errorText(err) });
      res.destroy();
      return;
    }
    logger.error('request failed', {
      method: req.method,
      path: requestPath(req),
      error: errorText(err),
    });
    sendError(res, 500, 'internal error; see the server log');
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : messageOf(err);
}

/** What the router calls when nothing is left: never with a request unanswered, as the last layers answer every one (404, the error handler). */
function routerExit(): void {}
