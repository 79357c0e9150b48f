import { ConfigError } from '../../../src/errors';
import { fleetConfigFrom } from '../../../src/fleet/config';
import { normaliseFingerprint, writerAllowed, type ClientIdentity } from '../../../src/fleet/writers';

const hex = 'ab'.repeat(32);
const colons = (hex.toUpperCase().match(/../g) as string[]).join(':');
const operator: ClientIdentity = { subject: 'O=org1,CN=operator', issuer: 'O=org1,CN=ca', fingerprint256: colons };
const base = { stateDirectory: 's', groups: { g: { tls: { caFiles: ['ca.crt'] } } }, nodes: [{ name: 'n', url: 'https://127.0.0.1:1', group: 'g' }] };

describe('fleet writers', () => {
  test('fingerprints are read with or without colons, any case, with an optional sha256: prefix', () => {
    expect(normaliseFingerprint(hex)).toBe(colons);
    expect(normaliseFingerprint(`sha256:${colons.toLowerCase()}`)).toBe(colons);
    expect(normaliseFingerprint('ab:cd')).toBeNull();
    expect(normaliseFingerprint('zz'.repeat(32))).toBeNull();
  });

  test('every given field of a rule must match; no rule, nobody', () => {
    const rules = (writers: unknown[]) => fleetConfigFrom({ ...base, writers }, '/f.yaml').writers;
    expect(writerAllowed(rules([]), operator)).toBe(false);
    expect(writerAllowed(rules(['O=org1,CN=operator']), operator)).toBe(true);
    expect(writerAllowed(rules(['O=org1,CN=operator']), { ...operator, issuer: 'O=org2,CN=ca' })).toBe(true);
    expect(writerAllowed(rules([{ subject: 'O=org1,CN=operator', issuer: 'O=org1,CN=ca' }]), { ...operator, issuer: 'O=org2,CN=ca' })).toBe(false);
    expect(writerAllowed(rules([{ subject: 'O=org1,CN=operator', issuer: 'O=org1,CN=ca' }]), operator)).toBe(true);
    expect(writerAllowed(rules([{ fingerprint: hex }]), operator)).toBe(true);
    expect(writerAllowed(rules([{ fingerprint: hex }]), { ...operator, fingerprint256: colons.replace(/^AB/, 'AC') })).toBe(false);
    expect(writerAllowed(rules([{ subject: 'O=org1,CN=other' }, { fingerprint: hex }]), operator)).toBe(true);
  });

  test('a rule without subject or fingerprint, a bad fingerprint or an unknown key is refused, naming it', () => {
    const problems = (writers: unknown[]): string[] => {
      try {
        fleetConfigFrom({ ...base, writers }, '/f.yaml');
      } catch (error) {
        if (error instanceof ConfigError) return [...error.problems];
      }
      return [];
    };
    expect(problems([{ issuer: 'O=org1,CN=ca' }])).toEqual(['/f.yaml: writers[0]: give subject (with issuer to pin the CA) or fingerprint']);
    expect(problems([{ fingerprint: 'abc' }])).toEqual(['/f.yaml: writers[0].fingerprint: a SHA-256 fingerprint: 64 hex digits, pairs may be joined by ":"']);
    expect(problems(['O=org1,CN=a', { subject: 'x', role: 'admin' }])).toEqual([expect.stringMatching(/^\/f\.yaml: writers\[1\]: .*/)]);
  });
});
