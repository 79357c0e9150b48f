import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFile, mkdir, readFile, rename, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../../src/errors';
import { startOperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type TestPki } from '../../support/pki';
import { requireBuiltCli, runCli } from '../../support/cli';
import { requireCommand } from '../../support/prerequisites';
import { delay } from '../../support/wait';

/**
 * Issue 18, items 9 and 10: what sits at a certificate path must never stop the server. A FIFO
 * is refused without being waited on, at start and while watching, and the path is named.
 *
 * A server that opens the FIFO blocking would freeze this very process (the server runs in it),
 * so each test starts a "writer" that opens the FIFO a few seconds later, for a bounded time:
 * without the fix, the test then fails instead of hanging.
 */

let pki: TestPki;
let count = 0;
const writers: ChildProcess[] = [];

beforeAll(async () => {
  requireCommand('mkfifo');
  requireCommand('timeout');
  pki = await createTestPki();
});
afterAll(async () => {
  for (const writer of writers) {
    try {
      if (writer.pid !== undefined) process.kill(-writer.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await pki.cleanup();
});

async function freshDir(name: string): Promise<string> {
  const dir = join(pki.dir, `${name}-${++count}`);
  await mkdir(dir);
  await Promise.all([
    copyFile(pki.server.cert, join(dir, 'tls.crt')),
    copyFile(pki.server.key, join(dir, 'tls.key')),
    copyFile(pki.clientCA.cert, join(dir, 'ca.crt')),
  ]);
  return dir;
}

/** Replaces `path` with a FIFO; a blocked reader of it is let go after `afterSeconds`, and again for a few seconds. */
async function fifoAt(path: string, afterSeconds: number): Promise<void> {
  await rm(path, { force: true });
  execFileSync('mkfifo', [path]);
  // Its own process group, so that afterAll ends the shell and a writer blocked in open() with it.
  const writer = spawn('timeout', ['20', 'sh', '-c', `sleep ${afterSeconds}; while :; do : > "$0"; sleep 0.01; done`, path], {
    stdio: 'ignore',
    detached: true,
  });
  writers.push(writer);
}

function tlsSection(dir: string, caFile = join(dir, 'ca.crt')) {
  return {
    enabled: true,
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
    clientAuthRequired: false,
    clientRootCAFiles: [caFile],
  };
}

describe('a FIFO at a certificate path', () => {
  it('as the client CA file at start: the start fails at once, naming the file and what it is', async () => {
    const dir = await freshDir('fifo-at-start');
    const ca = join(dir, 'ca.crt');
    await fifoAt(ca, 3);
    const started = startOperationsSystem({ config: testConfig({ operations: { tls: tlsSection(dir) } }), logStream: new LogCapture() });
    await expect(started).rejects.toThrow(ConfigError);
    await expect(started).rejects.toThrow(`operations.tls.clientRootCAs.files: cannot read ${ca}: is a FIFO (named pipe), not a regular file`);
  });

  it('as the client CA file of the command: it exits 2 at once with one line naming the key, the file and what it is', async () => {
    requireBuiltCli();
    const dir = await freshDir('fifo-command');
    const ca = join(dir, 'ca.crt');
    await fifoAt(ca, 3);
    const config = join(dir, 'orderer.yaml');
    await writeFile(
      config,
      [
        'Operations:',
        '  ListenAddress: 127.0.0.1:0',
        '  TLS:',
        '    Enabled: true',
        '    Certificate: tls.crt',
        '    PrivateKey: tls.key',
        '    ClientRootCAs: [ca.crt]',
        '',
      ].join('\n'),
    );
    const run = runCli(['--config', config]);
    const killer = setTimeout(() => run.child.kill('SIGKILL'), 20_000);
    try {
      expect((await run.exited).code).toBe(2);
    } finally {
      clearTimeout(killer);
    }
    expect(run.stderr()).toContain(`Operations.TLS.ClientRootCAs: cannot read ${ca}: is a FIFO (named pipe), not a regular file`);
    expect(run.stderr()).not.toMatch(/\n\s+at /);
  });

  it('behind a symlink (as a Kubernetes Secret mount is): refused, naming the path and where it leads', async () => {
    const dir = await freshDir('fifo-behind-symlink');
    const target = join(dir, 'real-ca.crt');
    await fifoAt(target, 3);
    await rm(join(dir, 'ca.crt'));
    await symlink(target, join(dir, 'ca.crt'));
    const started = startOperationsSystem({ config: testConfig({ operations: { tls: tlsSection(dir) } }), logStream: new LogCapture() });
    await expect(started).rejects.toThrow(`cannot read ${join(dir, 'ca.crt')}: is a FIFO (named pipe) (${target}), not a regular file`);
  });

  it.each(['tls.crt', 'ca.crt'])(
    'at a watched path (%s) of the running command: probes keep being answered, the reload is refused once, named and counted',
    async (file) => {
      // The real command in its own process: a server frozen in open() cannot also freeze the
      // clients' timeouts, as it would in this process.
      requireBuiltCli();
      const dir = await freshDir('fifo-watched');
      const config = join(dir, 'orderer.yaml');
      await writeFile(
        config,
        [
          'Operations:',
          '  ListenAddress: 127.0.0.1:0',
          '  TLS:',
          '    Enabled: true',
          '    Certificate: tls.crt',
          '    PrivateKey: tls.key',
          '    ClientRootCAs: [ca.crt]',
          'Metrics:',
          '  Provider: prometheus',
          '',
        ].join('\n'),
      );
      const run = runCli(['--config', config]);
      const path = join(dir, file);
      try {
        const url = await run.listening();
        await fifoAt(path, 8);
        // Probes for 3 s from the moment the FIFO is there (the command polls every second): each
        // must be answered within 3 s. A server blocked in open() answers none before the writer
        // comes, 8 s later.
        const until = Date.now() + 3000;
        while (Date.now() < until) {
          const answer = await request(`${url}/healthz`, { ca: pki.serverCA.certPem, timeoutMs: 3000 });
          expect(answer.status).toBe(200);
          await delay(100);
        }
        const refused = (run.stdout() + run.stderr()).split('\n').filter((line) => line.includes('TLS material not reloaded'));
        expect(refused).toEqual([expect.stringContaining(`cannot read ${path}: is a FIFO (named pipe), not a regular file`)]);
        const metrics = await request(`${url}/metrics`, { ca: pki.serverCA.certPem, client: pki.client });
        expect(metrics.body).toMatch(/^operations_tls_reload_failures_total 1$/m);
      } finally {
        // A regular file again, put in place atomically, before the writer gives up.
        await copyFile(file === 'tls.crt' ? pki.server.cert : pki.clientCA.cert, `${path}.new`);
        await rename(`${path}.new`, path);
        run.child.kill('SIGTERM');
        const killer = setTimeout(() => run.child.kill('SIGKILL'), 15_000);
        await run.exited;
        clearTimeout(killer);
      }
    },
  );
});

/** Bytes this process has read through read(2) and the like, from /proc/self/io. */
async function bytesReadByThisProcess(): Promise<number> {
  const io = await readFile('/proc/self/io', 'utf8');
  return Number(/^rchar: (\d+)$/m.exec(io)?.[1] ?? 'NaN');
}

describe('a 190 MiB file at a watched path', () => {
  it('is refused by its size without being read, once, and probes keep being answered', async () => {
    const dir = await freshDir('huge-ca');
    const logs = new LogCapture();
    const system = await startOperationsSystem({
      config: testConfig({ operations: { tls: tlsSection(dir) }, metrics: { provider: 'prometheus' } }),
      env: { FABRIC_LOGGING_FORMAT: 'json' },
      logStream: logs,
      tlsPollIntervalMs: 50,
    });
    const path = join(dir, 'ca.crt');
    const size = 190 * 1024 * 1024;
    try {
      // A PEM certificate followed by 190 MiB of (sparse) zeros: costs no disk, reads as 190 MiB.
      await writeFile(`${path}.new`, pki.clientCA.certPem);
      await truncate(`${path}.new`, size);
      const before = await bytesReadByThisProcess();
      await rename(`${path}.new`, path);
      // About 20 polls.
      await delay(1000);
      for (let probe = 0; probe < 3; probe += 1) {
        expect((await request(`${system.url}/healthz`, { ca: pki.serverCA.certPem, timeoutMs: 2000 })).status).toBe(200);
      }
      const read = (await bytesReadByThisProcess()) - before;
      // Not even one copy of the file was read (the old watcher read it twice a poll).
      expect(read).toBeLessThan(size);
      const refused = logs.records().filter((r) => typeof r.msg === 'string' && r.msg.startsWith('TLS material not reloaded'));
      expect(refused.map((r) => r.problem)).toEqual([
        expect.stringContaining(`cannot read ${path}: is ${size} bytes, more than the 8388608 bytes (8 MiB) a PEM file may hold`),
      ]);
      const metrics = await request(`${system.url}/metrics`, { ca: pki.serverCA.certPem, client: pki.client });
      expect(metrics.body).toMatch(/^operations_tls_reload_failures_total 1$/m);
    } finally {
      await system.stop();
    }
  });

  it('at start: refused, naming the file, its size and the limit', async () => {
    const dir = await freshDir('huge-ca-at-start');
    const path = join(dir, 'ca.crt');
    await truncate(path, 190 * 1024 * 1024);
    const started = startOperationsSystem({ config: testConfig({ operations: { tls: tlsSection(dir) } }), logStream: new LogCapture() });
    await expect(started).rejects.toThrow(
      `operations.tls.clientRootCAs.files: cannot read ${path}: is ${190 * 1024 * 1024} bytes, more than the 8388608 bytes (8 MiB) a PEM file may hold`,
    );
  });
});
