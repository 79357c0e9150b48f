/**
 * Benchmark (not a test): what hostile clients cost the operations server.
 *
 *   1. file descriptors the server process holds 11 s after 2,000 TLS connections were opened
 *      that never send a ClientHello (with the default connection cap, and with the cap raised
 *      to 4,096 so that only the handshake limit is at work);
 *   2. time until a `PUT /logspec` declaring `Content-Length: 1073741824` gets its answer, with
 *      the client writing the body as fast as loopback takes it, and how much it managed to write;
 *   3. pipelining flood (issue 18 item 3): 10 connections each writing 1,000 `GET /metrics` at once
 *      and never reading (plain), and 20 x 1,900 `GET /healthz` over TLS without a client
 *      certificate; meanwhile a `/healthz` probe on its own connection every 250 ms for 10 s:
 *      probes answered, their latency, the server's peak RSS and CPU;
 *   4. connection cap (issue 18 item 4): 1,024 sockets that send nothing (then: one byte), each
 *      reopened as soon as the server closes it, for 15 s (plain, then TLS); 20 `/healthz` probes
 *      meanwhile (each given 3 s): how many were answered.
 *
 * `--only flood,cap` runs only those scenarios (names: silent, gib, flood, cap).
 *
 * The server runs in a child process (this file with --serve) so that its descriptors are its own.
 *
 *   cd /work/main && node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build \
 *     && $(scripts/node24.sh) .tmp/bench-build/bench/http-hardening.js
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { OperationsSystem } from '../src/system';
import { testConfig } from '../test/support/config';
import { LogCapture } from '../test/support/log-capture';
import { createTestPki } from '../test/support/pki';

const GiB = 1024 * 1024 * 1024;

interface ServeOptions {
  tls: { certFile: string; keyFile: string; caFile: string } | null;
  maxConnections: number | null;
  /** The prometheus provider, for GET /metrics. */
  metrics?: boolean;
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
  const metrics = options.metrics === true ? { provider: 'prometheus' as const } : {};
  const system = await OperationsSystem.start({ config: testConfig({ operations, metrics }), env: {}, logStream: new LogCapture() });
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

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** User + system CPU seconds of a process so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Probe {
  answered: boolean;
  ms: number;
}

/** One `GET /healthz` on a fresh connection; unanswered after giveUpMs counts as a failure. */
function probe(port: number, useTls: boolean, giveUpMs: number): Promise<Probe> {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    let received = '';
    let done = false;
    const finish = (answered: boolean): void => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ answered, ms: Number(process.hrtime.bigint() - started) / 1e6 });
    };
    const send = (): void => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    };
    const socket: net.Socket = useTls ? tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false }, send) : net.connect(port, '127.0.0.1', send);
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      received += data;
      if (/^HTTP\/1\.1 200 [\s\S]*\r\n\r\n\{/.test(received)) finish(true);
    });
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
    setTimeout(() => finish(false), giveUpMs).unref();
  });
}

function describeProbes(probes: Probe[]): string {
  const answered = probes.filter((p) => p.answered).map((p) => p.ms);
  answered.sort((a, b) => a - b);
  const median = answered[Math.floor(answered.length / 2)] ?? NaN;
  const max = answered[answered.length - 1] ?? NaN;
  return `${answered.length}/${probes.length} probes answered (median ${median.toFixed(1)} ms, max ${max.toFixed(1)} ms)`;
}

/** Connections that pipeline `count` copies of `request` at once and never read an answer. */
async function pipeliningFlood(useTls: boolean, connections: number, count: number, request: string): Promise<void> {
  const { child, port } = await startServer({ tls: useTls ? benchTls : null, maxConnections: null, metrics: !useTls });
  const pid = child.pid ?? 0;
  const idleRss = rssMiB(pid);
  const idleFds = openFds(pid);
  const cpuBefore = cpuSeconds(pid);
  const flood: net.Socket[] = [];
  for (let index = 0; index < connections; index += 1) {
    const payload = request.repeat(count);
    const socket: net.Socket = useTls
      ? tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () => socket.write(payload))
      : net.connect(port, '127.0.0.1', () => socket.write(payload));
    // Never read: the answers pile up wherever the server lets them.
    socket.pause();
    socket.on('error', () => undefined);
    flood.push(socket);
  }
  let peakRss = idleRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMiB(pid))), 100);
  const probes: Array<Promise<Probe>> = [];
  for (let index = 0; index < 40; index += 1) {
    probes.push(probe(port, useTls, 5000));
    await sleep(250);
  }
  const results = await Promise.all(probes);
  clearInterval(sampler);
  const serverFds = openFds(pid) - idleFds;
  const cpu = cpuSeconds(pid) - cpuBefore;
  const label = `${connections} x ${count} pipelined ${request.split(' ')[1] ?? ''} never read (${useTls ? 'TLS, no client certificate' : 'plain'})`;
  console.log(
    `${label}: ${describeProbes(results)} over 10 s; server RSS idle ${idleRss.toFixed(0)} MiB, peak ${peakRss.toFixed(0)} MiB; server CPU ${cpu.toFixed(1)} s; flood connections the server still holds after 10 s: ${serverFds}/${connections}`,
  );
  for (const socket of flood) socket.destroy();
  await stopServer(child);
}

/** 1,024 silent sockets, each reopened when the server closes it, for durationMs; probes meanwhile. */
async function capAttack(useTls: boolean, durationMs: number, oneByte = false): Promise<void> {
  const { child, port } = await startServer({ tls: useTls ? benchTls : null, maxConnections: null });
  const pid = child.pid ?? 0;
  let running = true;
  let opened = 0;
  const open = (): void => {
    if (!running) return;
    opened += 1;
    const socket = net.connect(port, '127.0.0.1', () => {
      // The slowloris variant: one byte of a request (or of a ClientHello), then nothing.
      if (oneByte) socket.write(useTls ? Buffer.from([0x16]) : 'G');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => setImmediate(open));
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const sockets = new Set<net.Socket>();
  for (let index = 0; index < 1024; index += 1) open();
  await sleep(1000);
  const probes: Array<Promise<Probe>> = [];
  const interval = (durationMs - 4000) / 20;
  for (let index = 0; index < 20; index += 1) {
    probes.push(probe(port, useTls, 3000));
    await sleep(interval);
  }
  const results = await Promise.all(probes);
  running = false;
  const rss = rssMiB(pid);
  for (const socket of sockets) socket.destroy();
  console.log(
    `1,024 sockets ${oneByte ? 'sending one byte' : 'sending nothing'}, reopened on close (${useTls ? 'TLS' : 'plain'}, default cap 1024): ${describeProbes(results)}; attacker connections opened ${opened}; server RSS ${rss.toFixed(0)} MiB`,
  );
  await stopServer(child);
}

let benchTls: ServeOptions['tls'] = null;

async function main(): Promise<void> {
  const serveIndex = process.argv.indexOf('--serve');
  if (serveIndex >= 0) {
    await serve(JSON.parse(process.argv[serveIndex + 1] ?? '{}') as ServeOptions);
    return;
  }
  const onlyIndex = process.argv.indexOf('--only');
  const only = onlyIndex >= 0 ? (process.argv[onlyIndex + 1] ?? '').split(',') : ['silent', 'gib', 'flood', 'cap'];
  const pki = await createTestPki();
  try {
    benchTls = { certFile: pki.server.cert, keyFile: pki.server.key, caFile: pki.clientCA.cert };
    if (only.includes('silent')) {
      await silentTls(benchTls, null);
      await silentTls(benchTls, 4096);
    }
    if (only.includes('gib')) await oneGibibyte();
    if (only.includes('flood')) {
      await pipeliningFlood(false, 10, 1000, 'GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await pipeliningFlood(true, 20, 1900, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    }
    if (only.includes('cap')) {
      await capAttack(false, 15_000);
      await capAttack(true, 15_000);
      await capAttack(false, 15_000, true);
      await capAttack(true, 15_000, true);
    }
  } finally {
    await pki.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
