import net from 'node:net';
import { clientOf, shareOfOneAddress } from '../../../src/http/connection-cap';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type TestPki, serverTls } from '../../support/pki';
import { parseResponses, rawExchange, silentConnection, type RawOptions } from '../../support/raw-http';
import { delay, waitFor } from '../../support/wait';

interface HoldOptions {
  /** The client's own address (127.0.0.2 ... are this machine's too): another client than the probes'. */
  localAddress?: string;
  /** Written on connect; nothing when absent (a silent connection). */
  head?: string;
  /** Then one byte every this many ms, until the server closes the connection. */
  trickleEveryMs?: number;
  /** Each socket the server closes is opened again after this; default 5 ms. */
  reopenAfterMs?: number;
}

/**
 * Issue 18 item 4 and issue 28 item 7: one client filling operations.maxConnections must not shut
 * out probes. The attack here is bounded: `count` sockets, each reopened when the server closes it,
 * for a few seconds. Records the status line of every answer the attack got.
 */
function holdConnections(port: number, count: number, options: HoldOptions = {}): { stop(): void; opened(): number; connected(): number; answers: string[] } {
  let running = true;
  let opened = 0;
  let connected = 0;
  const answers: string[] = [];
  const sockets = new Set<net.Socket>();
  const open = (): void => {
    if (!running) return;
    opened += 1;
    let trickle: NodeJS.Timeout | undefined;
    let isConnected = false;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: options.localAddress }, () => {
      isConnected = true;
      connected += 1;
      if (options.head !== undefined) socket.write(options.head);
      if (options.trickleEveryMs !== undefined) trickle = setInterval(() => socket.write('a'), options.trickleEveryMs);
    });
    sockets.add(socket);
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => (received += data));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (isConnected) connected -= 1;
      clearInterval(trickle);
      sockets.delete(socket);
      if (received !== '') answers.push(`${received.split('\r\n')[0] ?? ''} ${parseResponses(received)[0]?.body ?? ''}`);
      setTimeout(open, options.reopenAfterMs ?? 5);
    });
  };
  for (let index = 0; index < count; index += 1) open();
  return {
    stop: () => {
      running = false;
      for (const socket of sockets) socket.destroy();
    },
    opened: () => opened,
    connected: () => connected,
    answers,
  };
}

async function probes(port: number, count: number, tls?: RawOptions['tls']): Promise<Array<number | undefined>> {
  const statuses: Array<number | undefined> = [];
  for (let index = 0; index < count; index += 1) {
    const exchange = await rawExchange(port, { send: 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', giveUpMs: 5000, tls });
    statuses.push(exchange.responses[0]?.status);
    // Spread over the attack (which keeps reopening what the server closes), not all at once.
    await delay(100);
  }
  return statuses;
}

const cap = 64;

describe('a full connection cap does not shut out probes (plain HTTP)', () => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await startOperationsSystem({
      config: testConfig({ operations: { maxConnections: cap }, metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: new LogCapture(),
      httpLimits: { firstByteTimeoutMs: 500, readTimeoutMs: 3000 },
    });
  });
  afterAll(async () => system.stop());

  it(`${cap} silent sockets reopened on close: every probe is answered`, async () => {
    const attack = holdConnections(system.address.port, cap);
    try {
      await waitFor('the attack to fill the cap', () => attack.connected() >= cap);
      expect(await probes(system.address.port, 10)).toEqual(Array.from({ length: 10 }, () => 200));
    } finally {
      attack.stop();
    }
  });

  it('a connection that sends nothing is closed at the first-byte limit; one that has begun a request keeps the read limit', async () => {
    const [silent, started] = await Promise.all([
      silentConnection(system.address.port, 10_000),
      rawExchange(system.address.port, { send: 'GET /version HTTP/1.1\r\n', giveUpMs: 10_000 }),
    ]);
    expect(silent.gaveUp).toBe(false);
    expect(silent.closedAfterMs).toBeGreaterThan(400);
    expect(silent.closedAfterMs).toBeLessThan(2500);
    expect(started.responses[0]?.status).toBe(408);
    expect(started.closedAfterMs).toBeGreaterThan(2500);
  });

  it('an idle keep-alive connection makes room for a new one when the cap is full', async () => {
    const small = await startOperationsSystem({ config: testConfig({ operations: { maxConnections: 2 } }), env: {}, logStream: new LogCapture() });
    try {
      const { port } = small.address;
      let answered = 0;
      const idle = [0, 1].map(() =>
        rawExchange(port, {
          send: 'GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n',
          feed: (socket) => {
            socket.once('data', () => (answered += 1));
          },
          giveUpMs: 8000,
        }),
      );
      await waitFor('both keep-alive connections answered (idle now)', () => answered === 2);
      const third = await rawExchange(port, { send: 'GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', giveUpMs: 5000 });
      expect(third.responses[0]?.status).toBe(200);
      // The oldest idle one was closed by the server after its answer, long before its keep-alive ran out.
      const first = await idle[0];
      expect(first?.responses.map((response) => response.status)).toEqual([200]);
      expect(first?.gaveUp).toBe(false);
      expect(first?.closedAfterMs).toBeLessThan(3000);
    } finally {
      await small.stop();
    }
  });
});

/** The head of a PUT /logspec whose 1,000-byte body then comes a byte at a time, or not at all. */
const unfinishedPut = 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n{';
const allAnswered = Array.from({ length: 20 }, () => 200);

/**
 * Issue 28 item 7: connections inside unfinished request bodies, or with requests read and never
 * answered, counted as busy and so were never closed to make room: one client holding every slot
 * that way shut out every probe.
 */
describe('a client holding every connection with a request in progress does not shut out probes', () => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await startOperationsSystem({
      config: testConfig({ operations: { maxConnections: cap }, metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: new LogCapture(),
      // A request read in full and never answered, for the attack that holds answers.
      extensions: [() => ({ path: '/stuck', handler: () => undefined, stop: () => Promise.resolve() })],
    });
  });
  afterAll(async () => system.stop());

  it(`${2 * cap} connections from another address inside unfinished PUT bodies (a byte a second), reopened on close: 20 of 20 probes answered`, async () => {
    const attack = holdConnections(system.address.port, 2 * cap, { localAddress: '127.0.0.2', head: unfinishedPut, trickleEveryMs: 1000 });
    try {
      await waitFor('the attack to fill the cap', () => attack.connected() >= cap);
      expect(await probes(system.address.port, 20)).toEqual(allAnswered);
    } finally {
      attack.stop();
    }
  });

  it(`${2 * cap} connections from another address, each with a request read in full and never answered: 20 of 20 probes answered, the excess refused`, async () => {
    const attack = holdConnections(system.address.port, 2 * cap, { localAddress: '127.0.0.3', head: 'GET /stuck HTTP/1.1\r\nHost: localhost\r\n\r\n' });
    try {
      await waitFor('the attack to fill the cap', () => attack.connected() >= cap);
      expect(await probes(system.address.port, 20)).toEqual(allAnswered);
      // The address holds its share (cap less a sixteenth) and cannot close its own answers in progress.
      const metrics = await rawExchange(system.address.port, { send: 'GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', giveUpMs: 5000 });
      expect(Number(/^operations_connections_refused_total (\d+)$/m.exec(metrics.responses[0]?.body ?? '')?.[1])).toBeGreaterThan(0);
    } finally {
      attack.stop();
    }
  });

  it(`${cap} connections from the probes' own address inside unfinished PUT bodies (sending nothing more), reopened on close: 20 of 20 probes answered; the oldest are answered 408`, async () => {
    const attack = holdConnections(system.address.port, cap, { head: unfinishedPut });
    try {
      await waitFor('the attack to fill the cap', () => attack.connected() >= cap);
      expect(await probes(system.address.port, 20)).toEqual(allAnswered);
      expect(attack.answers.length).toBeGreaterThan(0);
      expect(attack.answers.every((answer) => answer.startsWith('HTTP/1.1 408 ') && answer.includes('every connection (maxConnections) was taken'))).toBe(true);
      expect(system.getLogSpec()).toBe('info');
    } finally {
      attack.stop();
    }
  });

  it('under the cap, a slow upload alone is not cut: its body over 1.5 s, then 204', async () => {
    const body = '{"spec":"debug"}';
    const exchange = await rawExchange(system.address.port, {
      send: `PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      feed: async (socket) => {
        for (const character of body) {
          // A slow upload: one byte every 100 ms.
          await delay(100);
          socket.write(character);
        }
      },
      giveUpMs: 10_000,
    });
    expect(exchange.responses.map((response) => response.status)).toEqual([204]);
    expect(system.getLogSpec()).toBe('debug');
    system.setLogSpec('info');
  });
});

describe('a full connection cap does not shut out probes (TLS)', () => {
  let pki: TestPki;
  let system: OperationsSystem;
  beforeAll(async () => {
    pki = await createTestPki();
    system = await startOperationsSystem({
      config: testConfig({
        operations: {
          maxConnections: cap,
          tls: serverTls(pki),
        },
      }),
      env: {},
      logStream: new LogCapture(),
      httpLimits: { firstByteTimeoutMs: 500 },
    });
  });
  afterAll(async () => {
    await system.stop();
    await pki.cleanup();
  });

  it(`${cap} silent sockets reopened on close: every probe over TLS is answered`, async () => {
    const attack = holdConnections(system.address.port, cap);
    try {
      await waitFor('the attack to fill the cap', () => attack.connected() >= cap);
      expect(await probes(system.address.port, 10, { ca: pki.serverCA.certPem })).toEqual(Array.from({ length: 10 }, () => 200));
      expect(attack.opened()).toBeGreaterThan(cap);
    } finally {
      attack.stop();
    }
  });

  it('every connection inside an unfinished PUT body: a probe closes the oldest, answering it 408 over TLS, and is answered; the newest stays', async () => {
    const small = await startOperationsSystem({
      config: testConfig({ operations: { maxConnections: 2, tls: serverTls(pki) } }),
      env: {},
      logStream: new LogCapture(),
    });
    try {
      const { port } = small.address;
      const operator = { ca: pki.serverCA.certPem, cert: pki.client.certPem, key: pki.client.keyPem };
      // Each pause: time for the server to read that head (a request waiting for its body shows
      // nothing to poll), and the oldest plainly older than the newest.
      const oldest = rawExchange(port, { send: unfinishedPut, giveUpMs: 3000, tls: operator });
      await delay(300);
      const newest = rawExchange(port, { send: unfinishedPut, giveUpMs: 3000, tls: operator });
      await delay(300);
      expect(await probes(port, 1, { ca: pki.serverCA.certPem })).toEqual([200]);
      const closed = await oldest;
      expect(closed.responses.map((response) => [response.status, response.json])).toEqual([
        [408, { error: 'the request body had not arrived when every connection (maxConnections) was taken' }],
      ]);
      expect(closed.gaveUp).toBe(false);
      expect((await newest).gaveUp).toBe(true);
      expect(small.getLogSpec()).toBe('info');
    } finally {
      await small.stop();
    }
  });
});

describe('the client a connection counts against', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['::1', '0:0:0:0::/64'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8::5', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['1:2:3:4:5:6:192.0.2.1', '1:2:3:4::/64'],
  ])('%s counts as %s', (address, client) => {
    expect(clientOf(address)).toBe(client);
  });

  it('one address may hold the cap less a sixteenth (none kept under 16)', () => {
    expect([1, 3, 15, 16, 64, 1024].map(shareOfOneAddress)).toEqual([1, 3, 15, 15, 60, 960]);
  });
});
