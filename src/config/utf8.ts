import { isUtf8 } from 'node:buffer';

/** Where a byte sequence stops being UTF-8: the byte offset, and the line and column (1-based, in characters) of that byte. */
export interface Utf8Position {
  offset: number;
  line: number;
  column: number;
}

/** Length of the sequence a lead byte starts, and the range its first continuation byte must be in (RFC 3629, table 3-7 of Unicode). */
function sequence(lead: number): { length: number; min: number; max: number } | null {
  if (lead <= 0x7f) return { length: 1, min: 0, max: 0 };
  if (lead >= 0xc2 && lead <= 0xdf) return { length: 2, min: 0x80, max: 0xbf };
  if (lead === 0xe0) return { length: 3, min: 0xa0, max: 0xbf };
  if (lead === 0xed) return { length: 3, min: 0x80, max: 0x9f };
  if (lead >= 0xe1 && lead <= 0xef) return { length: 3, min: 0x80, max: 0xbf };
  if (lead === 0xf0) return { length: 4, min: 0x90, max: 0xbf };
  if (lead === 0xf4) return { length: 4, min: 0x80, max: 0x8f };
  if (lead >= 0xf1 && lead <= 0xf3) return { length: 4, min: 0x80, max: 0xbf };
  return null;
}

/** The first byte that is not part of a well-formed UTF-8 sequence, or null (isUtf8 answers the common case without a scan in JavaScript). */
export function firstInvalidUtf8(bytes: Buffer): Utf8Position | null {
  if (isUtf8(bytes)) return null;
  let offset = 0;
  let lineStart = 0;
  let line = 1;
  while (offset < bytes.length) {
    const lead = bytes[offset] ?? 0;
    const expected = sequence(lead);
    let valid = expected !== null && offset + expected.length <= bytes.length;
    if (valid && expected !== null && expected.length > 1) {
      const first = bytes[offset + 1] ?? 0;
      valid = first >= expected.min && first <= expected.max;
      for (let index = 2; valid && index < expected.length; index += 1) {
        const next = bytes[offset + index] ?? 0;
        valid = next >= 0x80 && next <= 0xbf;
      }
    }
    if (!valid || expected === null) {
      const column = [...bytes.subarray(lineStart, offset).toString('utf8')].length + 1;
      return { offset, line, column };
    }
    if (lead === 0x0a) {
      line += 1;
      lineStart = offset + 1;
    }
    offset += expected.length;
  }
  return null;
}
