import net from 'node:net';
import type { CheckResult } from '../../../src/health/types';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { LogCapture } from '../../support/log-capture';
import { rawExchange } from '../../support/raw-http';
import { delay, waitFor } from '../../support/wait';

/** Connects, writes `text`, and resolves with everything the server sent until it closed the connection. */
function talk(port: number, text: string): Promise<{ received: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let received = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ received, closedAfterMs: Date.now() - started }));
    // A safety net far beyond the limits under test, so a broken limit fails instead of hanging.
    setTimeout(() => socket.destroy(new Error('server kept the connection open for 15 s')), 15_000).unref();
  });
}

/**
 * The limits are injected (StartOptions.httpLimits) as Fabric's server takes its timeouts, so these
 * tests use limits of a fraction of a second instead of waiting out the real 10 s ones.
 */
describe('server limits: a slow or idle client cannot hold the server', () => {
  let system: OperationsSystem;
  let never: () => void = () => undefined;
  const logs = new LogCapture();
  beforeAll(async () => {
    system = await startOperationsSystem({
      config: testConfig({ health: { timeoutMs: 60_000 }, metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: logs,
      httpLimits: { readTimeoutMs: 600, keepAliveTimeoutMs: 1000, responseTimeoutMs: 1500 },
    });
    system.registerChecker('stuck', { check: () => new Promise<CheckResult>((resolve) => (never = () => resolve({ ok: true }))) });
  });
  afterAll(async () => {
    never();
    await system.stop();
  });
  const scrape = async (): Promise<string> =>
    (await rawExchange(system.address.port, { send: 'GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', giveUpMs: 5000 })).responses[0]
      ?.body ?? '';
  /** How many /healthz answers the requests metric counts as 503. */
  const givenUp = (metrics: string): number => Number(/^operations_requests_total\{route="\/healthz",code="503"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);

  it('answers 408 and closes when the headers do not arrive in time', async () => {
    const { received, closedAfterMs } = await talk(system.address.port, 'GET /version HTTP/1.1\r\nHost: localhost\r\n');
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(received).toContain('within 0.6s');
    expect(closedAfterMs).toBeLessThan(5000);
  });

  it('answers 408 and closes when the body does not arrive in time, and changes nothing', async () => {
    const { received } = await talk(system.address.port, 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"spec":');
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(system.getLogSpec()).toBe('info');
  });

  it('closes an idle keep-alive connection after its answer, and says so in Keep-Alive', async () => {
    const { received, closedAfterMs } = await talk(system.address.port, 'GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n');
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toMatch(/Keep-Alive: timeout=1\b/i);
    expect(closedAfterMs).toBeLessThan(5000);
  });

  it('gives up a response not started within the response timeout: 503, logged and counted once', async () => {
    const before = givenUp(await scrape());
    const exchange = await rawExchange(system.address.port, { send: 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n', giveUpMs: 5000 });
    expect(exchange.responses[0]?.status).toBe(503);
    expect(exchange.responses[0]?.json).toEqual({ error: 'no response within 1.5s' });
    expect(logs.matching(/response took too long; giving up.*path=\/healthz/)).not.toHaveLength(0);
    expect(givenUp(await scrape())).toBe(before + 1);
  });

  it('on a keep-alive connection each request has the whole limit, however long after the one before it starts', async () => {
    // The limit is one timer per connection, re-armed at each request's start: the second request
    // here starts 0.6 s after the first (within the 1 s keep-alive limit) and must still get 1.5 s
    // of its own, not the 0.9 s left of the first one's.
    const socket = net.connect(system.address.port, '127.0.0.1');
    socket.setEncoding('utf8');
    let received = '';
    socket.on('data', (chunk: string) => (received += chunk));
    try {
      socket.write('GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await waitFor('the answer to GET /version', () => /^HTTP\/1\.1 200 /.test(received), { timeoutMs: 5000 });
      await delay(600);
      const sent = Date.now();
      socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await waitFor('the 503 to GET /healthz', () => /HTTP\/1\.1 503 /.test(received), { timeoutMs: 5000 });
      expect(Date.now() - sent).toBeGreaterThanOrEqual(1400);
    } finally {
      socket.destroy();
    }
  });
});

describe('server limits: the body limit is injectable too', () => {
  it('a body over an injected maxBodyBytes is refused with 413 naming that limit', async () => {
    const system = await startOperationsSystem({ config: testConfig(), env: {}, logStream: new LogCapture(), httpLimits: { maxBodyBytes: 10 } });
    try {
      const exchange = await rawExchange(system.address.port, {
        send: 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 16\r\n\r\n{"spec":"debug"}',
        giveUpMs: 5000,
      });
      expect(exchange.responses[0]?.status).toBe(413);
      expect(exchange.responses[0]?.json).toEqual({ error: 'request body is larger than 10 bytes' });
      expect(system.getLogSpec()).toBe('info');
    } finally {
      await system.stop();
    }
  });

  it('a limit that is not a whole positive number is refused at start, naming it', async () => {
    await expect(startOperationsSystem({ config: testConfig(), env: {}, logStream: new LogCapture(), httpLimits: { readTimeoutMs: 0 } })).rejects.toThrow(
      /httpLimits\.readTimeoutMs must be a whole number from 1 to 2147483647; got 0/,
    );
  });
});
