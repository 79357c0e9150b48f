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
import { refuseWithoutClientCertificate } from './middleware/client-auth';
import { requestId, setRequestIdHeader } from './request-ids';
import type { HttpLimits } from './limits';
import { requestPath } from './request-path';

export interface AppOptions {
  tlsEnabled: boolean;
  logger: Logger;
  limits: Pick<HttpLimits, 'maxBodyBytes'>;
  /** Routers of other concerns (fleet mode's /fleet), each guarding its own paths. */
  mounts?: ReadonlyArray<{ path: string; handler: RequestHandler }>;
}

/** A handler of the operations API: answers, or returns a promise that settles once it has. */
type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

interface Route {
  path: string;
  protected: boolean;
  get: Handler;
  put?: Handler;
}

/** The methods of a route, as `Allow` and the 405 message both list them. */
function allowed(route: Route): string {
  return route.put ? 'GET, HEAD, PUT, OPTIONS' : 'GET, HEAD, OPTIONS';
}

type Next = (error?: unknown) => void;

/** What `req.route` holds once a route matched: express's routers set it too, and the requests metric reads it (routeOf). */
type Routed = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };

/**
 * The operations API: its four paths, the client-certificate rule, and the error shapes; the
 * mounts of other concerns (fleet mode's /fleet, companion mode's /logspec and /companion) on
 * express. The operations paths are literal and few, so they are matched as Fabric's own server
 * matches them (Go's ServeMux: the exact path, case-sensitive, no trailing-slash variant), by a
 * lookup rather than a router's walk over its layers: express's router was a tenth of the
 * command's CPU per request on a keep-alive /healthz (issue 32; docs/performance.md). Their
 * handlers take node:http's request and response; no express application sits in front of them,
 * as one re-parents every request and response onto its own prototypes (two
 * `Object.setPrototypeOf` a request). The mounts, written for express, run inside an express
 * application of their own at their path, ahead of the operations paths.
 */
export function createOperationsApp(domain: OperationsDomain, options: AppOptions): RequestListener {
  const routes: Route[] = [
    { path: '/healthz', protected: false, get: getHealth(domain) },
    { path: '/logspec', protected: true, get: getLogSpec(domain), put: putLogSpec(domain, options.limits.maxBodyBytes) },
    { path: '/version', protected: false, get: getVersion(domain) },
  ];
  if (domain.scrape) routes.push({ path: '/metrics', protected: true, get: getMetrics(domain.scrape) });

  const failed = errorHandler(options.logger);
  const fail = (err: unknown, req: IncomingMessage, res: ServerResponse): void => failed(err, req, res, routerExit);
  const refused = refuseWithoutClientCertificate(options.tlsEnabled, options.logger);
  const byPath = new Map<string, Handler>(routes.map((route) => [route.path, methodsOf(route, refused)]));

  /** The operations paths: the route's methods, else 404; a handler's error is a 500 (errorHandler). */
  const operations = (req: IncomingMessage, res: ServerResponse): void => {
    const handler = byPath.get(requestPath(req));
    if (handler === undefined) {
      sendError(res, 404, `no such resource: ${clip(requestPath(req), 200)}`);
      return;
    }
    try {
      const answering = handler(req, res);
      if (answering !== undefined) answering.catch((err: unknown) => fail(err, req, res));
    } catch (err) {
      fail(err, req, res);
    }
  };

  const mounts = options.mounts ?? [];
  let serve: RequestListener = operations;
  if (mounts.length > 0) {
    // Other concerns' paths before the operations API's own: companion mode answers /logspec itself (the node's).
    const mounted = Router({ caseSensitive: true, strict: true });
    for (const mount of mounts) mounted.use(mount.path, expressAppFor(mount.handler));
    mounted.use(operations);
    mounted.use(failed);
    // express's types give the router express's request; the router itself works on node:http's.
    const handle = mounted as unknown as (req: IncomingMessage, res: ServerResponse, next: Next) => void;
    serve = (req, res) => handle(req, res, routerExit);
  }
  // Every request gets its id first (written into the answer's head, request-ids.ts). Its count in
  // the requests metric and its response-time limit are the server's (request-order.ts), which
  // sees every answer end.
  return (req, res) => {
    requestId(req, res);
    serve(req, res);
  };
}

/**
 * A route's methods, as express's `route.get/put/options/all` gave them: GET (and HEAD, which Node
 * answers without the body), PUT where the route has one, OPTIONS (204 with `Allow`, open to
 * all), any other method 405 with `Allow`; a protected route's GET, PUT and 405 behind the
 * client-certificate rule. A matched request names the route for the requests metric.
 */
function methodsOf(route: Route, refused: (req: IncomingMessage, res: ServerResponse) => boolean): Handler {
  const named = { path: route.path };
  const allow = allowed(route);
  const answer = (req: IncomingMessage, res: ServerResponse): void | Promise<void> => {
    switch (req.method) {
      case 'GET':
      case 'HEAD':
        return route.get(req, res);
      case 'PUT':
        if (route.put) return route.put(req, res);
        break;
      default:
        break;
    }
    res.setHeader('Allow', allow);
    sendError(res, 405, `method ${req.method} not allowed on ${route.path}; allowed: ${allow}`);
    return undefined;
  };
  return (req, res) => {
    (req as Routed).route = named;
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', allow);
      res.statusCode = 204;
      res.end();
      return undefined;
    }
    if (route.protected && refused(req, res)) return undefined;
    return answer(req, res);
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
  // express answers through its own response prototype, past RequestIdResponse's writeHead: the
  // request id is set as the request enters, and the mount's handlers see it as they did.
  app.use((_req, res, next) => {
    setRequestIdHeader(res);
    next();
  });
  app.use(handler);
  return app;
}

/** A request's matched route as the requests metric names it: `unmatched`, `/healthz`, `/fleet/nodes/:name` ... */
export function routeOf(req: IncomingMessage): string {
  const routed = req as Routed;
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
