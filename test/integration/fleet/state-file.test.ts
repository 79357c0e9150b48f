/**
 * Fleet mode's own files and its unauthenticated answers, as an operator and an attacker meet
 * them. The start (the built dist/cli.js) refuses a state directory or file another user could
 * have written, and one that is a FIFO or too large, with one line naming it and at once; the
 * fleet configuration is read as certificates are. Unauthenticated /fleet requests do not grow
 * the log with what they send, and their answers echo nothing of it; a client's subject reaches
 * the log with its control and bidirectional characters escaped.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fleetConfigFrom, fleetExtension } from '../../../src/fleet';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { logUnsafeCharacter } from '../../../src/text';
import { requireBuiltCli, runCli } from '../../support/cli';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, serverTls, type KeyPair, type TestPki } from '../../support/pki';
import { waitFor } from '../../support/wait';
import { fleetServerEnv } from './harness';

jest.setTimeout(120_000);

let pki: TestPki;
let dir: string;
let files = 0;

beforeAll(async () => {
  requireBuiltCli();
  if (process.geteuid?.() !== 0) throw new Error(`these tests give files to another user with chown and must run as root; euid is ${process.geteuid?.()}`);
  pki = await createTestPki();
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-state-file-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await pki?.cleanup();
});

/** A fleet file (one node that is never called: pollInterval 0s) keeping its put-backs in `stateDirectory`. */
function fleetFile(stateDirectory: string): string {
  files += 1;
  const file = path.join(dir, `fleet-${files}.yaml`);
  writeFileSync(
    file,
    [
      `stateDirectory: '${stateDirectory}'`,
      'pollInterval: 0s',
      'groups:',
      `  ops: { tls: { caFiles: ['${pki.serverCA.cert}'], certFile: '${pki.client.cert}', keyFile: '${pki.client.key}' } }`,
      'nodes:',
      "  - { name: ops0, url: 'https://127.0.0.1:1', group: ops }",
      '',
    ].join('\n'),
  );
  return file;
}

/** A new state directory of this user's, 0700. */
function stateDirectory(): string {
  files += 1;
  const state = path.join(dir, `state-${files}`);
  mkdirSync(state, { mode: 0o700 });
  return state;
}

/**
 * Starts the built command in fleet mode on `fleetConfig` and waits (up to 20 s) for it to exit:
 * its exit code and what it wrote. A start that does not end is killed and reported as such.
 */
async function failedStart(fleetConfig: string): Promise<{ code: number | null; stderr: string }> {
  const run = runCli([], fleetServerEnv(pki, fleetConfig));
  const closed = new Promise<number | null>((resolve) => run.child.on('close', (code) => resolve(code)));
  try {
    await waitFor('the fleet start to end', () => run.child.exitCode !== null || run.child.signalCode !== null, {
      timeoutMs: 20_000,
      giveUpIf: () => (/listening on/.test(run.stdout() + run.stderr()) ? `it started instead: ${run.stderr()}` : undefined),
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}; it wrote: ${(run.stdout() + run.stderr()).slice(0, 2000)}`, { cause: error });
  } finally {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  }
  return { code: await closed, stderr: run.stderr() + run.stdout() };
}

describe('the start refuses state and configuration files it cannot trust or read', () => {
  test('a world-writable state directory: exit 2, one line naming it and its mode', async () => {
    const state = stateDirectory();
    chmodSync(state, 0o777);
    const { code, stderr } = await failedStart(fleetFile(state));
    expect(code).toBe(2);
    expect(stderr).toContain(`stateDirectory: ${state} is mode 0777 (writable by its group and others)`);
  });

  test('a state file owned by another user (uid 65534): exit 2, naming the file and its owner', async () => {
    const state = stateDirectory();
    const file = path.join(state, 'fleet-putbacks.json');
    writeFileSync(
      file,
      JSON.stringify({ version: 1, pending: [{ node: 'ops0', previous: 'debug', specs: ['info'], dueAt: Date.now() - 1000, actor: 'O=org1,CN=forged' }] }),
      { mode: 0o600 },
    );
    chownSync(file, 65534, 65534);
    const { code, stderr } = await failedStart(fleetFile(state));
    expect(code).toBe(2);
    expect(stderr).toContain(`stateDirectory: cannot use ${file}: is owned by uid 65534, not by this process's user (uid 0)`);
  });

  test('a FIFO at the state file: the start ends at once (exit 2) with a line naming it, rather than waiting for a writer', async () => {
    const state = stateDirectory();
    const file = path.join(state, 'fleet-putbacks.json');
    execFileSync('mkfifo', ['-m', '0600', file]);
    const { code, stderr } = await failedStart(fleetFile(state));
    expect(code).toBe(2);
    expect(stderr).toContain(`stateDirectory: cannot use ${file}: is a FIFO (named pipe), not a regular file`);
  });

  test('a FIFO at the fleet configuration: the start ends at once (exit 2) with a line naming it', async () => {
    files += 1;
    const file = path.join(dir, `fifo-${files}.yaml`);
    execFileSync('mkfifo', ['-m', '0600', file]);
    const { code, stderr } = await failedStart(file);
    expect(code).toBe(2);
    expect(stderr).toContain(`fleet configuration ${file}: cannot read: is a FIFO (named pipe), not a regular file`);
  });

  test('a 300 MB fleet configuration is refused by its size, before it is read', async () => {
    files += 1;
    const file = path.join(dir, `huge-${files}.yaml`);
    writeFileSync(file, '');
    truncateSync(file, 300 * 1000 * 1000);
    const { code, stderr } = await failedStart(file);
    expect(code).toBe(2);
    expect(stderr).toContain(
      `fleet configuration ${file}: cannot read: is 300000000 bytes, more than the 1048576 bytes (1 MiB) a fleet configuration may hold`,
    );
  });

  test('a put-back due in 1e20 ms and one whose previous spec is not one: exit 2 naming the entry; nothing of the file is quoted', async () => {
    for (const [bad, problem] of [
      [{ dueAt: 1e20 }, /is not a put-back document: pending\.0\.dueAt \(node ops0\): 100000000000000000000 is \d+ days from now/],
      [{ previous: 'bogus=' }, /is not a put-back document: pending\.0\.previous \(node ops0\): not a valid logging specification/],
    ] as const) {
      const state = stateDirectory();
      const file = path.join(state, 'fleet-putbacks.json');
      const entry = { node: 'ops0', previous: 'info', specs: ['debug'], dueAt: Date.now() + 60_000, actor: 'O=org1,CN=operator', ...bad };
      writeFileSync(file, JSON.stringify({ version: 1, pending: [entry] }), { mode: 0o600 });
      const { code, stderr } = await failedStart(fleetFile(state));
      expect(code).toBe(2);
      expect(stderr).toContain(`stateDirectory: ${file} is not a put-back document`);
      expect(stderr).toMatch(problem);
      expect(stderr).not.toContain('bogus=');
    }
  });
});

/** A fleet server in this process (one node, never called), logging as text to `log`. */
async function fleetServer(log: LogCapture, writers: string[] = []): Promise<OperationsSystem> {
  const state = stateDirectory();
  const config = fleetConfigFrom(
    {
      stateDirectory: state,
      pollInterval: '0s',
      writers,
      groups: { ops: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } } },
      nodes: [{ name: 'ops0', url: 'https://127.0.0.1:1', group: 'ops' }],
    },
    path.join(state, 'fleet.yaml'),
  );
  return startOperationsSystem({ config: testConfig({ operations: { tls: serverTls(pki) } }), logStream: log, extensions: [fleetExtension(config)] });
}

describe('unauthenticated /fleet requests', () => {
  test('2,000 requests with 15 KB paths and no client certificate: each answered 401 without its path; the log stays bounded', async () => {
    const log = new LogCapture();
    const system = await fleetServer(log);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 4, ca: pki.serverCA.certPem, servername: 'localhost' });
    const marker = 'Z'.repeat(15_000);
    const target = new URL(system.url);
    const get = (index: number): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = https.request({ host: target.hostname, port: target.port, path: `/fleet/healthz/${index}/${marker}`, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
    const linesBefore = log.lines.length;
    const started = Date.now();
    const answers: Array<{ status: number; body: string }> = [];
    try {
      // 8 at a time, 2,000 in all.
      for (let next = 0; next < 2_000; next += 8) answers.push(...(await Promise.all(Array.from({ length: 8 }, (_, k) => get(next + k)))));
    } finally {
      agent.destroy();
      await system.stop();
    }
    const elapsedMs = Date.now() - started;
    expect(answers).toHaveLength(2_000);
    expect(answers.filter((answer) => answer.status !== 401)).toEqual([]);
    expect(answers.filter((answer) => answer.body.includes('ZZZZ') || answer.body.includes('/healthz/'))).toEqual([]);
    expect(JSON.parse(answers[0]!.body)).toEqual({ error: 'a client certificate issued by a trusted client CA is required for /fleet' });

    const lines = log.lines.slice(linesBefore);
    const warnings = lines.filter((line) => line.includes('fleet: client certificate required'));
    // At most ten in any ten seconds: one window per started ten seconds of the flood.
    const windows = Math.floor(elapsedMs / 10_000) + 1;
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(10 * windows);
    for (const line of warnings) {
      expect(line.length).toBeLessThan(600);
      expect(line).toMatch(/ path="?\/fleet\/healthz\/\d+\/Z+\.\.\. \(\d+ characters\)"? /);
    }
    // Every line the flood caused, whatever logger wrote it: bounded by the windows, not by the 30 MB sent.
    const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
    expect(bytes).toBeLessThan(10 * windows * 600 + 4096);
  });
});

const execFileAsync = promisify(execFile);

/** A client certificate issued by `ca` whose subject is `/O=fabric-ops tests/CN=<commonName>` in UTF-8 (openssl -utf8). */
async function clientWithName(name: string, commonName: string, ca: KeyPair): Promise<KeyPair> {
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const cert = path.join(dir, `${name}.crt`);
  const ext = path.join(dir, `${name}.ext`);
  writeFileSync(ext, '[ext]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
  const subject = `/O=fabric-ops tests/CN=${commonName}`;
  await execFileAsync('openssl', [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-utf8',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    subject,
  ]);
  const serial = `0x${Buffer.from(name).toString('hex').slice(0, 30)}`;
  await execFileAsync('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-set_serial',
    serial,
    '-days',
    '2',
    '-sha256',
    '-extfile',
    ext,
    '-extensions',
    'ext',
    '-out',
    cert,
  ]);
  return { cert, key, certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

describe('a client subject holding U+202E (RIGHT-TO-LEFT OVERRIDE: CN=admin<U+202E>gnp.exe shows as CN=adminexe.png)', () => {
  const commonName = 'admin\u202Egnp.exe';
  const escaped = 'CN=admin\\u202egnp.exe';

  test('refused at the handshake (an untrusted CA): the report names the subject with \\u202e, never the character', async () => {
    const client = await clientWithName('bidi-untrusted', commonName, pki.untrustedCA);
    const log = new LogCapture();
    const system = await fleetServer(log);
    try {
      const refused = await request(`${system.url}/fleet/healthz`, { ca: pki.serverCA.certPem, client }).then(
        (answer) => `answered ${answer.status}`,
        (error: unknown) => `refused: ${(error as Error).message}`,
      );
      expect(refused).toMatch(/^refused: /);
      await waitFor('the refused certificate report', () => log.lines.find((line) => line.includes('client certificate refused')));
    } finally {
      await system.stop();
    }
    const report = log.lines.find((line) => line.includes('client certificate refused'));
    expect(report).toContain(escaped);
    expect(log.lines.filter((line) => logUnsafeCharacter.test(line))).toEqual([]);
  });

  test('a trusted client that is not a writer: the PUT /logspec audit line and the fleet refusal carry no raw control or bidi character', async () => {
    const client = await clientWithName('bidi-trusted', commonName, pki.clientCA);
    const log = new LogCapture();
    const system = await fleetServer(log, ['O=fabric-ops tests,CN=operator']);
    try {
      const fleetWrite = await request(`${system.url}/fleet/logspec`, {
        method: 'PUT',
        ca: pki.serverCA.certPem,
        client,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ spec: 'debug', selector: {} }),
      });
      expect(fleetWrite.status).toBe(403);
      const ownWrite = await request(`${system.url}/logspec`, {
        method: 'PUT',
        ca: pki.serverCA.certPem,
        client,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ spec: 'gossip=debug:info' }),
      });
      expect(ownWrite.status).toBe(204);
    } finally {
      await system.stop();
    }
    expect(log.lines.filter((line) => line.includes('fleet: write refused'))).toHaveLength(1);
    const audit = log.lines.filter((line) => line.includes("logging specification changed from 'info' to 'gossip=debug:info'"));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toContain(escaped);
    expect(log.lines.filter((line) => logUnsafeCharacter.test(line))).toEqual([]);
  });
});
