import { randomFillSync } from 'node:crypto';

/**
 * New request ids: random UUIDs (version 4, RFC 9562), from the same source as Node's
 * `crypto.randomUUID()` and batched as it is (128 at a time), but written out in one go.
 *
 * Node's `randomUUID()` builds each id's text from twenty string concatenations, which the
 * response's head then flattens. Every answer without a client's own `X-Request-Id` makes one
 * (about 590 bytes of young generation per request, docs/performance.md). Here a batch's random
 * bytes are formatted as ASCII into one buffer, and each id is one 36-byte string read out of it:
 * 0.96x the command's CPU per keep-alive `/healthz` (paired, docs/performance.md). Each id is a
 * string of its own, so keeping one keeps nothing else alive.
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
