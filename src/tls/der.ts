/**
 * Just enough DER to find a certificate's subject Name, whose encoded length is what a TLS
 * server sends per CA in its CertificateRequest (Node's X509Certificate gives the subject as
 * text only). RFC 5280 4.1: Certificate ::= SEQUENCE { tbsCertificate, ... }; TBSCertificate ::=
 * SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer, validity, subject, ... }.
 */

interface Element {
  tag: number;
  /** Offset of the contents. */
  start: number;
  /** Offset just past the element. */
  end: number;
  /** Offset of the tag. */
  offset: number;
}

function elementAt(der: Uint8Array, offset: number, limit: number): Element {
  const tag = der[offset];
  let lengthByte = der[offset + 1];
  if (tag === undefined || lengthByte === undefined) throw new RangeError(`DER: truncated element at ${offset}`);
  let start = offset + 2;
  let length = lengthByte;
  if (lengthByte & 0x80) {
    const count = lengthByte & 0x7f;
    if (count === 0 || count > 4) throw new RangeError(`DER: unsupported length at ${offset}`);
    length = 0;
    for (let index = 0; index < count; index += 1) {
      lengthByte = der[start + index];
      if (lengthByte === undefined) throw new RangeError(`DER: truncated length at ${offset}`);
      length = length * 256 + lengthByte;
    }
    start += count;
  }
  const end = start + length;
  if (end > limit) throw new RangeError(`DER: element at ${offset} runs past its parent`);
  return { tag, start, end, offset };
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
