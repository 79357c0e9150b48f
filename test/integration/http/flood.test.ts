import net from 'node:net';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { LogCapture } from '../../support/log-capture';
import { parseResponses, rawExchange } from '../../support/raw-http';
import { delay } from '../../support/wait';

/**
 * Issue 18 item 3: pipelining is bounded. A client that sends many requests ahead of their answers
 * and never reads cannot make the server run them all and hold every answer, nor starve probes.
 * Floods are bounded (a few thousand requests); deadlines are generous and functional.
 */
const metricsRequest = 'GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n';

/** A connection that writes `payload` at once and does not read until `read()` is called. */
function nonReadingClient(port: number, payload: string): { read(): Promise<{ answers: number; closedByServer: boolean }>; destroy(): void } {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(payload));
  socket.pause();
  socket.on('error', () => undefined);
  let received = '';
  let closed = false;
  socket.on('close', () => (closed = true));
  return {
    read: () =>
      new Promise((resolve) => {
        socket.setEncoding('latin1');
        socket.on('data', (data: string) => (received += data));
        const report = (): void => resolve({ answers: parseResponses(received).length, closedByServer: true });
        if (closed) report();
        else socket.once('close', report);
        socket.resume();
        // Still open after this: the server neither closed the connection nor finished.
        setTimeout(() => {
          resolve({ answers: parseResponses(received).length, closedByServer: closed });
          socket.destroy();
        }, 5000).unref();
      }),
    destroy: () => socket.destroy(),
  };
}

async function probe(port: number): Promise<number | undefined> {
  const exchange = await rawExchange(port, { send: 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', giveUpMs: 5000 });
  return exchange.responses[0]?.status;
}

describe('pipelining is bounded', () => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await startOperationsSystem({
      config: testConfig({ metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: new LogCapture(),
      httpLimits: { responseTimeoutMs: 1000 },
    });
  });
  afterAll(async () => system.stop());

  it('5 connections x 1,000 pipelined GET /metrics never read: probes are answered meanwhile; each flood connection is closed after far fewer answers', async () => {
    const flood = Array.from({ length: 5 }, () => nonReadingClient(system.address.port, metricsRequest.repeat(1000)));
    try {
      const probes: Array<number | undefined> = [];
      for (let index = 0; index < 5; index += 1) {
        probes.push(await probe(system.address.port));
        // Spread over the flood, not all at once.
        await delay(100);
      }
      expect(probes).toEqual([200, 200, 200, 200, 200]);
      for (const client of flood) {
        const { answers, closedByServer } = await client.read();
        expect(closedByServer).toBe(true);
        expect(answers).toBeLessThan(200);
      }
    } finally {
      for (const client of flood) client.destroy();
    }
  });

  it('after reading stopped for 40 small pipelined requests, it resumes: 10 more sent after their answers are answered too', async () => {
    const versionRequest = 'GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n';
    const socket = net.connect(system.address.port, '127.0.0.1', () => socket.write(versionRequest.repeat(40)));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('error', () => undefined);
    try {
      const answers = await new Promise<number>((resolve) => {
        let sentMore = false;
        socket.on('data', (data: string) => {
          received += data;
          const count = parseResponses(received).length;
          if (count >= 40 && !sentMore) {
            sentMore = true;
            socket.write(versionRequest.repeat(9) + 'GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
          }
        });
        socket.on('close', () => resolve(parseResponses(received).length));
        setTimeout(() => resolve(parseResponses(received).length), 5000).unref();
      });
      expect(answers).toBe(50);
    } finally {
      socket.destroy();
    }
  });

  it('control: a client that reads gets every answer to 100 pipelined requests, in order', async () => {
    const exchange = await rawExchange(system.address.port, {
      send: 'GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(99) + 'GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
      giveUpMs: 10_000,
    });
    expect(exchange.responses).toHaveLength(100);
    expect(exchange.responses.every((response) => response.status === 200)).toBe(true);
    expect(exchange.gaveUp).toBe(false);
  });
});

describe('a client that does not read is dropped', () => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await startOperationsSystem({
      config: testConfig({ metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: new LogCapture(),
      httpLimits: { responseTimeoutMs: 1000 },
    });
    // A /metrics of about 300 KB, so that unread answers cannot all hide in the kernel's socket buffers.
    const gauge = system.metrics.newGauge({ name: 'test_padding', help: 'padding for a large scrape', labelNames: ['series'] });
    for (let index = 0; index < 3000; index += 1) gauge.with({ series: `series-${index}-${'x'.repeat(60)}` }).set(index);
  });
  afterAll(async () => system.stop());

  it('a client that pipelines 100 GET /metrics and never reads is dropped at the response limit, its answers not all made', async () => {
    const client = nonReadingClient(system.address.port, metricsRequest.repeat(100));
    try {
      // Over the injected 1 s response limit: the answer stuck behind the unread ones is given up.
      await delay(2500);
      expect(await probe(system.address.port)).toBe(200);
      const { answers, closedByServer } = await client.read();
      expect(closedByServer).toBe(true);
      expect(answers).toBeLessThan(100);
    } finally {
      client.destroy();
    }
  });
});

describe('pipelining within the bound loses nothing', () => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await startOperationsSystem({
      config: testConfig({ metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: new LogCapture(),
    });
    const gauge = system.metrics.newGauge({ name: 'test_padding', help: 'padding for a large scrape', labelNames: ['series'] });
    for (let index = 0; index < 3000; index += 1) gauge.with({ series: `series-${index}-${'x'.repeat(60)}` }).set(index);
  });
  afterAll(async () => system.stop());

  it('110 requests ahead of their answers (reading stops at 16 waiting and resumes as they drain): once the client reads, all 110 are answered', async () => {
    const socket = net.connect(system.address.port, '127.0.0.1', () => socket.write(metricsRequest.repeat(10)));
    socket.pause();
    socket.on('error', () => undefined);
    try {
      // Time for the server to answer the first 10 into the unread socket, then to stop reading at 16
      // waiting: a client that does not read sees none of it to poll.
      await delay(300);
      socket.write(metricsRequest.repeat(99) + 'GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      await delay(500);
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (data: string) => (received += data));
      socket.resume();
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        setTimeout(() => resolve(), 20_000).unref();
      });
      const answers = parseResponses(received);
      expect(answers).toHaveLength(110);
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
    } finally {
      socket.destroy();
    }
  });
});
