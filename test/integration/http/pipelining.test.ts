import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type TestPki, serverTls } from '../../support/pki';
import { rawExchange, type RawOptions } from '../../support/raw-http';
import { delay } from '../../support/wait';

/**
 * Issue 18 item 1: once the server has decided to close a connection, nothing more read from it
 * may run. Every case pipelines `PUT /logspec {"spec":"debug"}` behind a request whose answer
 * closes the connection, on a real socket, and checks that the PUT got no answer and changed nothing.
 */
const put = 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 16\r\n\r\n{"spec":"debug"}';
const chunkedOver16KiB = `${`1000\r\n${'a'.repeat(4096)}\r\n`.repeat(5)}0\r\n\r\n`;

/** [what closes the connection, the first request, its expected status] */
const earlyClosePaths: Array<[string, string, number]> = [
  ['two Host headers (400)', 'GET /version HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n', 400],
  ['no Host header (400)', 'GET /version HTTP/1.1\r\n\r\n', 400],
  ['an unknown Expect (417)', 'GET /version HTTP/1.1\r\nHost: localhost\r\nExpect: foo\r\n\r\n', 417],
  ['the client asking Connection: close (200)', 'GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', 200],
  ['HTTP/1.0 without keep-alive (200)', 'GET /version HTTP/1.0\r\n\r\n', 200],
  ['a 404 before a chunked body', 'PUT /no-such-path HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxx\r\n0\r\n\r\n', 404],
  ['a 405 before a chunked body', 'POST /logspec HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxx\r\n0\r\n\r\n', 405],
  ['a 200 before a chunked body', 'GET /version HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxx\r\n0\r\n\r\n', 200],
  ['a 405 before a 100-continue body', 'POST /version HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nxx', 405],
  ['a 200 before a 100-continue body', 'GET /version HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nxx', 200],
  ['a 413 for a Content-Length over 16 KiB', `PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 17000\r\n\r\n${'a'.repeat(17_000)}`, 413],
  ['a 413 for a chunked body over 16 KiB', `PUT /logspec HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n${chunkedOver16KiB}`, 413],
  [
    'a 415 before a chunked body',
    'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxx\r\n0\r\n\r\n',
    415,
  ],
  ['a 400 for a bad chunk', 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n', 400],
  ['a 431 for headers over 16 KiB', `GET /version HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
];

async function expectOnlyTheFirstAnswered(system: OperationsSystem, first: string, status: number, tls?: RawOptions['tls']): Promise<void> {
  const exchange = await rawExchange(system.address.port, { send: first + put, giveUpMs: 5000, tls });
  expect(exchange.responses.map((response) => response.status)).toEqual([status]);
  expect(exchange.responses[0]?.headers.connection).toBe('close');
  // The server closed the connection itself; the client did not have to give up.
  expect(exchange.gaveUp).toBe(false);
  // Give a PUT that was wrongly dispatched the time to run before looking.
  await delay(100);
  expect(system.getLogSpec()).toBe('info');
}

describe('a request pipelined after an answer that closes the connection is not run (plain HTTP)', () => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await startOperationsSystem({ config: testConfig(), env: {}, logStream: new LogCapture() });
  });
  afterAll(async () => system.stop());
  beforeEach(() => system.setLogSpec('info'));

  it.each(earlyClosePaths)('after %s: one answer, the connection closed, the PUT not run', async (_name, first, status) => {
    await expectOnlyTheFirstAnswered(system, first, status);
  });

  it('control: behind a keep-alive answer the pipelined PUT runs and is answered', async () => {
    const exchange = await rawExchange(system.address.port, { send: `GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n${put}`, giveUpMs: 1500 });
    expect(exchange.responses.map((response) => response.status)).toEqual([200, 204]);
    expect(system.getLogSpec()).toBe('debug');
  });

  it('a malformed request behind one still being answered: that one is answered first, then the 400, then the close', async () => {
    const exchange = await rawExchange(system.address.port, {
      send: `GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nNOT HTTP AT ALL\r\n\r\n${put}`,
      giveUpMs: 5000,
    });
    expect(exchange.responses.map((response) => response.status)).toEqual([200, 400]);
    expect(exchange.gaveUp).toBe(false);
    expect(system.getLogSpec()).toBe('info');
  });

  it('control: pipelined answers come back in order, behind a slow first one', async () => {
    const many = Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? 'GET /version' : 'GET /nope') + ' HTTP/1.1\r\nHost: localhost\r\n\r\n').join('');
    const exchange = await rawExchange(system.address.port, { send: `GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n${many}`, giveUpMs: 1500 });
    expect(exchange.responses.map((response) => response.status)).toEqual([200, ...Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? 200 : 404))]);
  });
});

describe('a request pipelined after an answer that closes the connection is not run (TLS)', () => {
  let pki: TestPki;
  let system: OperationsSystem;
  let withCertificate: RawOptions['tls'];
  beforeAll(async () => {
    pki = await createTestPki();
    system = await startOperationsSystem({
      config: testConfig({
        operations: {
          tls: serverTls(pki),
        },
      }),
      env: {},
      logStream: new LogCapture(),
    });
    withCertificate = { ca: pki.serverCA.certPem, cert: pki.client.certPem, key: pki.client.keyPem };
  });
  afterAll(async () => {
    await system.stop();
    await pki.cleanup();
  });
  beforeEach(() => system.setLogSpec('info'));

  it.each(earlyClosePaths.filter(([name]) => /Host|Expect|Connection: close|chunked|100-continue|413|415/.test(name)))(
    'with a client certificate, after %s: one answer, the PUT not run',
    async (_name, first, status) => {
      await expectOnlyTheFirstAnswered(system, first, status, withCertificate);
    },
  );

  it('without a client certificate, after a 401 before a chunked body: one answer, nothing after it answered', async () => {
    const exchange = await rawExchange(system.address.port, {
      tls: { ca: pki.serverCA.certPem },
      send: 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxx\r\n0\r\n\r\nGET /version HTTP/1.1\r\nHost: localhost\r\n\r\n',
      giveUpMs: 5000,
    });
    expect(exchange.responses.map((response) => response.status)).toEqual([401]);
    expect(exchange.gaveUp).toBe(false);
  });

  it('control: with a client certificate, behind a keep-alive answer the pipelined PUT runs', async () => {
    const exchange = await rawExchange(system.address.port, {
      tls: withCertificate,
      send: `GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n${put}`,
      giveUpMs: 1500,
    });
    expect(exchange.responses.map((response) => response.status)).toEqual([200, 204]);
    expect(system.getLogSpec()).toBe('debug');
  });
});
