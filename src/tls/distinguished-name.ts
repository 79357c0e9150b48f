/**
 * Distinguished names, compared exactly. A certificate's subject and issuer are read from its DER
 * (RFC 5280 4.1: Name ::= SEQUENCE OF RelativeDistinguishedName; RDN ::= SET OF
 * AttributeTypeAndValue), keeping every attribute's type (an OID) and value, and every RDN with
 * several attributes (`O=org1+CN=operator`) as one RDN. Rules are written in RFC 4514's string
 * syntax (escapes `\,` `\+` `\"` `\\` `\<` `\>` `\;` `\=` `\#` `\ ` and `\XX` bytes of UTF-8;
 * `#hex` for a value's BER encoding; short names CN, O, OU... or dotted OIDs), with one
 * difference, the one form used for clients everywhere in fabric-ops: the RDNs are written in the
 * certificate's order, first RDN first (`O=org1,CN=operator`, as `openssl x509 -noout -subject
 * -nameopt RFC2253,-dn_rev` prints it), not RFC 4514's reversed order.
 *
 * Two names are equal when they have the same RDNs in the same order, and each RDN the same
 * attributes (in any order within the RDN): same type, and the same value character for character
 * (no case or space folding, no Unicode normalisation; the ASN.1 string type is not compared), or,
 * for a value written `#hex`, the same encoding byte for byte. Pure.
 */
import { children, elementAt, type Element } from './der';

/** One attribute of a name. */
export interface NameAttribute {
  /** Dotted OID: `2.5.4.3` (CN). */
  readonly type: string;
  /** The value as text when it is a directory string (UTF8String, PrintableString, IA5String, BMPString...), else null. */
  readonly text: string | null;
  /** The value's encoding (tag, length, contents): always from a certificate; from text only when written `#hex`. */
  readonly der: Uint8Array | null;
}

export type RelativeDistinguishedName = readonly NameAttribute[];
export type DistinguishedName = readonly RelativeDistinguishedName[];

/** RFC 4514 3 (the names every implementation knows) and the other attributes of X.520 and PKCS #9 that certificates use. The first name of an OID is the one printed. */
const attributeNames: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['2.5.4.3', ['CN', 'commonName']],
  ['2.5.4.4', ['SN', 'surname']],
  ['2.5.4.5', ['serialNumber']],
  ['2.5.4.6', ['C', 'countryName']],
  ['2.5.4.7', ['L', 'localityName']],
  ['2.5.4.8', ['ST', 'stateOrProvinceName']],
  ['2.5.4.9', ['STREET', 'streetAddress']],
  ['2.5.4.10', ['O', 'organizationName']],
  ['2.5.4.11', ['OU', 'organizationalUnitName']],
  ['2.5.4.12', ['title']],
  ['2.5.4.13', ['description']],
  ['2.5.4.15', ['businessCategory']],
  ['2.5.4.17', ['postalCode']],
  ['2.5.4.42', ['GN', 'givenName']],
  ['2.5.4.43', ['initials']],
  ['2.5.4.44', ['generationQualifier']],
  ['2.5.4.46', ['dnQualifier']],
  ['2.5.4.65', ['pseudonym']],
  ['2.5.4.97', ['organizationIdentifier']],
  ['0.9.2342.19200300.100.1.1', ['UID', 'userId']],
  ['0.9.2342.19200300.100.1.25', ['DC', 'domainComponent']],
  ['1.2.840.113549.1.9.1', ['emailAddress']],
];

const oidByName = new Map<string, string>(attributeNames.flatMap(([oid, names]) => names.map((name): [string, string] => [name.toLowerCase(), oid])));
const nameByOid = new Map<string, string>(attributeNames.map(([oid, names]) => [oid, names[0] as string]));

// ---------------------------------------------------------------------------------------------
// DER

const tags = { sequence: 0x30, set: 0x31, oid: 0x06, utf8: 0x0c, numeric: 0x12, printable: 0x13, ia5: 0x16, visible: 0x1a, universal: 0x1c, bmp: 0x1e };

function decodeOid(bytes: Uint8Array): string {
  if (bytes.length === 0) throw new RangeError('DER: empty OID');
  const arcs: bigint[] = [];
  let value = 0n;
  let fresh = true;
  for (const byte of bytes) {
    if (fresh && byte === 0x80) throw new RangeError('DER: OID arc with a leading zero');
    value = value * 128n + BigInt(byte & 0x7f);
    fresh = (byte & 0x80) === 0;
    if (fresh) {
      arcs.push(value);
      value = 0n;
    }
  }
  if (!fresh) throw new RangeError('DER: OID ends inside an arc');
  const head = arcs[0] as bigint;
  const [first, second] = head < 40n ? [0n, head] : head < 80n ? [1n, head - 40n] : [2n, head - 80n];
  return [first, second, ...arcs.slice(1)].join('.');
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of a directory string, or null (another type, or bytes its type does not allow). */
function decodeText(tag: number, contents: Uint8Array): string | null {
  switch (tag) {
    case tags.utf8:
      try {
        return utf8.decode(contents);
      } catch {
        return null;
      }
    case tags.printable:
    case tags.ia5:
    case tags.numeric:
    case tags.visible:
      return contents.every((byte) => byte < 0x80) ? String.fromCharCode(...contents) : null;
    case tags.bmp: {
      if (contents.length % 2 !== 0) return null;
      const units: number[] = [];
      for (let index = 0; index < contents.length; index += 2) units.push(((contents[index] as number) << 8) | (contents[index + 1] as number));
      const text = String.fromCharCode(...units);
      return wellFormed(text) ? text : null;
    }
    case tags.universal: {
      if (contents.length % 4 !== 0) return null;
      let text = '';
      for (let index = 0; index < contents.length; index += 4) {
        const point =
          (contents[index] as number) * 0x1000000 +
          (contents[index + 1] as number) * 0x10000 +
          (contents[index + 2] as number) * 0x100 +
          (contents[index + 3] as number);
        if (point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return null;
        text += String.fromCodePoint(point);
      }
      return text;
    }
    default:
      // TeletexString (no agreed character set), OCTET STRING, INTEGER...: compared by encoding only.
      return null;
  }
}

/** No lone surrogate. */
function wellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

function nameAt(der: Uint8Array, name: Element): DistinguishedName {
  if (name.tag !== tags.sequence) throw new RangeError(`DER: the Name at ${name.offset} is not a SEQUENCE`);
  return children(der, name).map((rdn) => {
    if (rdn.tag !== tags.set) throw new RangeError(`DER: the RDN at ${rdn.offset} is not a SET`);
    const attributes = children(der, rdn).map((pair): NameAttribute => {
      const parts = pair.tag === tags.sequence ? children(der, pair) : [];
      const [type, value] = parts;
      if (parts.length !== 2 || type === undefined || value === undefined || type.tag !== tags.oid) {
        throw new RangeError(`DER: the attribute at ${pair.offset} is not SEQUENCE { OID, value }`);
      }
      return {
        type: decodeOid(der.subarray(type.start, type.end)),
        text: decodeText(value.tag, der.subarray(value.start, value.end)),
        der: der.slice(value.offset, value.end),
      };
    });
    if (attributes.length === 0) throw new RangeError(`DER: the RDN at ${rdn.offset} is empty`);
    return attributes;
  });
}

/** A DER Name (SEQUENCE OF RDN) on its own. Throws RangeError when it is not one. */
export function parseNameDer(der: Uint8Array): DistinguishedName {
  const name = elementAt(der, 0, der.length);
  if (name.end !== der.length) throw new RangeError('DER: bytes after the Name');
  return nameAt(der, name);
}

/** The issuer and subject of a DER certificate. Throws RangeError when it is not one. */
export function certificateNames(certificate: Uint8Array): { issuer: DistinguishedName; subject: DistinguishedName } {
  const outer = elementAt(certificate, 0, certificate.length);
  if (outer.tag !== tags.sequence) throw new RangeError('DER: not a certificate');
  const tbs = elementAt(certificate, outer.start, outer.end);
  if (tbs.tag !== tags.sequence) throw new RangeError('DER: not a certificate');
  const fields = children(certificate, tbs);
  // [0] EXPLICIT version, absent for v1; then serialNumber, signature, issuer, validity, subject.
  const at = fields[0]?.tag === 0xa0 ? 1 : 0;
  const issuer = fields[at + 2];
  const subject = fields[at + 4];
  if (issuer === undefined || subject === undefined) throw new RangeError('DER: the certificate has no issuer or subject');
  return { issuer: nameAt(certificate, issuer), subject: nameAt(certificate, subject) };
}

// ---------------------------------------------------------------------------------------------
// Text

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex').toUpperCase();

/** Characters RFC 4514 escapes anywhere in a value. */
const alwaysEscaped = new Set(['\\', '"', '+', ',', ';', '<', '>']);
/** Shown as `\XX` bytes: control, format, separator and unassigned characters, so a name cannot break or disguise a log line. */
const invisible = /[\p{C}\p{Z}]/u;

function escapeValue(text: string): string {
  const characters = [...text];
  return characters
    .map((character, index) => {
      if (alwaysEscaped.has(character)) return `\\${character}`;
      if (character === ' ') return index === 0 || index === characters.length - 1 ? '\\ ' : ' ';
      if (character === '#' && index === 0) return '\\#';
      if (invisible.test(character)) return [...Buffer.from(character, 'utf8')].map((byte) => `\\${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
      return character;
    })
    .join('');
}

function formatAttribute(attribute: NameAttribute): string {
  const name = nameByOid.get(attribute.type);
  // RFC 4514 2.4: a type without a name, or a value without a string form, is `#` and the value's encoding in hex.
  if (name !== undefined && attribute.text !== null) return `${name}=${escapeValue(attribute.text)}`;
  return `${name ?? attribute.type}=#${attribute.der === null ? '' : hex(attribute.der)}`;
}

/**
 * A name as one line: RFC 4514 syntax with its escapes, RDNs in the certificate's order; control
 * and other invisible characters as `\XX` bytes. What parseDistinguishedName reads back as an
 * equal name: the form the audit log and the 403 show, and writers are written in.
 */
export function formatDistinguishedName(name: DistinguishedName): string {
  return name.map((rdn) => rdn.map(formatAttribute).join('+')).join(',');
}

export type ParsedName = { ok: true; value: DistinguishedName } | { ok: false; problem: string };

const typePattern = /^(?:([A-Za-z][A-Za-z0-9-]*)|((?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))+))=/;
const hexDigit = /^[0-9A-Fa-f]$/;
/** What may follow `\` as itself (RFC 4514 3: `special` and `\`). */
const escapable = new Set(['\\', '"', '+', ',', ';', '<', '>', ' ', '#', '=']);

class NameSyntaxError extends Error {}

/**
 * Reads `O=org1,CN=operator` (RDNs in the certificate's order; see the top of this file). Strict:
 * no spaces around `=`, `,` and `+` (a value's leading or trailing space is written `\ `), no
 * quoted values (RFC 2253's `"..."`: escape instead), no `;` between RDNs, an unknown attribute
 * name is refused (write its dotted OID).
 */
export function parseDistinguishedName(text: string): ParsedName {
  const fail = (at: number, why: string): never => {
    throw new NameSyntaxError(`"${text}": at character ${at + 1}: ${why}`);
  };
  try {
    if (text === '') return { ok: true, value: [] };
    const rdns: NameAttribute[][] = [];
    let rdn: NameAttribute[] = [];
    let index = 0;
    for (;;) {
      // attributeType "="
      const type = typePattern.exec(text.slice(index));
      if (type === null) {
        const rest = text.slice(index);
        if (rest === '') fail(index, 'a name cannot end with "," or "+"; an attribute (type=value) must follow');
        if (/^\s/.test(rest)) fail(index, 'no spaces around "," "+" and "="');
        if (/^[A-Za-z0-9.-]+\s+=/.test(rest)) fail(index, 'no spaces around "=" between a type and its value');
        if (/^oid\./i.test(rest)) fail(index, 'write a dotted OID without "OID." (RFC 4514)');
        fail(index, 'expected an attribute type (CN, O, OU... or a dotted OID like 2.5.4.3) and "="');
      }
      const [match, short, dotted] = type as RegExpExecArray;
      let oid = dotted;
      if (short !== undefined) {
        oid = oidByName.get(short.toLowerCase());
        if (oid === undefined)
          fail(index, `unknown attribute type "${short}": write its dotted OID (e.g. 2.5.4.3=...) or one of ${[...nameByOid.values()].join(', ')}`);
      }
      index += match.length;
      const value = readValue(text, index, fail);
      rdn.push({ type: oid as string, ...value.attribute });
      index = value.end;
      const separator = text[index];
      if (separator === undefined) break;
      if (separator === ',') {
        rdns.push(rdn);
        rdn = [];
      }
      index += 1;
    }
    rdns.push(rdn);
    return { ok: true, value: rdns };
  } catch (error) {
    if (error instanceof NameSyntaxError) return { ok: false, problem: error.message };
    throw error;
  }
}

/** One attribute value from `start` to the next unescaped `,` `+` or the end. */
function readValue(text: string, start: number, fail: (at: number, why: string) => never): { attribute: Pick<NameAttribute, 'text' | 'der'>; end: number } {
  if (text[start] === '#') {
    // hexstring: the BER encoding of the value.
    let end = start + 1;
    while (end < text.length && text[end] !== ',' && text[end] !== '+') end += 1;
    const digits = text.slice(start + 1, end);
    if (!/^(?:[0-9A-Fa-f]{2})+$/.test(digits))
      fail(start, '"#" starts a value given as hex pairs of its BER encoding (#0C026F31); write "\\#" for a value that starts with #');
    const der = Uint8Array.from(Buffer.from(digits, 'hex'));
    let element: Element | undefined;
    try {
      element = elementAt(der, 0, der.length);
    } catch {
      // reported below
    }
    if (element === undefined || element.end !== der.length) fail(start, `#${digits} is not one BER element (tag, length, contents)`);
    const { tag, start: contents } = element;
    return { attribute: { der, text: decodeText(tag, der.subarray(contents)) }, end };
  }
  const bytes: number[] = [];
  let index = start;
  let trailingSpace = false;
  for (;;) {
    const character = text[index];
    if (character === undefined || character === ',' || character === '+') break;
    if (character === '\\') {
      const next = text[index + 1];
      if (next === undefined) fail(index, 'a value cannot end with a lone "\\"');
      if (escapable.has(next)) {
        bytes.push(next.charCodeAt(0));
        index += 2;
      } else if (hexDigit.test(next) && hexDigit.test(text[index + 2] ?? '')) {
        bytes.push(Number.parseInt(text.slice(index + 1, index + 3), 16));
        index += 3;
      } else {
        fail(index, `"\\${next}" is not an escape: escape one of \\ " + , ; < > = # space, or write a byte of UTF-8 as two hex digits (\\2C)`);
      }
      trailingSpace = false;
      continue;
    }
    if (character === '"') fail(index, 'quoted values are not RFC 4514: write the value unquoted and escape , + " \\ < > ; in it with \\ (O=a\\,b)');
    if (character === ';') fail(index, '";" does not separate RDNs in RFC 4514: use ","; in a value write \\;');
    if (character === '<' || character === '>') fail(index, `"${character}" must be escaped in a value: \\${character}`);
    if (character === '\0') fail(index, 'a NUL character must be escaped: \\00');
    if (character === ' ' && index === start)
      fail(index, 'a value cannot start with a space (no spaces around "=" "," "+"); write \\20 or "\\ " for a leading space');
    const point = text.codePointAt(index) as number;
    if (point >= 0xd800 && point <= 0xdfff) fail(index, 'a lone surrogate is not a character');
    const literal = String.fromCodePoint(point);
    bytes.push(...Buffer.from(literal, 'utf8'));
    trailingSpace = character === ' ';
    index += literal.length;
  }
  if (trailingSpace) fail(index - 1, 'a value cannot end with a space (no spaces around "," and "+"); write "\\ " or \\20 for a trailing space');
  let value: string;
  try {
    value = utf8.decode(Uint8Array.from(bytes));
  } catch {
    return fail(start, 'the escaped bytes (\\XX) are not UTF-8');
  }
  return { attribute: { text: value, der: null }, end: index };
}

// ---------------------------------------------------------------------------------------------
// Comparison

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/** Does the attribute of a rule (`pattern`) match the attribute of a certificate? */
function attributeMatches(pattern: NameAttribute, attribute: NameAttribute): boolean {
  if (pattern.type !== attribute.type) return false;
  if (pattern.der !== null) return attribute.der !== null && sameBytes(pattern.der, attribute.der);
  return pattern.text !== null && attribute.text !== null && pattern.text === attribute.text;
}

/** Each attribute of `pattern` pairs with its own attribute of `rdn` (an RDN is a set: order free, sizes equal). */
function rdnMatches(pattern: RelativeDistinguishedName, rdn: RelativeDistinguishedName): boolean {
  if (pattern.length !== rdn.length) return false;
  const used = new Array<boolean>(rdn.length).fill(false);
  const pair = (index: number): boolean => {
    const wanted = pattern[index];
    if (wanted === undefined) return true;
    for (let candidate = 0; candidate < rdn.length; candidate += 1) {
      if (used[candidate] || !attributeMatches(wanted, rdn[candidate] as NameAttribute)) continue;
      used[candidate] = true;
      if (pair(index + 1)) return true;
      used[candidate] = false;
    }
    return false;
  };
  return pair(0);
}

/** Is `name` (a certificate's) the name `pattern` (a rule's) says: same RDNs, same order, same attributes? */
export function distinguishedNameMatches(pattern: DistinguishedName, name: DistinguishedName): boolean {
  return pattern.length === name.length && pattern.every((rdn, index) => rdnMatches(rdn, name[index] as RelativeDistinguishedName));
}
