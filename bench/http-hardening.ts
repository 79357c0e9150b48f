/**
 * Benchmark (not a test): what hostile clients cost the operations server.
 *
 *   1. file descriptors the server process holds 11 s after 2,000 TLS connections were opened
 *      that never send a ClientHello (with the default connection cap, and with the cap raised
 *      to 4,096 so that only the handshake limit is at work);
 *   2. time until a `PUT /logspec` declaring `Content-Length: 1073741824` gets its answer, with
 *      the client writing the body as fast as loopback takes it, and how much it managed to write.
 *
 * The server runs in a child process (this file with --serve) so that its descriptors are its own.
 *
 *   cd /work/main && node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build \
 *     && $(scripts/node24.sh) .tmp/bench-build/bench/http-hardening.js
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { OperationsSystem } from '../src/system';
import { testConfig } from '../test/support/config';
import { LogCapture } from '../test/support/log-capture';
import { createTestPki } from '../test/support/pki';

const GiB = 1024 * 1024 * 1024;

interface ServeOptions {
  tls: { certFile: string; keyFile: string; caFile: string } | null;
  maxConnections: number | null;
}

async function serve(options: ServeOptions): Promise<void> {
  const operations: Record<string, unknown> = {};
  if (options.tls) {
    operations.tls = {
      enabled: true,
      certFile: options.tls.certFile,
      keyFile: options.tls.keyFile,
      clientAuthRequired: false,
      clientRootCAFiles: [options.tls.caFile],
    };
  }
  if (options.maxConnections !== null) operations.maxConnections = options.maxConnections;
  const system = await OperationsSystem.start({ config: testConfig({ operations }), env: {}, logStream: new LogCapture() });
  process.send?.({ port: system.address.port });
  process.on('message', () => {
    void system.stop(0).then(() => process.exit(0));
  });
}

function startServer(options: ServeOptions): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(__filename, ['--serve', JSON.stringify(options)], { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.send('stop');
  });
}

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function silentTls(tls: ServeOptions['tls'], maxConnections: number | null): Promise<void> {
  const { child, port } = await startServer({ tls, maxConnections });
  const pid = child.pid ?? 0;
  const idle = openFds(pid);
  const sockets: net.Socket[] = [];
  let closedByServer = 0;
  for (let index = 0; index < 2000; index += 1) {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('close', () => (closedByServer += 1));
    sockets.push(socket);
    if (index % 200 === 199) await sleep(10);
  }
  await sleep(1000);
  const after1s = openFds(pid);
  await sleep(10_000);
  const after11s = openFds(pid);
  const closedBy11s = closedByServer;
  // Connections the listen backlog could not take at once are accepted later (SYN retries), and get their 10 s from then.
  await sleep(10_000);
  const after21s = openFds(pid);
  const label = maxConnections === null ? 'default cap (1024)' : `cap ${maxConnections}`;
  console.log(
    `2,000 silent TLS connections, ${label}: server fds idle ${idle}, after 1 s ${after1s}, after 11 s ${after11s}, after 21 s ${after21s}; ` +
      `closed by the server after 11 s: ${closedBy11s}, after 21 s: ${closedByServer}`,
  );
  for (const socket of sockets) socket.destroy();
  await stopServer(child);
}

async function oneGibibyte(): Promise<void> {
  const { child, port } = await startServer({ tls: null, maxConnections: null });
  const started = process.hrtime.bigint();
  const result = await new Promise<{ ms: number; status: string; written: number }>((resolve) => {
    let received = '';
    let answeredMs = -1;
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${GiB}\r\n\r\n`);
      const chunk = Buffer.alloc(256 * 1024, 'a');
      let written = 0;
      const pump = (): void => {
        while (!socket.destroyed && written < GiB) {
          written += chunk.length;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      if (answeredMs < 0) answeredMs = Number(process.hrtime.bigint() - started) / 1e6;
      received += data;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ ms: answeredMs, status: received.split('\r\n')[0] ?? '(nothing)', written: socket.bytesWritten }));
    setTimeout(() => socket.destroy(), 60_000).unref();
  });
  console.log(
    `PUT /logspec with Content-Length 1 GiB: answer after ${result.ms.toFixed(1)} ms (${result.status}); the client wrote ${(result.written / 1024 / 1024).toFixed(1)} MiB before the connection closed`,
  );
  await stopServer(child);
}

async function main(): Promise<void> {
  const serveIndex = process.argv.indexOf('--serve');
  if (serveIndex >= 0) {
    await serve(JSON.parse(process.argv[serveIndex + 1] ?? '{}') as ServeOptions);
    return;
  }
  const pki = await createTestPki();
  try {
    const tls = { certFile: pki.server.cert, keyFile: pki.server.key, caFile: pki.clientCA.cert };
    await silentTls(tls, null);
    await silentTls(tls, 4096);
    await oneGibibyte();
  } finally {
    await pki.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
