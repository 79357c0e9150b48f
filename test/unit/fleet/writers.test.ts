import type { X509Certificate } from 'node:crypto';
import { ConfigError } from '../../../src/errors';
import { fleetConfigFrom, issuerByNameRefused } from '../../../src/fleet/config';
import { normaliseFingerprint, writerAllowed, type ClientIdentity } from '../../../src/fleet/writers';
import { formatDistinguishedName, parseDistinguishedName, type DistinguishedName } from '../../../src/tls/distinguished-name';

const hex = 'ab'.repeat(32);
const colons = (hex.toUpperCase().match(/../g) as string[]).join(':');
const base = { stateDirectory: 's', groups: { g: { tls: { caFiles: ['ca.crt'] } } }, nodes: [{ name: 'n', url: 'https://127.0.0.1:1', group: 'g' }] };

function name(text: string): DistinguishedName {
  const parsed = parseDistinguishedName(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

/** A client as the HTTP layer reads it; its certificate is only used by issuer rules (test/integration/fleet/writers.test.ts, with real ones). */
function client(subject: string, fingerprint256 = colons): ClientIdentity {
  const issuer = name('O=org1,CN=ca');
  return {
    certificate: null as unknown as X509Certificate,
    subject: name(subject),
    issuer,
    subjectText: subject,
    issuerText: formatDistinguishedName(issuer),
    fingerprint256,
  };
}

const rules = (writers: unknown[]) => fleetConfigFrom({ ...base, writers }, '/f.yaml').writers;

function problems(writers: unknown[]): string[] {
  try {
    fleetConfigFrom({ ...base, writers }, '/f.yaml');
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('fleet writers', () => {
  test('fingerprints are read with or without colons, any case, with an optional sha256: prefix', () => {
    expect(normaliseFingerprint(hex)).toBe(colons);
    expect(normaliseFingerprint(`sha256:${colons.toLowerCase()}`)).toBe(colons);
    expect(normaliseFingerprint('ab:cd')).toBeNull();
    expect(normaliseFingerprint('zz'.repeat(32))).toBeNull();
  });

  test('every given field of a rule must match; no rule, nobody', () => {
    const operator = client('O=org1,CN=operator');
    expect(writerAllowed(rules([]), operator)).toBe(false);
    expect(writerAllowed(rules(['O=org1,CN=operator']), operator)).toBe(true);
    expect(writerAllowed(rules([{ subject: 'O=org1,CN=operator' }]), operator)).toBe(true);
    expect(writerAllowed(rules([{ fingerprint: hex }]), operator)).toBe(true);
    expect(writerAllowed(rules([{ fingerprint: hex }]), client('O=org1,CN=operator', colons.replace(/^AB/, 'AC')))).toBe(false);
    expect(writerAllowed(rules([{ subject: 'O=org1,CN=operator', fingerprint: hex }]), client('O=org1,CN=other'))).toBe(false);
    expect(writerAllowed(rules([{ subject: 'O=org1,CN=other' }, { fingerprint: hex }]), operator)).toBe(true);
  });

  test('a subject is compared as a name: a value holding ",CN=", a multi-valued RDN, another order do not match', () => {
    const writers = rules(['O=org1,CN=operator']);
    expect(writerAllowed(writers, client('O=org1\\,CN=operator'))).toBe(false);
    expect(writerAllowed(writers, client('O=org1+CN=operator'))).toBe(false);
    expect(writerAllowed(writers, client('CN=operator,O=org1'))).toBe(false);
    expect(writerAllowed(writers, client('o=org1,commonName=operator'))).toBe(true);
  });

  test('an issuer pinned by fingerprint and never bound to its certificate (bindWriterIssuers, at start) lets nobody write', () => {
    expect(writerAllowed(rules([{ subject: 'O=org1,CN=operator', issuerFingerprint: hex }]), client('O=org1,CN=operator'))).toBe(false);
  });

  test('{ subject, issuer } (an issuer by name) is refused at start, naming the key and the forms that replace it', () => {
    expect(problems([{ subject: 'O=org1,CN=operator', issuer: 'O=org1,CN=ca' }])).toEqual([`/f.yaml: writers[0].issuer: ${issuerByNameRefused}`]);
    expect(issuerByNameRefused).toMatch(/issuerFingerprint: 'sha256:AB:CD:\.\.\.'.*issuerCertFile: ca\.crt/);
    expect(problems([{ issuer: 'O=org1,CN=ca' }])).toEqual([`/f.yaml: writers[0].issuer: ${issuerByNameRefused}`]);
  });

  test('a subject that is not an RFC 4514 name is refused at start, naming the entry and why', () => {
    expect(problems(['O="org1,CN=operator"', { subject: 'O=org1, CN=operator' }])).toEqual([
      expect.stringMatching(/^\/f\.yaml: writers\[0\]: not a subject: "O="org1,CN=operator"": at character 3: quoted values are not RFC 4514/),
      expect.stringMatching(/^\/f\.yaml: writers\[1\]\.subject: not a subject: "O=org1, CN=operator": at character 8: no spaces around/),
    ]);
  });

  test('a rule without subject or fingerprint, a bad fingerprint, two issuers, an unreadable CA file or an unknown key is refused, naming it', () => {
    expect(problems([{ issuerFingerprint: hex }])).toEqual([
      '/f.yaml: writers[0]: give subject (with issuerFingerprint or issuerCertFile to pin the CA that signs it) or fingerprint',
    ]);
    expect(problems([{ fingerprint: 'abc' }])).toEqual(['/f.yaml: writers[0].fingerprint: a SHA-256 fingerprint: 64 hex digits, pairs may be joined by ":"']);
    expect(problems([{ subject: 'CN=a', issuerFingerprint: 'abc' }])).toEqual([
      '/f.yaml: writers[0].issuerFingerprint: a SHA-256 fingerprint: 64 hex digits, pairs may be joined by ":"',
    ]);
    expect(problems([{ subject: 'CN=a', issuerFingerprint: hex, issuerCertFile: 'ca.crt' }])).toEqual([
      '/f.yaml: writers[0].issuerCertFile: give issuerFingerprint or issuerCertFile, not both',
    ]);
    expect(problems([{ subject: 'CN=a', issuerCertFile: 'missing-ca.crt' }])).toEqual([
      expect.stringMatching(/^\/f\.yaml: writers\[0\]\.issuerCertFile: cannot read \/missing-ca\.crt: /),
    ]);
    expect(problems(['O=org1,CN=a', { subject: 'CN=x', role: 'admin' }])).toEqual([expect.stringMatching(/^\/f\.yaml: writers\[1\]: .*/)]);
  });
});
