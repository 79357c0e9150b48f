import type { ServerResponse } from 'node:http';

/**
 * The media type of every JSON answer, charset included: express would otherwise look the
 * charset of `application/json` up in mime-db, which the command's bundle then evaluates (some
 * 2,500 types, about 1 ms of the start; issue 20). The header is the same either way.
 */
export const jsonContentType = 'application/json; charset=utf-8';

/**
 * Answers `status` with `body` as JSON: the bytes and headers of express's res.json (with the
 * charset named), written with Node's own calls: res.json's path through res.send (its type
 * checks, ETag and freshness logic, switched off or without effect here) is server time on every
 * keep-alive /healthz (issue 32; docs/performance.md). The headers go to `writeHead` as a list
 * (written as they are when no header was set before; over those set before, as `setHeader`
 * would); HEAD gets the headers only (Node omits the body).
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, ['Content-Type', jsonContentType, 'Content-Length', Buffer.byteLength(text)]);
  res.end(text);
}
