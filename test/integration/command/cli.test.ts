import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import packageJson from '../../../package.json';
import { request } from '../../support/http';
import { requireCommand } from '../../support/prerequisites';
import { cliPath, requireBuiltCli, runCli } from '../../support/cli';
import { createTestPki, type TestPki } from '../../support/pki';
import { waitFor } from '../../support/wait';

const samples = path.resolve(__dirname, '../../../../shared/fixtures/fabric-sampleconfig');

let tmp: string;
let pki: TestPki;
beforeAll(async () => {
  requireBuiltCli();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-cli-'));
  pki = await createTestPki();
});
afterAll(async () => {
  await pki?.cleanup();
  await rm(tmp, { recursive: true, force: true });
});

describe('fabric-ops command', () => {
  it('--help prints the usage and exits 0', async () => {
    const run = runCli(['--help']);
    expect((await run.exited).code).toBe(0);
    expect(run.stdout()).toMatch(/^Usage: fabric-ops \[--config FILE\] \[--dialect peer\|orderer\]/);
  });

  it('--version prints the version and the commit', async () => {
    const run = runCli(['--version']);
    expect((await run.exited).code).toBe(0);
    expect(run.stdout().trim()).toMatch(new RegExp(`^fabric-ops ${packageJson.version.replace(/\./g, '\\.')} \\(commit ([0-9a-f]{40}|unknown)\\)$`));
  });

  it("--list-keys lists the dialect's keys with their environment variables", async () => {
    const peer = runCli(['--list-keys']);
    expect((await peer.exited).code).toBe(0);
    expect(peer.stdout()).toMatch(/^operations\.listenAddress {2}\(CORE_OPERATIONS_LISTENADDRESS, string, default 127\.0\.0\.1:9443\)$/m);
    const orderer = runCli(['--list-keys', '--dialect', 'orderer']);
    expect((await orderer.exited).code).toBe(0);
    expect(orderer.stdout()).toMatch(/^Metrics\.Statsd\.WriteInterval {2}\(ORDERER_METRICS_STATSD_WRITEINTERVAL, duration, default 30s\)$/m);
    expect(orderer.stdout()).toMatch(/^Operations\.MaxConnections {2}\(ORDERER_OPERATIONS_MAXCONNECTIONS, integer, default 1024\)$/m);
    expect(peer.stdout()).toMatch(
      /^operations\.kubernetes\.events\.certificateExpiryWarningDays {2}\(CORE_OPERATIONS_KUBERNETES_EVENTS_CERTIFICATEEXPIRYWARNINGDAYS, integer, default 30\)$/m,
    );
    expect(peer.stdout()).toContain('counted in `operations_connections_refused_total`');
    expect(peer.stdout()).not.toMatch(/operations_connections_refused(?!_total)/);
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
    await writeFile(file, ['operations:', '  listenAddress: "9443"', '  tls:', '    enabled: true', 'metrics:', '  provider: prometeus', ''].join('\n'));
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

  it('a duration past the longest Node.js timer exits 2 naming the key, the variable and the limit', async () => {
    const run = runCli([], { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', CORE_OPERATIONS_HEALTHCHECK_TIMEOUT: '597h' });
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toBe(
      'fabric-ops: operations.healthCheck.timeout (from CORE_OPERATIONS_HEALTHCHECK_TIMEOUT): must be at most 596h31m23.647s (2147483647 ms, the longest delay a Node.js timer can hold); got "597h"\n',
    );
  });

  it('a 100 KB environment value is quoted bounded: one short line naming the variable', async () => {
    const run = runCli([], { CORE_OPERATIONS_LISTENADDRESS: 'z'.repeat(100_000) });
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toBe(
      `fabric-ops: operations.listenAddress (from CORE_OPERATIONS_LISTENADDRESS): "${'z'.repeat(64)}"... (100000 characters) is not host:port\n`,
    );
  });

  it('a config file that is not UTF-8 exits 2 naming the file, the byte and the line', async () => {
    const file = path.join(tmp, 'latin1-core.yaml');
    await writeFile(file, Buffer.concat([Buffer.from('operations:\n  listenAddress: 127.0.0.1:0\n# caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    const run = runCli(['--config', file]);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toBe(
      `fabric-ops: config file ${file}: not valid UTF-8 at byte 46 (line 3, column 6): byte 0xe9; Fabric refuses such a file, and reading it would turn the bytes into U+FFFD\n`,
    );
  });

  it('--config naming a file that is not a configuration (a passwd file) exits 2 with one short line naming that path', async () => {
    const file = path.join(tmp, 'passwd');
    const passwd = Array.from({ length: 5000 }, (_, i) => `user${i}:x:${1000 + i}:${1000 + i}::/home/user${i}:/bin/sh`).join('\n');
    await writeFile(file, `${passwd}\n`);
    for (const args of [
      ['--config', file, '--dialect', 'peer'],
      ['--config', file, '--dialect', 'orderer'],
      ['--config', file],
    ]) {
      const run = runCli(args);
      expect((await run.exited).code).toBe(2);
      const lines = run.stderr().trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(file);
      expect(lines[0]).not.toMatch(/core\.yaml:|orderer\.yaml:/);
      expect(lines[0]?.length).toBeLessThan(400);
    }
  });

  it('--config naming a file that is not YAML at all exits 2 with a bounded number of short lines', async () => {
    const file = path.join(tmp, 'services');
    // Like /etc/services: comments, blank lines, tab-separated columns (hundreds of YAML errors).
    const services = Array.from(
      { length: 1000 },
      (_, i) => `# comment ${i}\ntcpmux\t\t1/tcp\necho\t\t7/tcp\necho\t\t7/udp\ndiscard\t\t9/tcp\t\tsink null\n`,
    ).join('\n');
    await writeFile(file, `${services}\n`);
    const run = runCli(['--config', file]);
    expect((await run.exited).code).toBe(2);
    const lines = run.stderr().trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(2);
    for (const line of lines) {
      expect(line).toContain(file);
      expect(line.length).toBeLessThan(400);
    }
  });

  it('a typo under a section only fabric-ops reads exits 2 naming the key and the right spelling', async () => {
    const file = path.join(tmp, 'typo-core.yaml');
    await writeFile(file, 'operations:\n  listenAddress: 127.0.0.1:0\n  healthCheck:\n    timout: 1s\n');
    const run = runCli(['--config', file]);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toBe(
      `fabric-ops: config file ${file}: unknown key "operations.healthCheck.timout" in operations.healthCheck, a section only fabric-ops reads; did you mean operations.healthCheck.timeout?\n`,
    );
  });

  it('a misspelt variable under a section only fabric-ops reads exits 2 naming it and the variable meant', async () => {
    const run = runCli([], { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', CORE_OPERATIONS_HEALTHCHECK_TIMOUT: '1s' });
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toBe(
      'fabric-ops: "CORE_OPERATIONS_HEALTHCHECK_TIMOUT": names no key of a section only fabric-ops reads; did you mean CORE_OPERATIONS_HEALTHCHECK_TIMEOUT?\n',
    );
  });

  it('a near miss of a key Fabric also reads starts with a warning naming it; Fabric sample files start without one', async () => {
    const file = path.join(tmp, 'near-miss-core.yaml');
    await writeFile(file, 'operations:\n  listenAdress: 127.0.0.1:1\n');
    const run = runCli(['--config', file], { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' });
    await run.listening();
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(0);
    const warnings = run
      .stderr()
      .split('\n')
      .filter((line) => /WARN/i.test(line) && line.includes('unknown key'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      `config file ${file}: unknown key "operations.listenAdress" is ignored (Fabric ignores it too); did you mean operations.listenAddress?`,
    );
    const sample = runCli(['--config', path.join(samples, 'core.yaml')], { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', CORE_VM_ENDPOINT: '' });
    await sample.listening();
    sample.child.kill('SIGTERM');
    expect((await sample.exited).code).toBe(0);
    expect(sample.stderr()).not.toContain('unknown key');
  });

  it('an unreadable certificate exits 2 naming the key and the path', async () => {
    const file = path.join(tmp, 'missing-cert.yaml');
    await writeFile(
      file,
      [
        'Operations:',
        '  ListenAddress: 127.0.0.1:0',
        '  TLS:',
        '    Enabled: true',
        '    Certificate: nothere.crt',
        '    PrivateKey: nothere.key',
        '    ClientRootCAs: [nothere-ca.crt]',
        '',
      ].join('\n'),
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

  it('an IPv6 address (bound first, src/http/listen.ts) and a host name (looked up) listen where they say', async () => {
    const v6 = runCli([], { CORE_OPERATIONS_LISTENADDRESS: '[::1]:0' });
    const v6Url = await v6.listening();
    expect(v6Url).toMatch(/^http:\/\/\[::1\]:[1-9]\d*$/);
    expect((await request(`${v6Url}/version`)).status).toBe(200);
    // ::1 only: IPv4 loopback is not served on that port.
    await expect(request(`http://127.0.0.1:${new URL(v6Url).port}/version`)).rejects.toThrow(/ECONNREFUSED/);
    v6.child.kill('SIGTERM');
    expect((await v6.exited).code).toBe(0);
    const named = runCli([], { CORE_OPERATIONS_LISTENADDRESS: 'localhost:0' });
    const namedUrl = await named.listening();
    expect((await request(`${namedUrl}/version`)).status).toBe(200);
    named.child.kill('SIGTERM');
    expect((await named.exited).code).toBe(0);
  });

  it('an address this machine does not have, or a name that does not resolve, exits 1 with one line saying so', async () => {
    const absent = runCli([], { CORE_OPERATIONS_LISTENADDRESS: '192.0.2.1:9443' });
    expect((await absent.exited).code).toBe(1);
    expect(absent.stderr()).toBe('fabric-ops: cannot listen on 192.0.2.1:9443: address not available on this machine\n');
    const unknown = runCli([], { CORE_OPERATIONS_LISTENADDRESS: 'no-such-host.invalid:9443' });
    expect((await unknown.exited).code).toBe(1);
    expect(unknown.stderr()).toBe('fabric-ops: cannot listen on no-such-host.invalid:9443: host not found\n');
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
    // The /healthz check's GET /_ping, not the start's GET /version (which also connects).
    let pinged = false;
    const silent = net.createServer((socket) => {
      socket.on('data', (chunk: Buffer) => {
        if (chunk.toString('latin1').startsWith('GET /_ping')) pinged = true;
      });
    });
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
      await waitFor('the /healthz check to ping the runtime (the request in flight)', () => pinged);
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

  it('an empty CORE_OPERATIONS_TLS_ENABLED= is read as unset: HTTPS as the file says, and one warning naming the variable and saying TLS stays', async () => {
    const file = path.join(tmp, 'empty-env-core.yaml');
    await writeFile(
      file,
      [
        'operations:',
        '  listenAddress: 127.0.0.1:0',
        '  tls:',
        '    enabled: true',
        `    cert: { file: ${pki.server.cert} }`,
        `    key: { file: ${pki.server.key} }`,
        `    clientRootCAs: { files: [${pki.clientCA.cert}] }`,
        'metrics:',
        '  provider: prometheus',
        '',
      ].join('\n'),
    );
    const run = runCli(['--config', file], { CORE_OPERATIONS_TLS_ENABLED: '', CORE_METRICS_PROVIDER: '' });
    try {
      const url = await run.listening();
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect((await request(`${url}/metrics`, { ca: pki.serverCA.certPem, client: pki.client })).status).toBe(200);
      const warnings = run
        .stderr()
        .split('\n')
        .filter((line) => line.includes('is set but empty'));
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toContain(
        `CORE_OPERATIONS_TLS_ENABLED is set but empty: read as unset (Fabric 2.5's rule), so the value of operations.tls.enabled in ${file} ("true") is used; TLS stays as the file sets it; Fabric 3.x's peer would apply the empty value`,
      );
      expect(warnings[1]).toContain(`CORE_METRICS_PROVIDER is set but empty: read as unset (Fabric 2.5's rule), so the value of metrics.provider in ${file}`);
      expect(warnings[1]).not.toContain('TLS');
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  });

  it('a YAML merge key in tls: turns TLS on as the anchor says (Fabric applies <<), and /logspec needs a client certificate', async () => {
    const file = path.join(tmp, 'merged-tls-core.yaml');
    await writeFile(
      file,
      [
        'tlsdefaults: &tlsdefaults',
        '  enabled: true',
        `  cert: { file: ${pki.server.cert} }`,
        `  key: { file: ${pki.server.key} }`,
        `  clientRootCAs: { files: [${pki.clientCA.cert}] }`,
        'operations:',
        '  listenAddress: 127.0.0.1:0',
        '  tls:',
        '    <<: *tlsdefaults',
        '    clientAuthRequired: false',
        '',
      ].join('\n'),
    );
    const run = runCli(['--config', file]);
    try {
      const url = await run.listening();
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const anonymous = await request(`${url}/logspec`, { method: 'PUT', body: '{"spec":"debug"}', ca: pki.serverCA.certPem });
      expect(anonymous.status).toBe(401);
      expect((await request(`${url}/logspec`, { ca: pki.serverCA.certPem, client: pki.client })).json).toEqual({ spec: 'info' });
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  });

  it('Operations: {<<: *base} takes the whole orderer section from the anchor', async () => {
    const file = path.join(tmp, 'merged-orderer.yaml');
    await writeFile(
      file,
      [
        'base: &base',
        '  ListenAddress: 127.0.0.1:0',
        `  TLS: { Enabled: true, Certificate: ${pki.server.cert}, PrivateKey: ${pki.server.key}, ClientRootCAs: [${pki.clientCA.cert}] }`,
        'General: {}',
        'Operations: {<<: *base}',
        '',
      ].join('\n'),
    );
    const run = runCli(['--config', file]);
    try {
      const url = await run.listening();
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect((await request(`${url}/logspec`, { ca: pki.serverCA.certPem })).status).toBe(401);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  });

  it('YAML the reader does not apply (an unknown tag) exits 2 with one line naming the file and the line', async () => {
    const file = path.join(tmp, 'tagged-core.yaml');
    await writeFile(file, 'operations:\n  listenAddress: 127.0.0.1:0\n  tls:\n    enabled: !vault true\n');
    const run = runCli(['--config', file]);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toBe(
      `fabric-ops: config file ${file}: YAML that fabric-ops does not apply at line 4, column 14: Unresolved tag: !vault; Fabric's reader would refuse or read it otherwise ("    enabled: !vault true")\n`,
    );
  });

  it('a YAML alias bomb exits 2 with one line naming the file, no stack trace', async () => {
    const lines = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let level = 1; level < 9; level += 1) {
      const name = String.fromCharCode(97 + level);
      lines.push(
        `${name}: &${name} [${Array(9)
          .fill(`*${String.fromCharCode(96 + level)}`)
          .join(', ')}]`,
      );
    }
    const file = path.join(tmp, 'bomb-core.yaml');
    await writeFile(file, `operations: { listenAddress: 127.0.0.1:0 }\n${lines.join('\n')}\n`);
    const run = runCli(['--config', file]);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toBe(`fabric-ops: config file ${file}: too many YAML aliases (expanding them goes past the limit of 1000; an alias bomb?)\n`);
  });

  it("Fabric's boolean spellings: enabled: yes in the file and CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED=1 give TLS with client authentication", async () => {
    const file = path.join(tmp, 'yes-core.yaml');
    await writeFile(
      file,
      `operations:\n  listenAddress: 127.0.0.1:0\n  tls:\n    enabled: yes\n    cert: { file: ${pki.server.cert} }\n    key: { file: ${pki.server.key} }\n    clientRootCAs: { files: [${pki.clientCA.cert}] }\n`,
    );
    const run = runCli(['--config', file], { CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: '1' });
    try {
      const url = await run.listening();
      expect(url).toMatch(/^https:/);
      // clientAuthRequired: the handshake itself refuses a client without a certificate, even for /healthz.
      await expect(request(`${url}/healthz`, { ca: pki.serverCA.certPem })).rejects.toThrow();
      expect((await request(`${url}/version`, { ca: pki.serverCA.certPem, client: pki.client })).status).toBe(200);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  });

  it("Fabric's boolean spellings in the orderer dialect: Enabled: on in the file, ORDERER_OPERATIONS_TLS_ENABLED=f from the environment wins", async () => {
    const file = path.join(tmp, 'on-orderer.yaml');
    await writeFile(
      file,
      `Operations:\n  ListenAddress: 127.0.0.1:0\n  TLS: { Enabled: on, Certificate: ${pki.server.cert}, PrivateKey: ${pki.server.key}, ClientRootCAs: [${pki.clientCA.cert}] }\n`,
    );
    const on = runCli(['--config', file]);
    const off = runCli(['--config', file], { ORDERER_OPERATIONS_TLS_ENABLED: 'f' });
    try {
      expect(await on.listening()).toMatch(/^https:/);
      expect(await off.listening()).toMatch(/^http:/);
    } finally {
      on.child.kill('SIGTERM');
      off.child.kill('SIGTERM');
      await Promise.all([on.exited, off.exited]);
    }
  });

  it('a boolean spelling Fabric refuses exits 2 naming the variable, the value and the accepted spellings', async () => {
    const run = runCli([], { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', CORE_OPERATIONS_TLS_ENABLED: 'yes' });
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toBe(
      'fabric-ops: CORE_OPERATIONS_TLS_ENABLED (operations.tls.enabled): "yes" is not true or false; accepted: 1, t, T, TRUE, true, True (true), 0, f, F, FALSE, false, False (false)\n',
    );
  });
});

/** A Node.js older than package.json's engines: $FABRIC_OPS_OLD_NODE, else the `node` on PATH (the machine's Node 20). */
function olderNode(): { node: string; version: string } {
  const node = process.env.FABRIC_OPS_OLD_NODE ?? execFileSync('sh', ['-c', 'command -v node'], { encoding: 'utf8' }).trim();
  const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 22)) {
    throw new Error(
      `test prerequisite missing: a Node.js older than 22.22 (${node} is ${version}); set FABRIC_OPS_OLD_NODE to one (Debian bookworm's node 20 will do)`,
    );
  }
  return { node, version };
}

describe('fabric-ops on a Node.js older than package.json engines', () => {
  it.each([
    ['--version', ['--version']],
    ['a config file', ['--config', path.join(samples, 'core.yaml')]],
  ])('%s: exits 2 with one line naming the version found and the version needed', (_what, args) => {
    const { node, version } = olderNode();
    const result = spawnSync(node, [cliPath, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH }, timeout: 15_000 });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `fabric-ops: Node.js ${version} is too old: fabric-ops needs Node.js 22.22 or later (package.json engines: >=22.22); run it with a newer node\n`,
    );
  });

  // Issue 30 item 14: the bin, that older node first on the PATH, stopped at `node: bad option: --disable-sigusr1`.
  it('the bin itself (./dist/cli.js, its first lines run by /bin/sh): the same one line, exit 2', () => {
    const { node, version } = olderNode();
    const result = spawnSync(cliPath, ['--version'], { encoding: 'utf8', env: { PATH: `${path.dirname(node)}:${process.env.PATH ?? ''}` }, timeout: 15_000 });
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
      status: 2,
      stdout: '',
      stderr: `fabric-ops: Node.js ${version} is too old: fabric-ops needs Node.js 22.22 or later (package.json engines: >=22.22); run it with a newer node\n`,
    });
  });
});
