import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { request } from '../support/http';
import { requireCommand } from '../support/prerequisites';
import { requireBuiltCli, runCli } from '../support/cli';

const samples = path.resolve(__dirname, '../../../shared/fixtures/fabric-sampleconfig');

let tmp: string;
beforeAll(async () => {
  requireBuiltCli();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-cli-'));
});
afterAll(async () => rm(tmp, { recursive: true, force: true }));

describe('fabric-ops command', () => {
  it('--help prints the usage and exits 0', async () => {
    const run = runCli(['--help']);
    expect((await run.exited).code).toBe(0);
    expect(run.stdout()).toMatch(/^Usage: fabric-ops \[--config FILE\] \[--dialect peer\|orderer\]/);
  });

  it('--version prints the version and the commit', async () => {
    const run = runCli(['--version']);
    expect((await run.exited).code).toBe(0);
    const pkg = require('../../package.json') as { version: string };
    expect(run.stdout().trim()).toMatch(new RegExp(`^fabric-ops ${pkg.version.replace(/\./g, '\\.')} \\(commit ([0-9a-f]{40}|unknown)\\)$`));
  });

  it('--list-keys lists the dialect\'s keys with their environment variables', async () => {
    const peer = runCli(['--list-keys']);
    expect((await peer.exited).code).toBe(0);
    expect(peer.stdout()).toMatch(/^operations\.listenAddress {2}\(CORE_OPERATIONS_LISTENADDRESS, string, default 127\.0\.0\.1:9443\)$/m);
    const orderer = runCli(['--list-keys', '--dialect', 'orderer']);
    expect((await orderer.exited).code).toBe(0);
    expect(orderer.stdout()).toMatch(/^Metrics\.Statsd\.WriteInterval {2}\(ORDERER_METRICS_STATSD_WRITEINTERVAL, string, default 30s\)$/m);
  });

  it('an unknown option exits 2 with a one-line reason', async () => {
    const run = runCli(['--bogus']);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toMatch(/^fabric-ops: .*--bogus/);
  });

  it('--dialect with a wrong value exits 2 naming the allowed values', async () => {
    const run = runCli(['--dialect', 'client']);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toBe('fabric-ops: --dialect: must be one of peer, orderer; got "client"\n');
  });

  it('bad configuration exits 2 with one line per problem, each naming its key, and no stack trace', async () => {
    const file = path.join(tmp, 'bad-core.yaml');
    await writeFile(
      file,
      ['operations:', '  listenAddress: "9443"', '  tls:', '    enabled: true', 'metrics:', '  provider: prometeus', ''].join('\n'),
    );
    const run = runCli(['--config', file]);
    expect((await run.exited).code).toBe(2);
    const lines = run.stderr().trim().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringContaining('operations.listenAddress: "9443" is not host:port'),
        expect.stringContaining('operations.tls.cert.file: required when operations.tls.enabled is true'),
        expect.stringContaining('metrics.provider: must be one of prometheus, statsd, disabled; got "prometeus"'),
      ]),
    );
    expect(run.stderr()).not.toMatch(/\n\s+at /);
  });

  it('an unreadable certificate exits 2 naming the key and the path', async () => {
    const file = path.join(tmp, 'missing-cert.yaml');
    await writeFile(
      file,
      ['Operations:', '  ListenAddress: 127.0.0.1:0', '  TLS:', '    Enabled: true', '    Certificate: nothere.crt', '    PrivateKey: nothere.key', '    ClientRootCAs: [nothere-ca.crt]', ''].join('\n'),
    );
    const run = runCli(['--config', file]);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toContain(`Operations.TLS.Certificate: cannot read ${path.join(tmp, 'nothere.crt')}`);
    expect(run.stderr()).not.toMatch(/\n\s+at /);
  });

  it('a missing config file exits 2 naming it', async () => {
    const run = runCli(['--config', path.join(tmp, 'absent.yaml')]);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toContain(path.join(tmp, 'absent.yaml'));
  });

  it('an invalid FABRIC_LOGGING_SPEC exits 2 naming it', async () => {
    const run = runCli([], { FABRIC_LOGGING_SPEC: 'Debug', CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' });
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toContain('FABRIC_LOGGING_SPEC');
    expect(run.stderr()).toContain("bad segment 'Debug'");
  });

  it('runs on the embedded defaults, logs the real URL for port 0, and exits 0 on SIGTERM', async () => {
    const run = runCli([], { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' });
    const url = await run.listening();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    expect((await request(`${url}/logspec`)).json).toEqual({ spec: 'info' });
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(0);
  });

  it('a listen address without a host listens on all interfaces', async () => {
    const run = runCli([], { CORE_OPERATIONS_LISTENADDRESS: ':0' });
    const url = await run.listening();
    const port = new URL(url).port;
    expect((await request(`http://127.0.0.1:${port}/version`)).status).toBe(200);
    expect((await request(`http://[::1]:${port}/version`)).status).toBe(200);
    run.child.kill('SIGINT');
    expect((await run.exited).code).toBe(0);
  });

  it('a port in use exits 1 with one line naming the address', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const run = runCli([], { CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${port}` });
      expect((await run.exited).code).toBe(1);
      expect(run.stderr()).toBe(`fabric-ops: cannot listen on 127.0.0.1:${port}: address already in use\n`);
    } finally {
      blocker.close();
    }
  });

  it("loads Fabric's sample core.yaml unchanged (its vm.endpoint registers the docker checker)", async () => {
    requireCommand('docker');
    const run = runCli(['--config', path.join(samples, 'core.yaml')], { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' });
    const url = await run.listening();
    const health = await request(`${url}/healthz`);
    expect(health.json).toMatchObject({ status: 'OK' });
    expect(health.status).toBe(200);
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(0);
  });

  it("loads Fabric's sample orderer.yaml unchanged, found through FABRIC_CFG_PATH", async () => {
    const run = runCli(['--dialect', 'orderer'], { FABRIC_CFG_PATH: samples, ORDERER_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' });
    const url = await run.listening();
    expect((await request(`${url}/healthz`)).status).toBe(200);
    expect((await request(`${url}/version`)).status).toBe(200);
    expect(run.stdout() + run.stderr()).toContain('orderer.yaml');
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(0);
  });

  it('on SIGTERM stops accepting, lets an in-flight request finish, and exits 0', async () => {
    // A container runtime that accepts and never answers makes /healthz slow (timeout 3s).
    const socketPath = path.join(tmp, 'silent.sock');
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(socketPath, resolve));
    try {
      const run = runCli([], {
        CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
        CORE_OPERATIONS_HEALTHCHECK_TIMEOUT: '3s',
        CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'docker',
        CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_ENDPOINT: `unix://${socketPath}`,
      });
      const url = await run.listening();
      const slow = request(`${url}/healthz`, { timeoutMs: 15_000 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      run.child.kill('SIGTERM');
      const answer = await slow;
      expect(answer.status).toBe(503);
      expect(JSON.stringify(answer.json)).toMatch(/timed out after 3s/);
      expect((await run.exited).code).toBe(0);
      await expect(request(`${url}/version`, { timeoutMs: 2000 })).rejects.toThrow();
    } finally {
      silent.close();
    }
  });
});
