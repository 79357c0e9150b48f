import net from 'node:net';
import { OperationsSystem } from '../../src/system';
import { testConfig } from '../support/config';
import { LogCapture } from '../support/log-capture';

/** Connects, writes `text`, and resolves with everything the server sent until it closed the connection. */
function talk(port: number, text: string): Promise<{ received: string }> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ received }));
    // A safety net far beyond the server's own limits, so a broken limit fails instead of hanging.
    setTimeout(() => socket.destroy(new Error('server kept the connection open for 30 s')), 30_000).unref();
  });
}

describe('server limits: a slow or idle client cannot hold the server', () => {
  let system: OperationsSystem;
  let slowHeaders: Promise<{ received: string }>;
  let slowBody: Promise<{ received: string }>;
  let idle: Promise<{ received: string }>;
  beforeAll(async () => {
    system = await OperationsSystem.start({ config: testConfig(), env: {}, logStream: new LogCapture() });
    const { port } = system.address;
    // The three clients run side by side; each test awaits its own.
    slowHeaders = talk(port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    slowBody = talk(port, 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"spec":');
    idle = talk(port, 'GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n');
  });
  afterAll(async () => system.stop());

  it('answers 408 and closes when the headers do not arrive in time (10 s)', async () => {
    expect((await slowHeaders).received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('answers 408 and closes when the body does not arrive in time, and changes nothing', async () => {
    expect((await slowBody).received).toMatch(/^HTTP\/1\.1 408 /);
    expect(system.getLogSpec()).toBe('info');
  });

  it('closes an idle keep-alive connection after its answer (5 s)', async () => {
    const { received } = await idle;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toMatch(/Keep-Alive: timeout=5/i);
  });
});
