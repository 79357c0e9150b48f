import type { IncomingMessage } from 'node:http';
import parseurl from 'parseurl';

/**
 * A target that is its own path for parseurl: it starts with `/` and has none of the characters
 * that make parseurl split off a query (`?`) or hand the target to url.parse (`#`, tab, line feed,
 * form feed, carriage return, space, U+00A0, U+FEFF).
 */
const wholePath = /^\/[^?#\t\n\f\r \u00a0\ufeff]*$/;

/**
 * The path of a request's target, without its query: what express's `req.path` reads, through
 * the same parser (parseurl, which caches its result on the request for the next call).
 * For code on plain node:http requests, which express's request prototype does not reach.
 */
export function requestPath(req: IncomingMessage): string {
  const target = req.url;
  // What parseurl gives back whole, without making its URL object (every request asks).
  if (target !== undefined && wholePath.test(target)) return target;
  return parseurl(req)?.pathname ?? '/';
}
