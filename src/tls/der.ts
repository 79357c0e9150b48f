/**
 * The DER reader of the project (src/tls/distinguished-name.ts reads names with it), and with it
 * a certificate's subject Name, whose encoded length is what a TLS
 * server sends per CA in its CertificateRequest (Node's X509Certificate gives the subject as
 * text only). RFC 5280 4.1: Certificate ::= SEQUENCE { tbsCertificate, ... }; TBSCertificate ::=
 * SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer, validity, subject, ... }.
 */

/** One DER element: where its tag, contents and end are. */
export interface Element {
  tag: number;
  /** Offset of the contents. */
  start: number;
  /** Offset just past the element. */
  end: number;
  /** Offset of the tag. */
  offset: number;
}

/** The element at `offset`, which must end by `limit` (its parent's end); single-byte tags, lengths up to 4 bytes. */
export function elementAt(der: Uint8Array, offset: number, limit: number): Element {
  const tag = der[offset];
  const first = der[offset + 1];
  if (tag === undefined || first === undefined || offset + 2 > limit) throw new RangeError(`DER: truncated element at ${offset}`);
  if ((tag & 0x1f) === 0x1f) throw new RangeError(`DER: multi-byte tag at ${offset}`);
  let start = offset + 2;
  let length = first;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4) throw new RangeError(`DER: unsupported length at ${offset}`);
    length = 0;
    for (let index = 0; index < count; index += 1) {
      const byte = der[start + index];
      if (byte === undefined) throw new RangeError(`DER: truncated length at ${offset}`);
      length = length * 256 + byte;
    }
    start += count;
  }
  const end = start + length;
  if (end > limit) throw new RangeError(`DER: element at ${offset} runs past its parent`);
  return { tag, start, end, offset };
}

/** The elements inside a constructed one, in order. */
export function children(der: Uint8Array, parent: Element): Element[] {
  const found: Element[] = [];
  for (let offset = parent.start; offset < parent.end;) {
    const child = elementAt(der, offset, parent.end);
    found.push(child);
    offset = child.end;
  }
  return found;
}

const sequence = 0x30;

/** The DER length (tag and length bytes included) of the subject Name of a DER certificate. */
export function subjectNameLength(certificate: Uint8Array): number {
  const outer = elementAt(certificate, 0, certificate.length);
  const tbs = elementAt(certificate, outer.start, outer.end);
  if (outer.tag !== sequence || tbs.tag !== sequence) throw new RangeError('DER: not a certificate');
  let child = elementAt(certificate, tbs.start, tbs.end);
  // [0] EXPLICIT version, absent for v1.
  if (child.tag === 0xa0) child = elementAt(certificate, child.end, tbs.end);
  // serialNumber, signature, issuer, validity; then subject.
  for (let skip = 0; skip < 4; skip += 1) child = elementAt(certificate, child.end, tbs.end);
  if (child.tag !== sequence) throw new RangeError('DER: the subject is not a Name');
  return child.end - child.offset;
}
