import {
  distinguishedNameMatches,
  formatDistinguishedName,
  parseDistinguishedName,
  parseNameDer,
  type DistinguishedName,
} from '../../../src/tls/distinguished-name';

// DER built by hand, as a certificate carries a Name (RFC 5280 4.1.2.4): SEQUENCE OF SET OF SEQUENCE { OID, value }.

function tlv(tag: number, contents: Uint8Array): Uint8Array {
  const length = contents.length;
  const head = length < 0x80 ? [length] : length < 0x100 ? [0x81, length] : [0x82, length >> 8, length & 0xff];
  return Uint8Array.from([tag, ...head, ...contents]);
}

function oid(dotted: string): Uint8Array {
  const [first, second, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const groups = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) groups.unshift((value & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Uint8Array.from(bytes));
}

const UTF8 = 0x0c;
const PRINTABLE = 0x13;
const TELETEX = 0x14;
const BMP = 0x1e;
const CN = '2.5.4.3';
const O = '2.5.4.10';
const OU = '2.5.4.11';

type Attribute = [type: string, tag: number, value: string | Uint8Array];

function encodeValue(tag: number, value: string | Uint8Array): Uint8Array {
  if (value instanceof Uint8Array) return tlv(tag, value);
  if (tag === BMP) return tlv(tag, Uint8Array.from([...value].flatMap((c) => [c.charCodeAt(0) >> 8, c.charCodeAt(0) & 0xff])));
  return tlv(tag, Buffer.from(value, 'utf8'));
}

/** A DER Name: each inner array one RDN (several attributes: a multi-valued RDN). */
function der(...rdns: Attribute[][]): Uint8Array {
  const concat = (parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((part) => [...part]));
  return tlv(0x30, concat(rdns.map((rdn) => tlv(0x31, concat(rdn.map(([type, tag, value]) => tlv(0x30, concat([oid(type), encodeValue(tag, value)]))))))));
}

const name = (...rdns: Attribute[][]): DistinguishedName => parseNameDer(der(...rdns));

function rule(text: string): DistinguishedName {
  const parsed = parseDistinguishedName(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

function problem(text: string): string {
  const parsed = parseDistinguishedName(text);
  return parsed.ok ? '(parsed)' : parsed.problem;
}

const operator = name([[O, UTF8, 'org1']], [[CN, UTF8, 'operator']]);

describe('RFC 4514 names, compared with a certificate name exactly', () => {
  test('O=org1,CN=operator: the RDNs in the certificate order, each attribute its type and value', () => {
    expect(distinguishedNameMatches(rule('O=org1,CN=operator'), operator)).toBe(true);
    // The string type is not the value: a PrintableString org1 is org1.
    expect(distinguishedNameMatches(rule('O=org1,CN=operator'), name([[O, PRINTABLE, 'org1']], [[CN, PRINTABLE, 'operator']]))).toBe(true);
  });

  test('a value that holds ",CN=" is one attribute, not two RDNs (the forged single attribute)', () => {
    const oneAttribute = name([[O, UTF8, 'org1,CN=operator']]);
    expect(formatDistinguishedName(oneAttribute)).toBe('O=org1\\,CN=operator');
    expect(distinguishedNameMatches(rule('O=org1,CN=operator'), oneAttribute)).toBe(false);
    expect(distinguishedNameMatches(rule('O=org1\\,CN=operator'), oneAttribute)).toBe(true);
    expect(distinguishedNameMatches(rule('O=org1\\2CCN=operator'), oneAttribute)).toBe(true);
    // An issuer name as the forged intermediate's one attribute.
    const issuerLike = name([[O, UTF8, 'org1,CN=ca.org1']]);
    expect(distinguishedNameMatches(rule('O=org1,CN=ca.org1'), issuerLike)).toBe(false);
  });

  test('a multi-valued RDN is one RDN: O=org1+CN=operator is not O=org1,CN=operator, and its attributes pair in any order', () => {
    const multi = name([
      [O, UTF8, 'org1'],
      [CN, UTF8, 'operator'],
    ]);
    expect(formatDistinguishedName(multi)).toBe('O=org1+CN=operator');
    expect(distinguishedNameMatches(rule('O=org1,CN=operator'), multi)).toBe(false);
    expect(distinguishedNameMatches(rule('O=org1+CN=operator'), operator)).toBe(false);
    expect(distinguishedNameMatches(rule('O=org1+CN=operator'), multi)).toBe(true);
    expect(distinguishedNameMatches(rule('CN=operator+O=org1'), multi)).toBe(true);
    expect(distinguishedNameMatches(rule('CN=operator+CN=operator'), multi)).toBe(false);
  });

  test('order, type, case, spaces and extra RDNs all count', () => {
    expect(distinguishedNameMatches(rule('CN=operator,O=org1'), operator)).toBe(false);
    expect(distinguishedNameMatches(rule('OU=org1,CN=operator'), operator)).toBe(false);
    expect(distinguishedNameMatches(rule('O=Org1,CN=operator'), operator)).toBe(false);
    expect(distinguishedNameMatches(rule('O=org1,CN=operator\\20'), operator)).toBe(false);
    expect(distinguishedNameMatches(rule('O=org1'), operator)).toBe(false);
    expect(distinguishedNameMatches(rule('O=org1,OU=x,CN=operator'), operator)).toBe(false);
    expect(distinguishedNameMatches(rule('O=org1,CN=operator'), name([[O, UTF8, 'org1']], [[OU, UTF8, 'x']], [[CN, UTF8, 'operator']]))).toBe(false);
  });

  test('attribute types: short names in any case, long names and dotted OIDs are the same type', () => {
    for (const text of ['o=org1,cn=operator', 'organizationName=org1,commonName=operator', '2.5.4.10=org1,2.5.4.3=operator']) {
      expect(distinguishedNameMatches(rule(text), operator)).toBe(true);
    }
  });

  test('escapes: \\, \\+ \\" \\\\ \\; \\< \\> \\= \\# and hex pairs of UTF-8', () => {
    const value = (text: string): string | null => rule(text)[0]?.[0]?.text ?? null;
    expect(value('CN=a\\,b\\+c\\"d\\\\e\\;f\\<g\\>h\\=i')).toBe('a,b+c"d\\e;f<g>h=i');
    expect(value('CN=\\#hash')).toBe('#hash');
    expect(value('CN=caf\\C3\\A9')).toBe('café');
    expect(value('CN=\\ padded\\ ')).toBe(' padded ');
    expect(value('CN=a=b')).toBe('a=b');
    expect(value('CN=')).toBe('');
  });

  test('#hex is the value encoding, compared byte for byte', () => {
    const hex = rule(`O=org1,CN=#${Buffer.from(encodeValue(UTF8, 'operator')).toString('hex')}`);
    expect(distinguishedNameMatches(hex, operator)).toBe(true);
    // PrintableString "operator" is another encoding.
    expect(distinguishedNameMatches(hex, name([[O, UTF8, 'org1']], [[CN, PRINTABLE, 'operator']]))).toBe(false);
  });

  test('what is not RFC 4514 is refused, saying why and where', () => {
    expect(problem('O="org1,CN=operator"')).toMatch(/^"O="org1,CN=operator"": at character 3: quoted values are not RFC 4514/);
    expect(problem('O=org1;CN=operator')).toMatch(/at character 7: ";" does not separate RDNs in RFC 4514/);
    expect(problem('O=org1, CN=operator')).toMatch(/at character 8: no spaces around/);
    expect(problem('O = org1')).toMatch(/at character 1: no spaces around "="/);
    expect(problem('O= org1')).toMatch(/at character 3: a value cannot start with a space/);
    expect(problem('O=org1 ,CN=x')).toMatch(/at character 7: a value cannot end with a space/);
    expect(problem('O=org1,')).toMatch(/a name cannot end with "," or "\+"/);
    expect(problem('O=org1\\')).toMatch(/a value cannot end with a lone "\\"/);
    expect(problem('O=org1\\x')).toMatch(/"\\x" is not an escape/);
    expect(problem('O=org\\C3')).toMatch(/the escaped bytes \(\\XX\) are not UTF-8/);
    expect(problem('O=a<b')).toMatch(/"<" must be escaped/);
    expect(problem('FOO=x')).toMatch(/unknown attribute type "FOO": write its dotted OID/);
    expect(problem('OID.2.5.4.3=x')).toMatch(/without "OID."/);
    expect(problem('CN=#zz')).toMatch(/"#" starts a value given as hex pairs/);
    expect(problem('CN=#0C05ab')).toMatch(/#0C05ab is not one BER element/);
    expect(problem('CN=a\u0000b')).toMatch(/a NUL character must be escaped/);
  });
});

describe('a certificate name as one line', () => {
  test('RFC 4514 escapes, in the certificate order; what cannot be shown as text is #hex', () => {
    expect(formatDistinguishedName(operator)).toBe('O=org1,CN=operator');
    expect(formatDistinguishedName(name([[CN, UTF8, ' #lead, "q" + <x>; back\\slash ']]))).toBe('CN=\\ #lead\\, \\"q\\" \\+ \\<x\\>\\; back\\\\slash\\ ');
    expect(formatDistinguishedName(name([[CN, UTF8, '#x']]))).toBe('CN=\\#x');
    expect(formatDistinguishedName(name([['1.2.3.4', UTF8, 'v']]))).toBe('1.2.3.4=#0C0176');
    expect(formatDistinguishedName(name([[CN, TELETEX, Uint8Array.from([0xe9])]]))).toBe('CN=#1401E9');
    expect(formatDistinguishedName(name([[CN, BMP, 'bmp']]))).toBe('CN=bmp');
    expect(formatDistinguishedName([])).toBe('');
  });

  test('control, format and separator characters are \\XX bytes: a name cannot break or disguise a log line', () => {
    expect(formatDistinguishedName(name([[CN, UTF8, 'a\nb\rc\u0000d\u007f']]))).toBe('CN=a\\0Ab\\0Dc\\00d\\7F');
    expect(formatDistinguishedName(name([[CN, UTF8, 'evil\u202Egnp.exe\u00a0\u2028']]))).toBe('CN=evil\\E2\\80\\AEgnp.exe\\C2\\A0\\E2\\80\\A8');
  });

  test('what is printed reads back as the same name', () => {
    const names = [
      operator,
      name([[O, UTF8, 'org1,CN=operator']]),
      name([
        [O, UTF8, 'org1'],
        [CN, UTF8, 'operator'],
      ]),
      name([[CN, UTF8, ' #lead, "q" + <x>; back\\slash = ']]),
      name([[CN, UTF8, 'a\nb\u202E\u0000 é 日本']]),
      name([['1.2.3.4', UTF8, 'v']], [[CN, TELETEX, Uint8Array.from([0xe9])]], [[CN, BMP, 'bmp']]),
    ];
    for (const certificateName of names) {
      const text = formatDistinguishedName(certificateName);
      expect([text, distinguishedNameMatches(rule(text), certificateName)]).toEqual([text, true]);
    }
  });

  test('a Name that is not DER of a Name is refused', () => {
    expect(() => parseNameDer(Uint8Array.from([0x30, 0x05, 0x31]))).toThrow(RangeError);
    expect(() => parseNameDer(tlv(0x30, tlv(0x31, new Uint8Array())))).toThrow(/RDN at 2 is empty/);
    expect(() => parseNameDer(tlv(0x30, tlv(0x30, new Uint8Array())))).toThrow(/not a SET/);
  });
});
