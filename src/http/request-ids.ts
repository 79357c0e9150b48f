import { randomFillSync } from 'node:crypto';
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';

/**
 * Request ids: the `X-Request-Id` every answer carries (the client's own when it is sane, else a
 * new random UUID), and how it gets into the answer's head.
 *
 * New ids are random UUIDs (version 4, RFC 9562), from the same source as Node's
 * `crypto.randomUUID()` and batched as it is (the random bytes of 128 at a time). Node's
 * `randomUUID()` builds each id's text from twenty string concatenations, which the answer's
 * head then flattens: about 590 bytes of young generation per request. Here each id is written
 * as ASCII into a buffer and read out as one 36-byte string: about 0.97x the command's CPU per
 * keep-alive `/healthz` and 0.56 KB less garbage per request (docs/performance.md).
 *
 * The id goes into the head as the head is written (RequestIdResponse), not with `setHeader` as
 * the request starts: a response with no header set before `writeHead(status, [headers])` has its
 * head written from that list at once, where any header set before makes Node keep a table of
 * them, each name lower-cased and validated on the way in and the table walked on the way out
 * (0.92x to 0.94x the CPU per request, paired; docs/performance.md).
 */

/** Ids drawn at once from the random source (Node's own UUID cache holds as many). */
const batchSize = 128;

const random = Buffer.allocUnsafeSlow(16 * batchSize);
/** The next id's random bytes in `random`; `batchSize` means the batch is used up. */
let next = batchSize;
/** The ASCII codes of the hex digits, lower case (as randomUUID writes them). */
const hexDigits = Buffer.from('0123456789abcdef', 'latin1');
/** Where an id is written out: its four dashes stay, the digits are written over at every id. */
const idText = Buffer.from('xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx', 'latin1');

/**
 * A new random UUID (version 4) in its usual text form, lower case. Each id is written out when
 * it is asked for: a loop over a whole batch at once would be hot at the first request already,
 * and V8 would compile it (on-stack replacement, Turbofan) before the server had answered a
 * second request, paging in the optimizing compiler: about 5 MB more idle RSS (measured).
 */
export function newRequestId(): string {
  if (next === batchSize) {
    randomFillSync(random);
    next = 0;
  }
  const first = 16 * next;
  next += 1;
  let at = 0;
  for (let index = 0; index < 16; index += 1) {
    let byte = random[first + index] as number;
    // The version (4) in the high nibble of byte 6, the variant (binary 10) in the top bits of byte 8.
    if (index === 6) byte = (byte & 0x0f) | 0x40;
    else if (index === 8) byte = (byte & 0x3f) | 0x80;
    // Past the dash before bytes 4, 6, 8 and 10.
    if (index === 4 || index === 6 || index === 8 || index === 10) at += 1;
    idText[at] = hexDigits[byte >> 4] as number;
    idText[at + 1] = hexDigits[byte & 0x0f] as number;
    at += 2;
  }
  return idText.toString('latin1');
}

const acceptableRequestId = /^[\x21-\x7e]{1,200}$/;

/** The client's X-Request-Id when it is sane, else a new UUID v4. */
export function requestIdFor(given: string | string[] | undefined): string {
  return typeof given === 'string' && acceptableRequestId.test(given) ? given : newRequestId();
}

/** The response's request id, until it is in the head (a symbol: no other code's property of a response). */
const pendingId = Symbol('fabric-ops request id');
type Pending = ServerResponse & { [pendingId]?: string | undefined };

/**
 * The server's responses (`http.createServer({ ServerResponse })`): the request id given them
 * (requestId, as the request starts) goes into the head as the head is written, first in a
 * header list given to `writeHead` (Node then writes that list as it is), else by `setHeader`. A
 * header `X-Request-Id` set by the handler itself is left as it is. Every head goes through
 * `writeHead`: Node's own `end()`, `write()` and `flushHeaders()` call it when no head was written.
 */
export class RequestIdResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  [pendingId]: string | undefined = undefined;

  override writeHead(
    statusCode: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const id = this[pendingId];
    if (id !== undefined) {
      this[pendingId] = undefined;
      if (!this.hasHeader('X-Request-Id')) {
        if (Array.isArray(reasonOrHeaders) && headers === undefined) return super.writeHead(statusCode, ['X-Request-Id', id, ...reasonOrHeaders]);
        this.setHeader('X-Request-Id', id);
      }
    }
    return typeof reasonOrHeaders === 'string' ? super.writeHead(statusCode, reasonOrHeaders, headers) : super.writeHead(statusCode, reasonOrHeaders);
  }
}

/** Gives the answer to `req` its request id: in its head when it is written (RequestIdResponse), else set now. */
export function requestId(req: IncomingMessage, res: ServerResponse): void {
  const id = requestIdFor(req.headers['x-request-id']);
  if (res instanceof RequestIdResponse) (res as Pending)[pendingId] = id;
  else res.setHeader('X-Request-Id', id);
}

/**
 * Sets the answer's `X-Request-Id` header now, unless it has one: its request's id, else `otherwise`,
 * else a new one. For code that writes the head other than through RequestIdResponse's
 * `writeHead`: an express application, which answers through its own response prototype.
 */
export function setRequestIdHeader(res: ServerResponse, otherwise?: string): void {
  const pending = (res as Pending)[pendingId];
  if (pending !== undefined) (res as Pending)[pendingId] = undefined;
  if (!res.hasHeader('X-Request-Id')) res.setHeader('X-Request-Id', pending ?? otherwise ?? newRequestId());
}
