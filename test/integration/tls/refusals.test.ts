import tls from 'node:tls';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type KeyPair, type TestPki, serverTls } from '../../support/pki';
import { rawExchange } from '../../support/raw-http';
import { waitFor } from '../../support/wait';

/** Issue 21 item 14: refused handshakes are logged (rate-limited) in both client-auth modes. */
function handshake(port: number, ca: string, client?: KeyPair): Promise<'refused' | 'served'> {
  return new Promise((resolve) => {
    const socket = tls.connect({ port, host: '127.0.0.1', ca, servername: 'localhost', cert: client?.certPem, key: client?.keyPem }, () =>
      socket.write('GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
    );
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => (received += data));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received.startsWith('HTTP/1.1 200') ? 'served' : 'refused'));
    setTimeout(() => socket.destroy(), 5000).unref();
  });
}

/** The "client certificate refused" warnings, once there are at least `count`. */
function refusals(logs: LogCapture, count: number): Promise<Array<Record<string, unknown>>> {
  return waitFor(`${count} "client certificate refused" warnings`, () => {
    const found = logs.records().filter((record) => record.msg === 'client certificate refused');
    return found.length >= count && found;
  });
}

describe.each([true, false])('refused client certificates are logged (clientAuthRequired: %s)', (clientAuthRequired) => {
  let pki: TestPki;
  let system: OperationsSystem;
  let logs: LogCapture;
  beforeAll(async () => {
    pki = await createTestPki();
    logs = new LogCapture();
    system = await startOperationsSystem({
      config: testConfig({
        operations: {
          tls: serverTls(pki, clientAuthRequired),
        },
      }),
      env: { FABRIC_LOGGING_FORMAT: 'json' },
      logStream: logs,
    });
  });
  afterAll(async () => {
    await system.stop();
    await pki.cleanup();
  });

  it('an untrusted certificate: refused, and a warning names the address and the reason', async () => {
    expect(await handshake(system.address.port, pki.serverCA.certPem, pki.untrustedClient)).toBe('refused');
    const [record] = await refusals(logs, 1);
    expect(record).toEqual(
      expect.objectContaining({ levelName: 'warn', remoteAddress: expect.stringContaining('127.0.0.1'), reason: expect.stringMatching(/[A-Z_]{8,}/) }),
    );
    if (!clientAuthRequired) expect(record?.subject).toEqual(expect.stringContaining('CN=intruder'));
  });

  if (clientAuthRequired) {
    it('no certificate at all: refused by the handshake, and a warning says so', async () => {
      const before = (await refusals(logs, 0)).length;
      expect(await handshake(system.address.port, pki.serverCA.certPem)).toBe('refused');
      const after = (await refusals(logs, before + 1)).slice(before);
      expect(after).toEqual([expect.objectContaining({ remoteAddress: expect.stringContaining('127.0.0.1'), reason: 'no client certificate presented' })]);
    });
  }

  it('a client retrying in a loop: at most 10 warnings in 10 s (the next one says how many were not logged)', async () => {
    const before = (await refusals(logs, 0)).length;
    for (let attempt = 0; attempt < 30; attempt += 1) await handshake(system.address.port, pki.serverCA.certPem, pki.untrustedClient);
    const logged = (await refusals(logs, before)).length - before;
    expect(logged).toBeGreaterThan(0);
    expect(before + logged).toBeLessThanOrEqual(10);
  });

  it('a trusted client is served and not logged', async () => {
    const before = (await refusals(logs, 0)).length;
    expect(await handshake(system.address.port, pki.serverCA.certPem, pki.client)).toBe('served');
    expect((await refusals(logs, 0)).length).toBe(before);
  });
});

describe('405: the message lists the methods Allow lists (issue 21 item 17)', () => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await startOperationsSystem({ config: testConfig(), env: {}, logStream: new LogCapture() });
  });
  afterAll(async () => system.stop());

  it.each([
    ['POST /healthz', 'GET, HEAD, OPTIONS'],
    ['DELETE /version', 'GET, HEAD, OPTIONS'],
    ['POST /logspec', 'GET, HEAD, PUT, OPTIONS'],
  ])('%s', async (requestLine, methods) => {
    const exchange = await rawExchange(system.address.port, {
      send: `${requestLine} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      giveUpMs: 5000,
    });
    expect(exchange.responses[0]?.status).toBe(405);
    expect(exchange.responses[0]?.headers.allow).toBe(methods);
    expect(exchange.responses[0]?.json).toEqual({ error: expect.stringMatching(new RegExp(`; allowed: ${methods}$`)) });
  });
});
