/**
 * docker-compose.yml with Debian's docker-compose 1.29: fabric-ops and fabric-ops-statsd (the image
 * built here), the StatsD daemon and Prometheus (local images: nothing is pulled), a throwaway PKI
 * from scripts/compose-pki.sh. Prometheus must scrape fabric-ops over mutual TLS and StatsD must
 * receive fabric-ops-statsd's lines. fabric-ops's two ports and Prometheus's are free ports handed
 * in through FABRIC_OPS_PORT, FABRIC_OPS_STATSD_PORT and PROMETHEUS_PORT; StatsD keeps its fixed
 * 8125/8126. The README's compose commands run against the services, with those ports.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from '../support/http';
import { requireCommand } from '../support/prerequisites';
import { buildTestImage, headCommit, localBase, repoRoot, run, testImage } from './image-build';
import { waitFor } from '../support/wait';

const project = `fabric-ops-compose-test-${process.pid}`;
const statsdAdminPort = 8126;
const udpPorts = [8125];
/** Defaults of docker-compose.yml (and the README's commands): away from Fabric's test-network's 9443-9446. */
const defaults = { ops: 19443, opsStatsd: 19444, prometheus: 9090 };

/** A port the kernel hands out on 127.0.0.1 (listen on 0, read it back, close). */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? done(address.port) : fail(new Error('no port'))));
    });
  });
}

/** The shell lines of the compose-commands block of docs/container.md (the README's until the docs moved to docs/). */
async function readmeComposeCommands(): Promise<string[]> {
  const readme = await readFile(join(repoRoot, 'docs', 'container.md'), 'utf8');
  const marker = readme.indexOf('<!-- compose-commands');
  if (marker < 0) throw new Error('docs/container.md has no compose-commands marker');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(marker));
  if (!block?.[1]) throw new Error('docs/container.md: no sh block after the compose-commands marker');
  return block[1].split('\n').filter((line) => line.trim() !== '');
}

/** Runs one README line with sh in the repository; resolves with its exit status and output. */
function sh(line: string): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile('sh', ['-c', line], { cwd: repoRoot, timeout: 30_000 }, (error, stdout, stderr) =>
      done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

function tcpFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

function udpFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createSocket('udp4');
    socket.once('error', () => done(false));
    socket.bind(port, '127.0.0.1', () => socket.close(() => done(true)));
  });
}

/** One command to the StatsD management console; resolves with its answer up to END. */
function statsdAdmin(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let text = '';
    const timer = setTimeout(() => socket.destroy(new Error(`statsd console: no END after ${command}`)), 3000);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('END')) {
        clearTimeout(timer);
        socket.end();
        resolve(text);
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.connect(8126, '127.0.0.1', () => socket.write(`${command}\n`));
  });
}

interface TargetsAnswer {
  data: { activeTargets: { scrapeUrl: string; health: string; lastError: string; labels: Record<string, string> }[] };
}
interface QueryAnswer {
  data: { result: { metric: Record<string, string>; value: [number, string] }[] };
}

describe('docker-compose.yml ports', () => {
  const config = (extra: NodeJS.ProcessEnv): Promise<string> =>
    run('docker-compose', ['-f', join(repoRoot, 'docker-compose.yml'), 'config'], { ...process.env, ...extra }, 60_000);

  it("defaults to 19443, 19444 and 9090, clear of Fabric's test-network (9443-9446)", async () => {
    requireCommand('docker-compose', 'run scripts/test-prereqs.sh (Debian: apt-get install docker-compose)');
    const text = await config({ FABRIC_OPS_PORT: '', FABRIC_OPS_STATSD_PORT: '', PROMETHEUS_PORT: '' });
    expect(text).toContain('CORE_OPERATIONS_LISTENADDRESS: 127.0.0.1:19443');
    expect(text).toContain('CORE_OPERATIONS_LISTENADDRESS: 127.0.0.1:19444');
    expect(text).toContain('--web.listen-address=127.0.0.1:9090');
    expect(text).toMatch(/FABRIC_OPS_PORT: '19443'/);
    expect(text).not.toMatch(/:944[3-6]\b/);
  });

  it('takes FABRIC_OPS_PORT, FABRIC_OPS_STATSD_PORT and PROMETHEUS_PORT', async () => {
    const text = await config({ FABRIC_OPS_PORT: '29443', FABRIC_OPS_STATSD_PORT: '29444', PROMETHEUS_PORT: '29090' });
    expect(text).toContain('CORE_OPERATIONS_LISTENADDRESS: 127.0.0.1:29443');
    expect(text).toContain('CORE_OPERATIONS_LISTENADDRESS: 127.0.0.1:29444');
    expect(text).toContain('--web.listen-address=127.0.0.1:29090');
    expect(text).toMatch(/FABRIC_OPS_PORT: '29443'/);
  });
});

describe('docker-compose.yml (docker-compose 1.29)', () => {
  let work: string;
  let pki: string;
  let env: NodeJS.ProcessEnv;
  let started = false;
  let ports: typeof defaults;
  const compose = (...args: string[]): Promise<string> =>
    run('docker-compose', ['-f', join(repoRoot, 'docker-compose.yml'), '-p', project, ...args], env, 5 * 60_000);

  beforeAll(async () => {
    requireCommand('docker-compose', 'run scripts/test-prereqs.sh (Debian: apt-get install docker-compose)');
    requireCommand('openssl', 'run scripts/test-prereqs.sh (Debian: apt-get install openssl)');
    requireCommand('prometheus', 'run scripts/test-prereqs.sh (Debian: apt-get install prometheus)');
    await buildTestImage(await headCommit());
    await run(join(repoRoot, 'scripts', 'build-compose-images.sh'), [], { ...process.env, NODE_IMAGE: localBase });
    work = await mkdtemp(join(tmpdir(), 'fabric-ops-compose-'));
    pki = join(work, 'pki');
    await run(join(repoRoot, 'scripts', 'compose-pki.sh'), [pki]);
    // Probed, not port 0: docker-compose.yml publishes these on the host network and Prometheus'
    // scrape targets name the operations ports before any container starts.
    ports = { ops: await freePort(), opsStatsd: await freePort(), prometheus: await freePort() };
    const busy = [
      ...(await Promise.all([statsdAdminPort].map(async (port) => ((await tcpFree(port)) ? null : `tcp ${port}`)))),
      ...(await Promise.all(udpPorts.map(async (port) => ((await udpFree(port)) ? null : `udp ${port}`)))),
    ].filter((port): port is string => port !== null);
    if (busy.length > 0) throw new Error(`docker-compose.yml's StatsD listens on fixed loopback ports; in use here: ${busy.join(', ')}`);
    env = {
      ...process.env,
      FABRIC_OPS_IMAGE: testImage,
      NODE_IMAGE: localBase,
      PROMETHEUS_IMAGE: 'fabric-ops/prometheus:local',
      STATSD_IMAGE: 'fabric-ops/compose-statsd:local',
      FABRIC_OPS_COMPOSE_PKI: pki,
      FABRIC_OPS_PORT: String(ports.ops),
      FABRIC_OPS_STATSD_PORT: String(ports.opsStatsd),
      PROMETHEUS_PORT: String(ports.prometheus),
    };
    started = true;
    await compose('up', '-d', '--no-build');
  }, 25 * 60_000);

  afterAll(async () => {
    if (started) await compose('down', '-v', '--remove-orphans');
    if (work) await rm(work, { recursive: true, force: true });
  }, 120_000);

  it('brings the four services up, fabric-ops containers read-only as UID 10001', async () => {
    const ids = (await compose('ps', '-q')).trim().split('\n').filter(Boolean);
    expect(ids).toHaveLength(4);
    const states = JSON.parse(await run('docker', ['inspect', ...ids])) as {
      Name: string;
      State: { Running: boolean };
      Config: { User: string };
      HostConfig: { ReadonlyRootfs: boolean; NetworkMode: string };
    }[];
    for (const state of states) {
      expect({ name: state.Name, running: state.State.Running, network: state.HostConfig.NetworkMode }).toEqual({
        name: state.Name,
        running: true,
        network: 'host',
      });
    }
    const fabricOps = states.filter((state) => /_fabric-ops(-statsd)?_\d+$/.test(state.Name));
    expect(fabricOps).toHaveLength(2);
    for (const state of fabricOps) expect([state.Config.User, state.HostConfig.ReadonlyRootfs]).toEqual(['10001:10001', true]);
  });

  it('serves /metrics over TLS only to a client certificate from the compose CA', async () => {
    const ca = await readFile(join(pki, 'ca.crt'), 'utf8');
    const client = {
      cert: join(pki, 'prometheus.crt'),
      key: join(pki, 'prometheus.key'),
      certPem: await readFile(join(pki, 'prometheus.crt'), 'utf8'),
      keyPem: await readFile(join(pki, 'prometheus.key'), 'utf8'),
    };
    const health = await waitFor(
      'fabric-ops /healthz over HTTPS',
      async () => {
        const answer = await request(`https://localhost:${ports.ops}/healthz`, { ca });
        return answer.status === 200 && answer;
      },
      { timeoutMs: 30_000, everyMs: 500 },
    );
    expect(health.json).toMatchObject({ status: 'OK' });
    expect((await request(`https://localhost:${ports.ops}/metrics`, { ca })).status).toBe(401);
    const metrics = await request(`https://localhost:${ports.ops}/metrics`, { ca, client });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^fabric_version\{/m);
  });

  it('Prometheus reports the fabric-ops target up over https with mutual TLS', async () => {
    const target = await waitFor(
      'Prometheus target up',
      async () => {
        const answer = await request(`http://127.0.0.1:${ports.prometheus}/api/v1/targets?state=active`);
        if (answer.status !== 200) return undefined;
        const found = (answer.json as TargetsAnswer).data.activeTargets.find((t) => t.labels.job === 'fabric-ops');
        return found?.health === 'up' && found;
      },
      { timeoutMs: 60_000, everyMs: 500 },
    );
    expect(target).toMatchObject({ scrapeUrl: `https://127.0.0.1:${ports.ops}/metrics`, lastError: '' });
    const query = await request(`http://127.0.0.1:${ports.prometheus}/api/v1/query?query=${encodeURIComponent('fabric_version{job="fabric-ops"}')}`);
    const series = (query.json as QueryAnswer).data.result;
    expect(series.length).toBeGreaterThan(0);
    expect(series[0]?.value[1]).toBe('1');
  }, 90_000);

  it('StatsD receives the lines fabric-ops-statsd pushes', async () => {
    const gauges = await waitFor(
      'peer0.fabric_version in the StatsD gauges',
      async () => {
        const answer = await statsdAdmin('gauges');
        return answer.includes("'peer0.fabric_version.") && answer;
      },
      { timeoutMs: 30_000, everyMs: 500 },
    );
    expect(gauges).toMatch(/'peer0\.fabric_version\.[^']+': 1/);
    const logs = await compose('logs', '--no-color', 'statsd');
    expect(logs).toMatch(/DEBUG: peer0\.fabric_version\.[^:]+:1\|g/);
  }, 60_000);

  it("the README's compose commands answer (ports substituted; curl only, no nc)", async () => {
    const lines = await readmeComposeCommands();
    expect(lines).toHaveLength(4);
    // nc is not in Debian 12 by default: no line runs it.
    expect(lines.join('\n')).not.toMatch(/(^|[|;&]\s*)nc\s/m);
    const withPorts = (line: string): string =>
      line
        .replaceAll(`:${defaults.ops}/`, `:${ports.ops}/`)
        .replaceAll(`:${defaults.prometheus}/`, `:${ports.prometheus}/`)
        .replaceAll('deploy/compose/pki/', `${pki}/`);
    const [healthz, metrics, query, gauges] = await Promise.all(lines.map((line) => sh(withPorts(line))));
    expect(healthz).toMatchObject({ code: 0, output: expect.stringContaining('"status":"OK"') as unknown });
    expect(metrics).toMatchObject({ code: 0, output: expect.stringMatching(/^fabric_version\{/m) as unknown });
    expect(query?.code).toBe(0);
    expect(JSON.parse(query?.output ?? '')).toMatchObject({
      status: 'success',
      data: { result: [{ metric: { job: 'fabric-ops', __name__: 'up' }, value: [expect.any(Number), '1'] }] },
    });
    expect(gauges).toMatchObject({ code: 0, output: expect.stringContaining("'peer0.fabric_version.") as unknown });
  }, 60_000);
});
