/**
 * A contract test of the installed hot-shots: what src/metrics/statsd/hot-shots-wire.ts relies
 * on (its header lists it) is there and behaves so. hot-shots is used through one undocumented
 * member, `send(message, tags, callback)`, and through documented options whose exact behaviour
 * the wire depends on (errorHandler, the `stream` protocol, close). When an upgrade of hot-shots
 * changes any of it, a test here fails and names what changed. All traffic on 127.0.0.1.
 */
import dgram from 'node:dgram';
import net, { type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { StatsD } from 'hot-shots';
import { TcpWire, UdpWire } from '../../../src/metrics/statsd/hot-shots-wire';
import { freeTcpPort } from '../../support/ports';
import { waitFor } from '../../support/wait';

/** Several lines as packer.ts packs them: a sampled timing, a negative gauge after its reset, non-ASCII in a bucket name. */
const payload = ['requests.grüße.200:3|c', 'duration.docker:250|ms|@0.5', 'queue.depth:0|g', 'queue.depth:-6|g', 'name.€uro:1|c'].join('\n');

/** hot-shots appends Datadog tags from these when includeDataDogTags is not false. */
const datadogVariables = ['DD_ENTITY_ID', 'DD_ENV', 'DD_SERVICE', 'DD_VERSION'];

async function withDatadogVariables<T>(run: () => Promise<T>): Promise<T> {
  const saved = datadogVariables.map((name) => [name, process.env[name]] as const);
  for (const name of datadogVariables) process.env[name] = `contract-${name.toLowerCase()}`;
  try {
    return await run();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** A UDP daemon stand-in: every datagram, as bytes. */
async function udpReceiver(): Promise<{ port: number; datagrams: Buffer[]; close: () => Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  const datagrams: Buffer[] = [];
  socket.on('message', (message) => datagrams.push(message));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, datagrams, close: () => new Promise((resolve) => socket.close(() => resolve())) };
}

interface TcpReceiver {
  port: number;
  /** Bytes received, per connection accepted. */
  connections: { bytes: () => Buffer; ended: boolean; socket: net.Socket }[];
  close: () => Promise<void>;
}

/** A TCP daemon stand-in: every connection's bytes, and whether the client ended it. */
async function tcpReceiver(): Promise<TcpReceiver> {
  const connections: TcpReceiver['connections'] = [];
  const server = net.createServer((socket) => {
    const chunks: Buffer[] = [];
    const connection = { bytes: () => Buffer.concat(chunks), ended: false, socket };
    connections.push(connection);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      connection.ended = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const connection of connections) connection.socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A wire's send as a promise of its outcome; `synchronous` tells whether it called back before returning. */
function sendAndWait(wire: { send(payload: string, done: (error: Error | null) => void): void }, message: string) {
  let returned = false;
  let synchronous = false;
  const outcome = new Promise<Error | null>((resolve) => {
    wire.send(message, (error) => {
      synchronous = !returned;
      resolve(error);
    });
  });
  returned = true;
  return outcome.then((error) => ({ error, synchronous }));
}

function connected(wire: TcpWire): Promise<void> {
  return new Promise((resolve) => wire.on('connect', resolve));
}

describe('hot-shots: the undocumented member the wire uses', () => {
  test('a client has send(message, tags, callback)', () => {
    const client = new StatsD({ protocol: 'stream', stream: new PassThrough(), maxBufferSize: 0 });
    // Not in hot-shots' types.d.ts: read without a cast to a shape hot-shots does not publish.
    const send: unknown = Reflect.get(client, 'send');
    expect(typeof send).toBe('function');
    expect(Reflect.get(client, 'send')).toHaveLength(3);
  });
});

describe('hot-shots over UDP, as UdpWire uses it', () => {
  let receiver: Awaited<ReturnType<typeof udpReceiver>>;
  beforeEach(async () => {
    receiver = await udpReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  test('send: the payload arrives byte for byte as one datagram (UTF-8, no tags added even with DD_* set); called back after the send', async () => {
    await withDatadogVariables(async () => {
      const errors: Error[] = [];
      const wire = new UdpWire({ host: '127.0.0.1', port: receiver.port, ipv6: false, onError: (error) => errors.push(error) });
      const first = await sendAndWait(wire, payload);
      const second = await sendAndWait(wire, 'second:1|c');
      expect(first).toEqual({ error: null, synchronous: false });
      expect(second).toEqual({ error: null, synchronous: false });
      await waitFor('two datagrams', () => receiver.datagrams.length >= 2, { timeoutMs: 5000, everyMs: 10 });
      // Decoded as UTF-8: equal strings mean equal bytes (a byte that is not UTF-8 would decode to U+FFFD).
      expect(receiver.datagrams.map((d) => d.toString('utf8'))).toEqual([payload, 'second:1|c']);
      await wire.close();
      expect(errors).toEqual([]);
    });
  });

  test("send: a send the socket refuses reaches the send's callback with the socket's error, not errorHandler", async () => {
    const errors: Error[] = [];
    const wire = new UdpWire({ host: '127.0.0.1', port: receiver.port, ipv6: false, onError: (error) => errors.push(error) });
    // Above the 65,507 bytes an IPv4 datagram can carry.
    const { error, synchronous } = await sendAndWait(wire, `big:${'1'.repeat(70_000)}|c`);
    expect(synchronous).toBe(false);
    expect(error?.message).toMatch(/^Error sending hot-shots message: .*EMSGSIZE/);
    await wire.close();
    expect(errors).toEqual([]);
    expect(receiver.datagrams).toEqual([]);
  });

  test('errorHandler gets the error of a UDP socket that cannot be created, during the constructor', () => {
    const errors: Error[] = [];
    const client = new StatsD({
      protocol: 'udp',
      // The wire only passes udp4 or udp6; a bad type is the one way to make creation fail.
      udpSocketOptions: { type: 'udp5' as 'udp4' },
      errorHandler: (error) => errors.push(error),
    });
    expect(client).toBeInstanceOf(StatsD);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/Bad socket type/)]);
  });

  test("errorHandler gets the UDP socket's own errors (none is left without a listener)", async () => {
    const errors: Error[] = [];
    const client = new StatsD({
      protocol: 'udp',
      host: '127.0.0.1',
      port: receiver.port,
      maxBufferSize: 0,
      // The socket binds at its first send; a lookup that fails makes that bind emit 'error' on the socket.
      udpSocketOptions: { type: 'udp4', lookup: (hostname, _options, callback) => callback(new Error(`lookup of ${hostname} refused by the test`), '', 4) },
      errorHandler: (error) => errors.push(error),
    });
    client.increment('probe');
    await waitFor('the socket error', () => errors.length > 0, { timeoutMs: 5000, everyMs: 10 });
    expect(errors[0]?.message).toMatch(/^lookup of .* refused by the test$/);
  });

  test('close(callback) calls back once the socket is closed', async () => {
    const wire = new UdpWire({ host: '127.0.0.1', port: receiver.port, ipv6: false, onError: () => undefined });
    await sendAndWait(wire, 'before_close:1|c');
    await expect(wire.close()).resolves.toBeUndefined();
    await waitFor('the datagram', () => receiver.datagrams.length === 1, { timeoutMs: 5000, everyMs: 10 });
  });
});

describe("hot-shots' stream protocol over a TCP socket of ours, as TcpWire uses it", () => {
  let receiver: TcpReceiver;
  beforeEach(async () => {
    receiver = await tcpReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  test("send: each payload arrives byte for byte with one '\\n' appended (UTF-8, no tags even with DD_* set); called back after the write", async () => {
    await withDatadogVariables(async () => {
      const errors: Error[] = [];
      const wire = new TcpWire({ host: '127.0.0.1', port: receiver.port, onError: (error) => errors.push(error) });
      await connected(wire);
      const first = await sendAndWait(wire, payload);
      const second = await sendAndWait(wire, 'second:1|c');
      expect(first).toEqual({ error: null, synchronous: false });
      expect(second).toEqual({ error: null, synchronous: false });
      const expected = `${payload}\nsecond:1|c\n`;
      await waitFor('both writes', () => receiver.connections[0]?.bytes().toString('utf8').endsWith('second:1|c\n'), { timeoutMs: 5000, everyMs: 10 });
      // Decoded as UTF-8: equal strings mean equal bytes (a byte that is not UTF-8 would decode to U+FFFD).
      expect(receiver.connections[0]?.bytes().toString('utf8')).toBe(expected);
      await wire.close();
      expect(errors).toEqual([]);
    });
  });

  test("send on a connection that failed: the send's callback gets the error", async () => {
    const wire = new TcpWire({ host: '127.0.0.1', port: receiver.port, onError: () => undefined });
    await connected(wire);
    const closed = new Promise<void>((resolve) => wire.on('close', resolve));
    wire.destroy();
    await closed;
    const { error } = await sendAndWait(wire, 'after:1|c');
    expect(error?.message).toMatch(/^Error sending hot-shots message: /);
  });

  test('a refused connection: onError gets the error, then the socket closes', async () => {
    // A port nothing listens on (released at once): the connection is refused.
    const port = await freeTcpPort();
    const errors: Error[] = [];
    const wire = new TcpWire({ host: '127.0.0.1', port, onError: (error) => errors.push(error) });
    await new Promise<void>((resolve) => wire.on('close', resolve));
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/ECONNREFUSED/)]);
  });

  test('close(callback) destroys the stream it was given, then calls back', async () => {
    const stream = new PassThrough();
    const outcome = await new Promise<Error | undefined>((resolve) => new StatsD({ protocol: 'stream', stream, maxBufferSize: 0 }).close(resolve));
    expect(outcome).toBeUndefined();
    expect(stream.destroyed).toBe(true);
  });

  test('TcpWire.close: the daemon sees the connection end', async () => {
    const wire = new TcpWire({ host: '127.0.0.1', port: receiver.port, onError: () => undefined });
    await connected(wire);
    await sendAndWait(wire, 'last:1|c');
    await wire.close();
    await waitFor('the connection ended at the daemon', () => receiver.connections[0]?.ended, { timeoutMs: 5000, everyMs: 10 });
    expect(receiver.connections[0]?.bytes().toString()).toBe('last:1|c\n');
  });

  test('TcpWire.close after the daemon closed the connection resolves (hot-shots would wait for a close that already happened)', async () => {
    const wire = new TcpWire({ host: '127.0.0.1', port: receiver.port, onError: () => undefined });
    await connected(wire);
    const closed = new Promise<void>((resolve) => wire.on('close', resolve));
    await waitFor('the connection at the daemon', () => receiver.connections[0]);
    receiver.connections[0]?.socket.destroy();
    await closed;
    let resolved = false;
    void wire.close().then(() => {
      resolved = true;
    });
    await waitFor('TcpWire.close() to resolve', () => resolved, { timeoutMs: 5000, everyMs: 10 });
  });
});
