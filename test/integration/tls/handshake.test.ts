import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { type Server, createServer, get } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type ConnectionOptions, type SecureContextOptions, type TLSSocket, connect } from 'node:tls';
import type { TlsConfig } from '../../../src/config/types';
import { type TlsMaterial, loadTlsMaterial, secureContextOptions } from '../../../src/tls/material';
import { baseTestConfig } from '../../support/config';
import { type KeyPair, createTestPki, type TestPki } from '../../support/pki';

const keys = baseTestConfig().keys;
let pki: TestPki;
let rsaServer: KeyPair;

function materialFor(pair: KeyPair, clientCAs: string[]): TlsMaterial {
  const tls: TlsConfig = {
    enabled: true,
    certFile: pair.cert,
    keyFile: pair.key,
    clientAuthRequired: false,
    clientRootCAFiles: clientCAs,
    requireDedicatedCA: false,
  };
  return loadTlsMaterial(tls, keys);
}

interface Running {
  server: Server;
  port: number;
  /** Handshake failures the server saw. */
  clientErrors: Error[];
}

const running: Server[] = [];

async function startServer(options: SecureContextOptions & { requestCert?: boolean; rejectUnauthorized?: boolean }): Promise<Running> {
  const clientErrors: Error[] = [];
  const server = createServer(options, (request, response) => {
    const socket = request.socket as TLSSocket;
    response.end(socket.authorized ? 'authorized' : `unauthorized: ${String(socket.authorizationError)}`);
  });
  server.on('tlsClientError', (error) => clientErrors.push(error));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  running.push(server);
  return { server, port: (server.address() as AddressInfo).port, clientErrors };
}

interface HandshakeResult {
  protocol: string | null;
  cipher: string;
  fingerprint: string;
  /** The HTTP response, head and body. */
  answer: string;
}

/**
 * A TLS handshake with the server, then one HTTP request on it (TLS 1.3 reports a rejected
 * client certificate only after the handshake). Resolves with what was negotiated, rejects
 * with the failure.
 */
function handshake(port: number, options: ConnectionOptions = {}): Promise<HandshakeResult> {
  return new Promise((resolve, reject) => {
    let negotiated: HandshakeResult | undefined;
    let answer = '';
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: [pki.serverCA.certPem], ...options });
    socket.once('secureConnect', () => {
      negotiated = {
        protocol: socket.getProtocol(),
        cipher: socket.getCipher().standardName,
        fingerprint: socket.getPeerCertificate().fingerprint256,
        answer: '',
      };
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('utf8');
    });
    socket.once('error', reject);
    socket.once('close', () => {
      if (negotiated !== undefined && answer !== '') resolve({ ...negotiated, answer });
      else reject(new Error(`connection closed without an answer (handshake ${negotiated === undefined ? 'not ' : ''}completed)`));
    });
  });
}

function fingerprintOf(pair: KeyPair): string {
  return new X509Certificate(pair.certPem).fingerprint256;
}

/** The certificate an HTTPS request on a new connection gets. */
async function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = get({ host: '127.0.0.1', port, path: '/', ca: [pki.serverCA.certPem], servername: 'localhost', agent: false }, (response) => {
      const certificate = (response.socket as TLSSocket).getPeerCertificate();
      response.resume();
      response.once('end', () => resolve(certificate.fingerprint256));
    });
    request.once('error', reject);
  });
}

beforeAll(async () => {
  pki = await createTestPki();
  rsaServer = await pki.issue('rsa-server', 'serverCA', { keyType: 'rsa' });
});
afterAll(async () => {
  for (const server of running) {
    server.closeAllConnections();
    server.close();
  }
  await pki.cleanup();
});

describe('a server built from secureContextOptions', () => {
  it('accepts TLS 1.3', async () => {
    const { port } = await startServer(secureContextOptions(materialFor(pki.server, [pki.clientCA.cert])));
    const result = await handshake(port);
    expect(result.protocol).toBe('TLSv1.3');
    expect(result.fingerprint).toBe(fingerprintOf(pki.server));
  });

  it('accepts TLS 1.2 with each ECDHE-ECDSA AES-GCM suite on an EC certificate', async () => {
    const { port } = await startServer(secureContextOptions(materialFor(pki.server, [pki.clientCA.cert])));
    const negotiated: Array<[string | null, string]> = [];
    for (const suite of ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384']) {
      const result = await handshake(port, { maxVersion: 'TLSv1.2', ciphers: suite });
      negotiated.push([result.protocol, result.cipher]);
    }
    expect(negotiated).toEqual([
      ['TLSv1.2', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'],
      ['TLSv1.2', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'],
    ]);
  });

  it('accepts TLS 1.2 with the ECDHE-RSA and RSA AES-GCM suites on an RSA certificate', async () => {
    const { port } = await startServer(secureContextOptions(materialFor(rsaServer, [pki.clientCA.cert])));
    const negotiated: Array<[string | null, string]> = [];
    for (const suite of ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'AES128-GCM-SHA256', 'AES256-GCM-SHA384']) {
      const result = await handshake(port, { maxVersion: 'TLSv1.2', ciphers: suite });
      negotiated.push([result.protocol, result.cipher]);
    }
    expect(negotiated).toEqual([
      ['TLSv1.2', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
      ['TLSv1.2', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384'],
      ['TLSv1.2', 'TLS_RSA_WITH_AES_128_GCM_SHA256'],
      ['TLSv1.2', 'TLS_RSA_WITH_AES_256_GCM_SHA384'],
    ]);
  });

  it("refuses TLS 1.2 suites outside Fabric's list", async () => {
    const ec = await startServer(secureContextOptions(materialFor(pki.server, [pki.clientCA.cert])));
    const rsa = await startServer(secureContextOptions(materialFor(rsaServer, [pki.clientCA.cert])));
    await expect(handshake(ec.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-CHACHA20-POLY1305' })).rejects.toThrow(/handshake failure/);
    await expect(handshake(ec.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA256' })).rejects.toThrow(/handshake failure/);
    await expect(handshake(rsa.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA' })).rejects.toThrow(/handshake failure/);
    expect(ec.clientErrors.map((e) => e.message)).toEqual([expect.stringMatching(/no shared cipher/), expect.stringMatching(/no shared cipher/)]);
  });

  it('refuses TLS 1.1, which the same client can speak to a server that allows it', async () => {
    const tls11Client: ConnectionOptions = { minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' };
    const permissive = await startServer({ cert: pki.server.certPem, key: pki.server.keyPem, minVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' });
    expect((await handshake(permissive.port, tls11Client)).protocol).toBe('TLSv1.1');

    const ours = await startServer(secureContextOptions(materialFor(pki.server, [pki.clientCA.cert])));
    await expect(handshake(ours.port, tls11Client)).rejects.toThrow(/protocol version/);
    expect(ours.clientErrors.map((e) => e.message)).toEqual([expect.stringMatching(/unsupported protocol/)]);
  });

  it('verifies client certificates against the client root CAs only', async () => {
    const material = materialFor(pki.server, [pki.clientCA.cert]);
    const verifying = await startServer({ ...secureContextOptions(material), requestCert: true, rejectUnauthorized: false });
    const rejecting = await startServer({ ...secureContextOptions(material), requestCert: true, rejectUnauthorized: true });
    const signedByServerCA = await pki.issue('client-from-server-ca', 'serverCA', { usage: 'client', cn: 'operator' });
    for (const maxVersion of ['TLSv1.2', 'TLSv1.3'] as const) {
      const withPair = (pair: KeyPair): ConnectionOptions => ({ maxVersion, cert: pair.certPem, key: pair.keyPem });
      const verdict = async (pair: KeyPair): Promise<string> => (await handshake(verifying.port, withPair(pair))).answer.split('\r\n\r\n')[1] ?? '';
      expect(await verdict(pki.client)).toBe('authorized');
      expect((await handshake(verifying.port, { maxVersion })).answer).toMatch(/\r\n\r\nunauthorized: UNABLE_TO_GET_ISSUER_CERT$/);
      expect(await verdict(pki.untrustedClient)).toBe('unauthorized: UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      expect(await verdict(pki.expiredClient)).toBe('unauthorized: CERT_HAS_EXPIRED');
      // The server's own CA is not a client root CA. (The client, trusting that CA itself,
      // sends it along as the chain: OpenSSL then reports the self-signed root.)
      expect(await verdict(signedByServerCA)).toBe('unauthorized: SELF_SIGNED_CERT_IN_CHAIN');

      expect((await handshake(rejecting.port, withPair(pki.client))).protocol).toBe(maxVersion);
      await expect(handshake(rejecting.port, withPair(pki.untrustedClient))).rejects.toThrow();
      await expect(handshake(rejecting.port, withPair(pki.expiredClient))).rejects.toThrow();
      await expect(handshake(rejecting.port, withPair(signedByServerCA))).rejects.toThrow();
    }
  });

  it('serves new material to new connections after setSecureContext', async () => {
    const { server, port } = await startServer(secureContextOptions(materialFor(pki.server, [pki.clientCA.cert])));
    expect(await servedFingerprint(port)).toBe(fingerprintOf(pki.server));

    const rotated = await pki.issue('rotated-server', 'serverCA');
    server.setSecureContext(secureContextOptions(materialFor(rotated, [pki.clientCA.cert])));
    expect(await servedFingerprint(port)).toBe(fingerprintOf(rotated));
    expect((await handshake(port, { maxVersion: 'TLSv1.2' })).fingerprint).toBe(fingerprintOf(rotated));
  });
});
