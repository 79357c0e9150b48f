import { randomFillSync } from 'node:crypto';
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';

/**
 * Request ids: the `X-Request-Id` every answer carries (the client's own when it is sane, else a
 * new random UUID), and how it gets into the answer's head.
 *
 * New ids are random UUIDs (version 4, RFC 9562), from the same source as Node's
 * `crypto.randomUUID()` and batched as it is (128 at a time), but written out in one go. Node's
 * `randomUUID()` builds each id's text from twenty string concatenations, which the answer's
 * head then flattens: about 590 bytes of young generation per request. Here a batch's random
 * bytes are formatted as ASCII into one buffer, and each id is one 36-byte string read out of it:
 * about 0.97x the command's CPU per keep-alive `/healthz` and 0.56 KB less garbage per request
 * (docs/performance.md). Each id is a string of its own, so keeping one keeps nothing else alive.
 *
 * The id goes into the head as the head is written (RequestIdResponse), not with `setHeader` as
 * the request starts: a response with no header set before `writeHead(status, [headers])` has its
 * head written from that list at once, where any header set before makes Node keep a table of
 * them, each name lower-cased and validated on the way in and the table walked on the way out
 * (0.94x to 0.96x the CPU per request, paired; docs/performance.md).
 */

/** Ids formatted at once (Node's own UUID cache holds as many). */
const batchSize = 128;
/** Bytes of one id's text: 32 hex digits and four dashes. */
const idLength = 36;

const random = Buffer.allocUnsafeSlow(16 * batchSize);
const text = Buffer.allocUnsafeSlow(idLength * batchSize);
/** The ASCII codes of the hex digits, lower case (as randomUUID writes them). */
const hexDigits = Buffer.from('0123456789abcdef', 'latin1');
const dash = 0x2d;
/** The next id of the batch to hand out; `batchSize` means the batch is used up. */
let next = batchSize;

/** Draws the next batch's random bytes and writes out its ids (xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx). */
function refill(): void {
  randomFillSync(random);
  let at = 0;
  for (let id = 0; id < batchSize; id += 1) {
    const first = id * 16;
    for (let index = 0; index < 16; index += 1) {
      let byte = random[first + index] as number;
      // The version (4) in the high nibble of byte 6, the variant (binary 10) in the top bits of byte 8.
      if (index === 6) byte = (byte & 0x0f) | 0x40;
      else if (index === 8) byte = (byte & 0x3f) | 0x80;
      if (index === 4 || index === 6 || index === 8 || index === 10) text[at++] = dash;
      text[at++] = hexDigits[byte >> 4] as number;
      text[at++] = hexDigits[byte & 0x0f] as number;
    }
  }
  next = 0;
}

/** A new random UUID (version 4) in its usual text form, lower case. */
export function newRequestId(): string {
  if (next === batchSize) refill();
  const start = idLength * next;
  next += 1;
  return text.toString('latin1', start, start + idLength);
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
  (res as Pending)[pendingId] = undefined;
  if (!res.hasHeader('X-Request-Id')) res.setHeader('X-Request-Id', pending ?? otherwise ?? newRequestId());
}
