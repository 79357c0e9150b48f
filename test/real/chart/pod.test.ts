import { execFile, execFileSync, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as https from 'node:https';
import * as tls from 'node:tls';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { createKubernetesSecretVolume, type KubernetesSecretVolume } from '../../support/pki';
import { requireCommand } from '../../support/prerequisites';
import { freeTcpPort } from '../../support/ports';
import { terminate } from '../../support/processes';
import { requireBuiltCli, runCli, type CliRun } from '../../support/cli';
import { at, defaultNamespace, defaultRelease, find, render, renderNotes, type K8sObject, type RenderOptions } from './helm';
import { requireHelm } from '../../support/real-binaries';
import { waitFor } from '../../support/wait';

/**
 * The rendered pod, run for real: the volumes are laid out as kubelet mounts them (the Secrets
 * and the ConfigMap as ..data-symlinked directories, under a temporary root instead of /), the
 * real fabric-ops command runs with the container's args and environment, and then
 * - the probes, as kubelet sends them (the rendered scheme, no client certificate, server not verified),
 * - the `helm test` pod's script, with its environment (the Service's name resolved to 127.0.0.1),
 * - every curl command of NOTES.txt (the port-forward replaced by the service listening on 127.0.0.1)
 * must work. The listen host is moved from 0.0.0.0 to 127.0.0.1: tests use only loopback.
 */

// The opt-in suite: without helm every test fails, saying so (test/support/real-binaries.ts).
beforeAll(() => {
  requireHelm();
});

const execFileAsync = promisify(execFile);
const svc = `${defaultRelease}-fabric-ops`;
const serviceHost = `${svc}.${defaultNamespace}.svc`;

interface Secret {
  name: string;
  data: Record<string, string>;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A dedicated CA, a server certificate named as cert-manager names it, and the scraper's client certificate. */
function issueServer(dir: string, name: string): { 'tls.crt': string; 'tls.key': string } {
  openssl(
    [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${serviceHost}`,
    ],
    dir,
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      'server.ext',
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
  return { 'tls.crt': readFileSync(path.join(dir, `${name}.crt`), 'utf8'), 'tls.key': readFileSync(path.join(dir, `${name}.key`), 'utf8') };
}

function servedSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: serviceHost, rejectUnauthorized: false }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.end();
      resolve(serial);
    });
    socket.on('error', reject);
  });
}

function makeSecrets(dir: string): { server: Secret; clientCA: Secret; client: Secret } {
  requireCommand('openssl');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-subj',
      `/OU=fabric-ops/CN=${svc} operations CA`,
      '-days',
      '2',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  const names = [svc, `${svc}.${defaultNamespace}`, serviceHost, `${serviceHost}.cluster.local`];
  const leaves: [string, string][] = [
    ['server', `extendedKeyUsage=serverAuth\nsubjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`],
    ['client', 'extendedKeyUsage=clientAuth'],
  ];
  for (const [name, extension] of leaves) {
    writeFileSync(path.join(dir, `${name}.ext`), `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n${extension}\n`);
    openssl(['req', '-new', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name === 'server' ? serviceHost : `${svc}-scraper`}`], dir);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.crt`,
      ],
      dir,
    );
  }
  const read = (file: string): string => readFileSync(path.join(dir, file), 'utf8');
  return {
    // Shaped as cert-manager writes them: tls.crt, tls.key, ca.crt.
    server: { name: 'ops-server', data: { 'tls.crt': read('server.crt'), 'tls.key': read('server.key'), 'ca.crt': read('ca.crt') } },
    clientCA: { name: 'ops-client-ca', data: { 'bundle.pem': read('ca.crt') } },
    client: { name: 'ops-scraper', data: { 'tls.crt': read('client.crt'), 'tls.key': read('client.key'), 'ca.crt': read('ca.crt') } },
  };
}

interface Volume {
  name: string;
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  configMap?: { name: string; items?: { key: string; path: string }[] };
  emptyDir?: Record<string, unknown>;
  hostPath?: { path: string; type?: string };
}
interface Probe {
  httpGet: { path: string; port: string; scheme: string };
}
interface Container {
  args?: string[];
  command?: string[];
  env?: { name: string; value: string }[];
  volumeMounts?: { name: string; mountPath: string }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  ports?: { name: string; containerPort: number }[];
}

/** What kubelet would do: each volume as a ..data-symlinked directory at root + mountPath. */
async function mountVolumes(
  root: string,
  podSpec: Record<string, unknown>,
  c: Container,
  sources: { secrets: Secret[]; configMaps: K8sObject[] },
): Promise<Map<string, KubernetesSecretVolume>> {
  const mounted = new Map<string, KubernetesSecretVolume>();
  const volumes = at<Volume[]>(podSpec, 'volumes');
  for (const mount of c.volumeMounts ?? []) {
    const volume = volumes.find((v) => v.name === mount.name);
    let data: Record<string, string>;
    let items: { key: string; path: string }[] | undefined;
    if (volume?.emptyDir) {
      // An empty directory the container can write (the fleet's state).
      mkdirSync(path.join(root, mount.mountPath), { recursive: true });
      continue;
    }
    if (volume?.hostPath) {
      // The node's own file, at the same path in the container (the chart renders both from
      // runtimeSocket.path): the test puts it there, and kubelet's type check is made here.
      expect(mount.mountPath).toBe(volume.hostPath.path);
      if (volume.hostPath.type === 'Socket' && !lstatSync(volume.hostPath.path, { throwIfNoEntry: false })?.isSocket()) {
        throw new Error(`volume ${mount.name}: hostPath ${volume.hostPath.path} is not a socket (kubelet would not start the pod)`);
      }
      continue;
    }
    if (volume?.secret) {
      const secretName = volume.secret.secretName;
      const secret = sources.secrets.find((s) => s.name === secretName);
      if (!secret) throw new Error(`the pod mounts Secret ${secretName}, which the test did not provide`);
      data = secret.data;
      items = volume.secret.items;
    } else if (volume?.configMap) {
      const configMapName = volume.configMap.name;
      const configMap = sources.configMaps.find((m) => m.metadata.name === configMapName);
      if (!configMap) throw new Error(`the pod mounts ConfigMap ${configMapName}, which was not rendered`);
      data = configMap.data ?? {};
      items = volume.configMap.items;
    } else {
      throw new Error(`volume ${mount.name}: only Secret, ConfigMap, emptyDir and hostPath volumes are laid out here`);
    }
    const files: Record<string, string> = {};
    for (const item of items ?? Object.keys(data).map((key) => ({ key, path: key }))) {
      const content = data[item.key];
      if (content === undefined) throw new Error(`volume ${mount.name}: key ${item.key} is not in its source`);
      files[item.path] = inRoot(root, content);
    }
    mkdirSync(path.dirname(path.join(root, mount.mountPath)), { recursive: true });
    mounted.set(mount.name, await createKubernetesSecretVolume(path.join(root, mount.mountPath), files));
  }
  return mounted;
}

/** The pod's absolute paths under the temporary root, and loopback instead of every interface. */
function inRoot(root: string, text: string): string {
  return text.replace(/(^|[\s"'=[])\/(etc|var)\//g, `$1${root}/$2/`).replace(/0\.0\.0\.0:/g, '127.0.0.1:');
}

function envOf(c: Container, root: string): Record<string, string> {
  return Object.fromEntries((c.env ?? []).map((e) => [e.name, inRoot(root, e.value)]));
}

/** GET as kubelet's HTTP(S) probe does: no client certificate, the server's certificate not verified. */
function probe(scheme: string, port: number, pathname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path: pathname, rejectUnauthorized: false, agent: false };
    const request = (scheme === 'HTTPS' ? https : http).get(options, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
  });
}

const scenarios = [
  {
    name: 'existing Secrets (HTTPS, mutual TLS)',
    tls: true,
    set: {
      'tls.provider': 'existingSecrets',
      'tls.existingSecrets.server': 'ops-server',
      'tls.existingSecrets.clientCA': 'ops-client-ca',
      'tls.existingSecrets.clientCAKey': 'bundle.pem',
      'tls.existingSecrets.client': 'ops-scraper',
    },
  },
  { name: 'TLS off (HTTP)', tls: false, set: { 'tls.provider': 'none' } },
] as const;

describe.each(scenarios)('the rendered peer pod, $name', (scenario) => {
  let dir: string;
  let root: string;
  let port: number;
  let options: RenderOptions;
  let objects: K8sObject[];
  let secrets: { server: Secret; clientCA: Secret; client: Secret };
  let service: CliRun | undefined;
  let mounted: Map<string, KubernetesSecretVolume>;

  beforeAll(async () => {
    requireBuiltCli();
    dir = mkdtempSync(path.join(tmpdir(), 'fabric-ops-chart-pod-'));
    root = path.join(dir, 'root');
    secrets = makeSecrets(dir);
    // Probed, not port 0: the chart's schema requires operations.port 1-65535, and the rendered
    // probe, the helm test pod's URL and NOTES.txt name that port, which is what is checked here.
    port = await freeTcpPort();
    options = { set: { ...scenario.set, 'operations.port': port, 'logging.spec': 'info' } };
    objects = render(options).objects;
    const deployment = find(objects, 'Deployment');
    const podSpec = at<Record<string, unknown>>(deployment, 'spec', 'template', 'spec');
    const c = at<Container[]>(podSpec, 'containers')[0] as Container;
    mounted = await mountVolumes(root, podSpec, c, { secrets: Object.values(secrets), configMaps: objects.filter((o) => o.kind === 'ConfigMap') });
    service = runCli(
      (c.args ?? []).map((arg) => inRoot(root, arg)),
      envOf(c, root),
    );
    await service.listening(20_000);
  }, 60_000);

  afterAll(async () => {
    if (service) await terminate(service.child, service.exited, 5_000);
    rmSync(dir, { recursive: true, force: true });
  });

  test("kubelet's probes (startup, liveness, readiness) each get 200 with the rendered scheme, port and path", async () => {
    const c = at<Container[]>(find(objects, 'Deployment'), 'spec', 'template', 'spec', 'containers')[0] as Container;
    const probes = { startup: c.startupProbe?.httpGet, liveness: c.livenessProbe?.httpGet, readiness: c.readinessProbe?.httpGet };
    expect(Object.fromEntries(Object.entries(probes).map(([kind, get]) => [kind, get?.path]))).toEqual({
      startup: '/version',
      liveness: '/version',
      readiness: '/healthz',
    });
    for (const get of Object.values(probes)) {
      expect(get?.scheme).toBe(scenario.tls ? 'HTTPS' : 'HTTP');
      expect(c.ports?.find((p) => p.name === get?.port)?.containerPort).toBe(port);
      expect(await probe(get?.scheme ?? '', port, get?.path ?? '')).toBe(200);
    }
    // The other scheme gets no 200: the probe's scheme is not a formality.
    const other = await probe(scenario.tls ? 'HTTP' : 'HTTPS', port, '/healthz').catch((error: Error) => error.message);
    expect(other).not.toBe(200);
  });

  test("the helm test pod's script passes with its own environment and mounts", async () => {
    const testPod = find(objects, 'Pod');
    const podSpec = at<Record<string, unknown>>(testPod, 'spec');
    const c = at<Container[]>(podSpec, 'containers')[0] as Container;
    expect(c.command?.slice(0, 2)).toEqual(['node', '-e']);
    const testRoot = path.join(dir, 'test-pod-root');
    if (scenario.tls) await mountVolumes(testRoot, podSpec, c, { secrets: Object.values(secrets), configMaps: [] });
    const preload = path.join(dir, 'resolve-service.js');
    writeFileSync(
      preload,
      `const dns = require('node:dns');
const original = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (host !== ${JSON.stringify(serviceHost)}) return original.apply(this, arguments);
  if (typeof options === 'function') { callback = options; options = {}; }
  if (options && options.all) return process.nextTick(callback, null, [{ address: '127.0.0.1', family: 4 }]);
  process.nextTick(callback, null, '127.0.0.1', 4);
};
`,
    );
    const env = envOf(c, testRoot);
    expect(env.HEALTHZ_URL).toBe(`${scenario.tls ? 'https' : 'http'}://${serviceHost}:${port}/healthz`);
    const { stdout } = await execFileAsync(process.execPath, ['--require', preload, '-e', c.command?.[2] ?? ''], { env: { PATH: process.env.PATH, ...env } });
    expect(stdout).toMatch(
      new RegExp(`GET ${scenario.tls ? 'https' : 'http'}://${serviceHost.replace(/\./g, '\\.')}:${port}/healthz: HTTP 200 \\{"status":"OK"`),
    );
    if (scenario.tls) {
      // It verifies the server's name: by IP address (not in the certificate) it fails.
      const byAddress = execFileAsync(process.execPath, ['-e', c.command?.[2] ?? ''], {
        env: { PATH: process.env.PATH, ...env, HEALTHZ_URL: `https://127.0.0.1:${port}/healthz` },
      });
      await expect(byAddress).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/IP: 127\.0\.0\.1 is not in the cert's list/) });
    }
  });

  test('every curl command of NOTES.txt works', async () => {
    const notes = renderNotes(options, dir);
    const lines = notes.split('\n').map((line) => line.trim());
    expect(lines).toContain(`kubectl -n ${defaultNamespace} port-forward service/${svc} ${port}:${port} &`);
    const cwd = path.join(dir, 'operator');
    mkdirSync(cwd, { recursive: true });
    // kubectl get secret ... -o jsonpath='{.data.tls\.crt}' | base64 -d > file: written from the Secret itself.
    for (const line of lines.filter((l) => l.startsWith('kubectl') && l.includes(' get secret '))) {
      const match = /get secret (\S+) -o jsonpath='\{\.data\.(.+?)\}' \| base64 -d > (\S+)$/.exec(line);
      expect(match).not.toBeNull();
      const [, secretName, key, file] = match as unknown as [string, string, string, string];
      const secret = Object.values(secrets).find((s) => s.name === secretName);
      expect(secret?.name).toBe('ops-scraper');
      writeFileSync(path.join(cwd, file), secret?.data[key.replace(/\\\./g, '.')] ?? '');
    }
    const curls = lines.filter((l) => l.startsWith('curl '));
    expect(curls.length).toBe(scenario.tls ? 5 : 4);
    const answers = new Map<string, string>();
    for (const command of curls) {
      const { stdout } = await execFileAsync('sh', ['-c', `${command} -w '\\n%{http_code}'`], { cwd });
      answers.set(command, stdout);
    }
    const answer = (pathname: string, method = 'GET'): string => {
      const entry = [...answers.entries()].find(([command]) => command.endsWith(`${port}${pathname}`) && command.includes('-X PUT') === (method === 'PUT'));
      if (!entry) throw new Error(`NOTES.txt has no curl for ${method} ${pathname}: ${curls.join('\n')}`);
      return entry[1];
    };
    expect(answer('/healthz')).toMatch(/^\{"status":"OK","time":"[^"]+"\}\n200$/);
    expect(answer('/version')).toMatch(/^\{"CommitSHA":"[^"]*","Version":"[^"]+"\}\n200$/);
    expect(answer('/logspec')).toMatch(/^\{"spec":"info"\}\n200$/);
    expect(answer('/metrics')).toMatch(/^# HELP [\s\S]*fabric_version\{version="[^"]+"\} 1[\s\S]*\n200$/);
    if (scenario.tls) expect(answer('/logspec', 'PUT')).toBe('\n204');
  });

  test('a rotated server Secret reaches the running service through the rendered mount (no subPath, no restart)', async () => {
    if (!scenario.tls) {
      expect(mounted.has('tls-server')).toBe(false);
      return;
    }
    const volume = mounted.get('tls-server');
    expect(volume).toBeDefined();
    const before = await servedSerial(port);
    const renewed = issueServer(dir, 'server-renewed');
    const wanted = new X509Certificate(renewed['tls.crt']).serialNumber;
    expect(wanted).not.toBe(before);
    await volume?.update(renewed);
    const served = await waitFor(
      'the renewed certificate served',
      async () => {
        const serial = await servedSerial(port);
        return serial.toUpperCase() === wanted.toUpperCase() && serial;
      },
      { timeoutMs: 10_000, everyMs: 250 },
    );
    expect(served.toUpperCase()).toBe(wanted.toUpperCase());
    expect(service?.child.exitCode).toBeNull();
    expect(await probe('HTTPS', port, '/healthz')).toBe(200);
  });
});

/** A JSON request over mutual TLS (or without a client certificate), to the service's name resolved to 127.0.0.1. */
function fleetRequest(
  port: number,
  method: string,
  pathname: string,
  client: Secret | null,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: pathname,
        servername: serviceHost,
        ca: client?.data['ca.crt'] ?? undefined,
        rejectUnauthorized: client !== null,
        ...(client ? { cert: client.data['tls.crt'], key: client.data['tls.key'] } : {}),
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        agent: false,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) }));
      },
    );
    request.on('error', reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('the rendered pod in fleet mode (ci/fleet-values.yaml shape, existing Secrets)', () => {
  let dir: string;
  let root: string;
  let port: number;
  let objects: K8sObject[];
  let secrets: { server: Secret; clientCA: Secret; client: Secret };
  let service: CliRun | undefined;

  beforeAll(async () => {
    requireBuiltCli();
    dir = mkdtempSync(path.join(tmpdir(), 'fabric-ops-chart-fleet-'));
    root = path.join(dir, 'root');
    secrets = makeSecrets(dir);
    // Probed, not port 0: the chart's schema requires operations.port 1-65535, and the fleet's
    // one node is this pod itself, whose URL must name that port before the server starts.
    port = await freeTcpPort();
    // The fleet's one node is this pod itself, by its Service name: the group's Secret is the
    // scraper's pair (a client of the release's CA, which also signed the server certificate).
    objects = render({
      set: {
        'tls.provider': 'existingSecrets',
        'tls.existingSecrets.server': 'ops-server',
        'tls.existingSecrets.clientCA': 'ops-client-ca',
        'tls.existingSecrets.clientCAKey': 'bundle.pem',
        'tls.existingSecrets.client': 'ops-scraper',
        'operations.port': port,
        'fleet.enabled': true,
        'fleet.minRoundInterval': '0s',
        'fleet.pollInterval': '0s',
      },
      setJson: {
        'fleet.groups': { org1: { secret: 'ops-scraper' } },
        'fleet.nodes': [{ name: 'self', url: `https://${serviceHost}:${port}`, dialect: 'peer', group: 'org1', labels: { role: 'ops' } }],
        'fleet.writers': [`CN=${svc}-scraper`],
      },
    }).objects;
    const podSpec = at<Record<string, unknown>>(find(objects, 'Deployment'), 'spec', 'template', 'spec');
    const c = at<Container[]>(podSpec, 'containers')[0] as Container;
    await mountVolumes(root, podSpec, c, { secrets: Object.values(secrets), configMaps: objects.filter((o) => o.kind === 'ConfigMap') });
    const preload = path.join(dir, 'resolve-service.js');
    writeFileSync(
      preload,
      `const dns = require('node:dns');
const original = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (host !== ${JSON.stringify(serviceHost)}) return original.apply(this, arguments);
  if (typeof options === 'function') { callback = options; options = {}; }
  if (options && options.all) return process.nextTick(callback, null, [{ address: '127.0.0.1', family: 4 }]);
  process.nextTick(callback, null, '127.0.0.1', 4);
};
`,
    );
    service = runCli(
      (c.args ?? []).map((arg) => inRoot(root, arg)),
      { ...envOf(c, root), NODE_OPTIONS: `--require ${preload}` },
    );
    await service.listening(20_000);
  }, 60_000);

  afterAll(async () => {
    if (service) await terminate(service.child, service.exited, 5_000);
    rmSync(dir, { recursive: true, force: true });
  });

  test('the container reads the rendered fleet.yaml through --fleet-config, with the group Secret mounted', async () => {
    const c = at<Container[]>(find(objects, 'Deployment'), 'spec', 'template', 'spec', 'containers')[0] as Container;
    expect(c.args?.slice(-2)).toEqual(['--fleet-config', '/etc/fabric-ops/fleet/fleet.yaml']);
    const health = await fleetRequest(port, 'GET', '/fleet/healthz', secrets.client);
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ status: 'OK', healthy: 1, total: 1, nodes: [{ name: 'self', group: 'org1', status: 'ok' }] });
  });

  test('/fleet demands a client certificate, even for healthz', async () => {
    expect((await fleetRequest(port, 'GET', '/fleet/healthz', null)).status).toBe(401);
  });

  test('a write with a TTL is persisted in the fleet-state volume, and DELETE puts it back', async () => {
    const put = await fleetRequest(port, 'PUT', '/fleet/logspec', secrets.client, { spec: 'fleet=debug:info', selector: {}, ttl: '1h' });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ complete: true, nodes: [{ name: 'self', result: 'applied', previous: 'info' }] });
    const state = JSON.parse(readFileSync(path.join(root, 'var/lib/fabric-ops/fleet/state/fleet-putbacks.json'), 'utf8')) as { pending: unknown[] };
    expect(JSON.stringify(state.pending)).toContain('"self"');
    expect((await fleetRequest(port, 'GET', '/logspec', secrets.client)).json).toEqual({ spec: 'fleet=debug:info' });
    const restore = await fleetRequest(port, 'DELETE', '/fleet/logspec', secrets.client, {});
    expect(restore.json).toMatchObject({ nodes: [{ name: 'self', result: 'restored', spec: 'info' }] });
    expect((await fleetRequest(port, 'GET', '/logspec', secrets.client)).json).toEqual({ spec: 'info' });
  });
});

/**
 * Issue 30 item 15: liveness on /healthz restarted the pod whenever a health check failed. The
 * rendered pod with the node's runtime socket mounted (runtimeSocket, Docker) whose daemon has
 * died (its socket file left behind, as kubelet's hostPath check then still passes): the
 * readiness probe fails, so the pod leaves the Service, while startup and liveness keep
 * answering, so kubelet does not restart it.
 */
describe('the rendered pod whose health check fails: readiness fails, liveness does not', () => {
  let dir: string;
  let port: number;
  let objects: K8sObject[];
  let stale: string;
  let service: CliRun | undefined;

  beforeAll(async () => {
    requireBuiltCli();
    dir = mkdtempSync(path.join(tmpdir(), 'fabric-ops-chart-probes-'));
    // A Docker daemon that listened and was killed: its socket file stays, nothing answers on it.
    stale = path.join(dir, 'docker.sock');
    const daemon = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(stale)}, () => console.log('up'))`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => daemon.stdout?.once('data', () => resolve()));
    const exited = new Promise((resolve) => daemon.once('exit', resolve));
    daemon.kill('SIGKILL');
    await exited;
    port = await freeTcpPort();
    objects = render({
      set: { 'tls.provider': 'none', 'operations.port': port, 'runtimeSocket.enabled': true, 'runtimeSocket.runtime': 'docker', 'runtimeSocket.path': stale },
    }).objects;
    const podSpec = at<Record<string, unknown>>(find(objects, 'Deployment'), 'spec', 'template', 'spec');
    const c = at<Container[]>(podSpec, 'containers')[0] as Container;
    const root = path.join(dir, 'root');
    await mountVolumes(root, podSpec, c, { secrets: [], configMaps: objects.filter((o) => o.kind === 'ConfigMap') });
    service = runCli(
      (c.args ?? []).map((arg) => inRoot(root, arg)),
      envOf(c, root),
    );
    await service.listening(20_000);
  }, 60_000);

  afterAll(async () => {
    if (service) await terminate(service.child, service.exited, 5_000);
    rmSync(dir, { recursive: true, force: true });
  });

  test('readiness (/healthz) gets 503 naming the dead daemon; startup and liveness (/version) get 200; the process keeps running', async () => {
    const c = at<Container[]>(find(objects, 'Deployment'), 'spec', 'template', 'spec', 'containers')[0] as Container;
    expect(envOf(c, dir).CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_ENDPOINT).toBe(`unix://${stale}`);
    const answer = async (get: Probe['httpGet'] | undefined): Promise<number> => {
      expect(get?.scheme).toBe('HTTP');
      expect(c.ports?.find((p) => p.name === get?.port)?.containerPort).toBe(port);
      return probe(get?.scheme ?? '', port, get?.path ?? '');
    };
    expect(await answer(c.readinessProbe?.httpGet)).toBe(503);
    expect(await answer(c.startupProbe?.httpGet)).toBe(200);
    expect(await answer(c.livenessProbe?.httpGet)).toBe(200);
    const health = await new Promise<string>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    expect(health).toContain(`connection refused on socket ${stale} (nothing listens on it)`);
    expect(service?.child.exitCode).toBeNull();
  });
});
