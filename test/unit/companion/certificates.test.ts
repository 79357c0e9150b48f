import {
  certificateLabels,
  daysLeft,
  expiryStage,
  looksLikeKeyFile,
  maxLabelLength,
  parseCertificateText,
  type NodeCertificate,
} from '../../../src/companion/certificates';

const source = { key: 'peer.tls.cert.file', kind: 'tls_server', path: '/x/tls/server.crt' };
const day = 86_400_000;

describe('key files are recognised by their names (never opened)', () => {
  test.each(['priv_sk', '4f2a1b_sk', 'server.key', 'CLIENT.KEY', 'key.pem', 'privkey.pem', 'tls-key.pem', 'private_key.pem'])('%s', (name) => {
    expect(looksLikeKeyFile(name)).toBe(true);
  });
  test.each(['server.crt', 'ca.org1-cert.pem', 'monkey.pem', 'keystone-cert.pem', 'cert.pem'])('%s is a certificate name', (name) => {
    expect(looksLikeKeyFile(name)).toBe(false);
  });
});

describe('parseCertificateText: what a file that gives no certificate holds', () => {
  test.each([
    ['', 'is empty'],
    ['this is not a certificate\n', 'holds no PEM certificate'],
    ['-----BEGIN CERTIFICATE-----\nMIIB', 'holds an incomplete PEM block (BEGIN without END; a file still being written?)'],
    ['-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', 'holds a private key, not a certificate'],
  ])('%j: %s', (text, problem) => {
    expect(parseCertificateText(text, source)).toEqual({ certificates: [], problems: [{ ...source, problem }] });
  });

  test('a block that does not parse is a problem naming the block', () => {
    const parsed = parseCertificateText('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', source);
    expect(parsed.certificates).toEqual([]);
    expect(parsed.problems).toHaveLength(1);
    expect(parsed.problems[0]?.problem).toMatch(/^holds a certificate that does not parse \(block 1: /);
  });
});

describe('expiry windows', () => {
  const windows = { warningDays: 7, planningDays: 30 };
  const now = Date.UTC(2030, 0, 1);
  test.each([
    [-1, 'expired'],
    [0, 'expired'],
    [1, 'warning'],
    [7 * day, 'warning'],
    [7 * day + 1, 'planning'],
    [30 * day, 'planning'],
    [30 * day + 1, 'ok'],
  ])('%d ms left: %s', (left, stage) => {
    expect(expiryStage(now + left, now, windows)).toBe(stage);
  });

  test('no planning window with 0 days', () => {
    expect(expiryStage(now + 10 * day, now, { warningDays: 7, planningDays: 0 })).toBe('ok');
  });

  test('days left round down', () => {
    expect(daysLeft(now + 3 * day - 1, now)).toBe(2);
    expect(daysLeft(now - 1, now)).toBe(-1);
  });
});

test('labels are bounded: a long subject is clipped', () => {
  const certificate: NodeCertificate = {
    ...source,
    subject: `CN=${'x'.repeat(1000)}`,
    issuer: 'CN=ca',
    serial: 'AB',
    notBefore: '2020-01-01T00:00:00.000Z',
    notAfter: '2030-01-01T00:00:00.000Z',
    notAfterMs: Date.UTC(2030, 0, 1),
    fingerprint: 'AA',
  };
  const labels = certificateLabels(certificate);
  expect(labels.subject.length).toBeLessThanOrEqual(maxLabelLength);
  expect(labels).toMatchObject({ kind: 'tls_server', key: 'peer.tls.cert.file', issuer: 'CN=ca', serial: 'AB' });
});
