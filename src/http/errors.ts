import { STATUS_CODES, type ServerResponse } from 'node:http';
import { jsonContentType, sendJson } from './json';
import { newRequestId, setRequestIdHeader } from './request-ids';

/** Every error response of the operations API: `{"error": "<message>"}`. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}

/** An error answer written without express (below the router), same shape; the connection closes after it. */
export function sendBareError(res: ServerResponse, status: number, message: string, requestId?: string): void {
  const body = JSON.stringify({ error: message });
  res.statusCode = status;
  res.setHeader('Content-Type', jsonContentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Connection', 'close');
  setRequestIdHeader(res, requestId);
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
