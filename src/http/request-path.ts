import type { IncomingMessage } from 'node:http';
import parseurl from 'parseurl';

/**
 * The path of a request's target, without its query: what express's `req.path` reads, through
 * the same parser (parseurl, which caches its result on the request for the next call).
 * For code on plain node:http requests, which express's request prototype does not reach.
 */
export function requestPath(req: IncomingMessage): string {
  return parseurl(req)?.pathname ?? '/';
}
