import net from 'node:net';
import { startOperationsSystem, type OperationsSystem } from '../../src/system';
import { testConfig } from '../support/config';
import { LogCapture } from '../support/log-capture';
import { createTestPki, type TestPki, serverTls } from '../support/pki';
import { rawExchange, silentConnection, type RawOptions } from '../support/raw-http';

/**
 * Issue 18 item 4: one client filling operations.maxConnections with connections that send
 * nothing must not shut out probes. The attack here is bounded: `cap` sockets, each reopened when
 * the server closes it, for a few seconds.
 */
function silentAttack(port: number, count: number): { stop(): void; opened(): number } {
  let running = true;
  let opened = 0;
  const sockets = new Set<net.Socket>();
  const open = (): void => {
    if (!running) return;
    opened += 1;
    const socket = net.connect(port, '127.0.0.1');
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      setTimeout(open, 5);
    });
  };
  for (let index = 0; index < count; index += 1) open();
  return {
    stop: () => {
      running = false;
      for (const socket of sockets) socket.destroy();
    },
    opened: () => opened,
  };
}

async function probes(port: number, count: number, tls?: RawOptions['tls']): Promise<Array<number | undefined>> {
  const statuses: Array<number | undefined> = [];
  for (let index = 0; index < count; index += 1) {
    const exchange = await rawExchange(port, { send: 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', giveUpMs: 5000, tls });
    statuses.push(exchange.responses[0]?.status);
    await new Promise((resolve) => setTimeout(resolve, 100));
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
    const attack = silentAttack(system.address.port, cap);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
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
      const idle = [0, 1].map(() => rawExchange(port, { send: 'GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n', giveUpMs: 8000 }));
      await new Promise((resolve) => setTimeout(resolve, 300));
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
    const attack = silentAttack(system.address.port, cap);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await probes(system.address.port, 10, { ca: pki.serverCA.certPem })).toEqual(Array.from({ length: 10 }, () => 200));
      expect(attack.opened()).toBeGreaterThan(cap);
    } finally {
      attack.stop();
    }
  });
});
