/**
 * TLS failures in the operator's words (src/fleet/tls-problems.ts, issue 30 item 2): what
 * happened, and which file to look at; never OpenSSL's string (a source path, a line break,
 * `SSL alert number 42`) or Node's `--use-system-ca` advice. The errors below are the ones Node 24
 * gave against the Fabric double and a fabric-ops server (code, message, and `reason` when Node
 * sets it); test/integration/fleet/command-output.test.ts shows the same over real connections.
 */
import { describeTlsProblem, tlsProblemOf, type TlsParties } from '../../../src/fleet/tls-problems';

const nodeParties: TlsParties = {
  peer: 'the node',
  caSource: 'groups.org2.tls.caFiles (/etc/org2/ca.crt)',
  certSource: 'groups.org2.tls.certFile (/etc/org1/client.crt)',
  host: '127.0.0.1:7443',
};

const badCertificateAlert = {
  code: 'EPROTO',
  message:
    'write EPROTO 40CDC2872E7F0000:error:0A000412:SSL routines:ssl3_read_bytes:ssl/tls alert bad certificate:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:918:SSL alert number 42\n',
};
const untrustedLeaf = {
  code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  message: 'unable to verify the first certificate; if the root CA is installed locally, try running Node.js with --use-system-ca',
};

/** What no operator line may carry. */
function expectClean(line: string): void {
  expect(line).not.toMatch(/\n|\.\.\/deps|SSL alert number|error:0A|--use-system-ca/);
}

test('a node that refuses the group client certificate with an alert: client-refused, naming the group, key and file', () => {
  const problem = tlsProblemOf(badCertificateAlert, false);
  expect(problem).toEqual({ kind: 'client-refused', detail: 'TLS alert "bad certificate"' });
  const line = describeTlsProblem(problem!, nodeParties);
  expect(line).toBe(
    'client certificate refused (TLS alert "bad certificate"): groups.org2.tls.certFile (/etc/org1/client.crt) must be issued by one of the node\'s operations.tls.clientRootCAs',
  );
  expectClean(line);
});

test('a server certificate the group CA does not verify: names the CA files, without Node advice', () => {
  const problem = tlsProblemOf(untrustedLeaf, false);
  expect(problem).toEqual({ kind: 'peer-untrusted', detail: 'unable to verify the first certificate' });
  const line = describeTlsProblem(problem!, nodeParties);
  expect(line).toBe(
    "untrusted server certificate (unable to verify the first certificate): the node's certificate is not issued by a CA of groups.org2.tls.caFiles (/etc/org2/ca.crt)",
  );
  expectClean(line);
  expect(tlsProblemOf({ code: 'SELF_SIGNED_CERT_IN_CHAIN', message: 'self-signed certificate in certificate chain' }, false)?.kind).toBe('peer-untrusted');
});

test('a server that closes the connection after a complete handshake, before any answer: the client certificate was refused', () => {
  const hangUp = { code: 'ECONNRESET', message: 'socket hang up' };
  expect(tlsProblemOf(hangUp, true, false)?.kind).toBe('closed-after-handshake');
  // Before the handshake or after an answer began, it is not about the certificate.
  expect(tlsProblemOf(hangUp, false, false)).toBeNull();
  expect(tlsProblemOf(hangUp, true, true)).toBeNull();
  const line = describeTlsProblem(tlsProblemOf(hangUp, true)!, {
    peer: 'the fleet server',
    caSource: '--cacert ca.crt',
    certSource: '--cert me.crt',
    host: 'ops:9443',
  });
  expect(line).toBe(
    "client certificate refused after the TLS handshake (the fleet server closed the connection without answering): --cert me.crt must be issued by one of the fleet server's operations.tls.clientRootCAs",
  );
});

test('TLS 1.3 alerts with Node reason, TLS 1.2 cut handshakes, a plain-HTTP port, expiry and host names', () => {
  const required = {
    code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    message:
      '40CDC2872E7F0000:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:918:SSL alert number 116\n',
    reason: 'tlsv13 alert certificate required',
  };
  expect(tlsProblemOf(required, true)).toEqual({ kind: 'client-refused', detail: 'TLS alert "certificate required"' });
  expect(describeTlsProblem(tlsProblemOf(required, true)!, { ...nodeParties, certSource: null })).toBe(
    'client certificate required (TLS alert "certificate required"): the node wants one and none is given',
  );
  const cut = { code: 'ECONNRESET', message: 'Client network socket disconnected before secure TLS connection was established' };
  expect(tlsProblemOf(cut, false)?.kind).toBe('handshake-cut');
  const plain = {
    code: 'EPROTO',
    message:
      'write EPROTO 40CDC2872E7F0000:error:0A00010B:SSL routines:tls_validate_record_header:wrong version number:../deps/openssl/openssl/ssl/record/methods/tlsany_meth.c:77:\n',
  };
  expect(tlsProblemOf(plain, false)).toEqual({ kind: 'not-tls', detail: 'wrong version number' });
  expect(describeTlsProblem(tlsProblemOf(plain, false)!, nodeParties)).toBe(
    'not TLS: the node does not speak TLS at 127.0.0.1:7443 (wrong version number); is it http://?',
  );
  expect(tlsProblemOf({ code: 'CERT_HAS_EXPIRED', message: 'certificate has expired' }, false)?.kind).toBe('peer-validity');
  const name = {
    code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    message: "Hostname/IP does not match certificate's altnames: IP: 127.0.0.2 is not in the cert's list: 127.0.0.1",
  };
  expect(describeTlsProblem(tlsProblemOf(name, false)!, { ...nodeParties, host: '127.0.0.2:7443' })).toMatch(
    /^server certificate for another name: the node's certificate does not name 127\.0\.0\.2:7443/,
  );
});

test('what is not a TLS problem stays out: a refused connection, a time-out', () => {
  expect(tlsProblemOf({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' }, false)).toBeNull();
  expect(tlsProblemOf({ code: 'ETIMEDOUT', message: 'connect ETIMEDOUT' }, false)).toBeNull();
});
