import { STATUS_CODES, type ServerResponse } from 'node:http';
import { jsonContentType, sendJson } from './json';
import { newRequestId } from './request-ids';

/** Every error response of the operations API: `{"error": "<message>"}`. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}

const acceptableRequestId = /^[\x21-\x7e]{1,200}$/;

/** The client's X-Request-Id when it is sane, else a new UUID v4. */
export function requestIdFor(given: string | string[] | undefined): string {
  return typeof given === 'string' && acceptableRequestId.test(given) ? given : newRequestId();
}

/** An error answer written without express (below the router), same shape; the connection closes after it. */
export function sendBareError(res: ServerResponse, status: number, message: string, requestId?: string): void {
  const body = JSON.stringify({ error: message });
  res.statusCode = status;
  res.setHeader('Content-Type', jsonContentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Connection', 'close');
  if (!res.hasHeader('X-Request-Id')) res.setHeader('X-Request-Id', requestId ?? newRequestId());
  res.end(body);
}

/** A whole HTTP/1.1 error response as bytes, for a socket the HTTP parser gave up on. */
export function rawErrorResponse(status: number, message: string, requestId: string = newRequestId()): string {
  const body = JSON.stringify({ error: message });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    `X-Request-Id: ${requestId}`,
    '',
    body,
  ].join('\r\n');
}
