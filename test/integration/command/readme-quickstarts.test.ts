/**
 * The README's quick starts (issue 31 item 5): each shell block whose first line is
 * `# quick-start: <name>` is run here as written, with only addresses and files substituted (a free
 * port for 9443 or 9449, a recorded peer's configuration for /etc/hyperledger/fabric, doubles of
 * recorded Fabric peers for the node URLs), or, where it needs what this machine and CI do not have
 * (kubectl, helm, a cluster), checked against the chart's schema and templates instead:
 *
 *   standalone  `make run` (in a copy of the checkout's build: `make run` rebuilds a stale bundle,
 *               which must not happen under the other suites' feet) and curl, to its end
 *   companion   the built command beside a double of a recorded Fabric 2.5.12 peer
 *               (test/support/fabric-double.ts), on that release's sample core.yaml, to its end
 *   fleet       `fabric-ops fleet status` and `versions`, one-shot, over two doubles of that peer
 *   helm        structural only: the values meet the chart's schema (test/chart/values-schema.ts), the
 *               Deployment's name is the chart's, `helm test` has a test hook to run
 *   library     the TypeScript block before it compiled with this repository's tsc as the block
 *               says, against this checkout as the installed package, and run: /healthz, /metrics,
 *               SIGTERM
 *   chaincode   the TypeScript block before it compiled (CommonJS, a chaincode's main module), then
 *               the block's `fabric-chaincode-node server` line: /healthz, /version, SIGTERM. No peer:
 *               the peer's side is test/real/fabric/chaincode-network.test.ts'
 *
 * `npm install` lines are not run (no package of this checkout is on a registry): the packages they
 * name must be this package and its optional peer dependencies, and the test links them from the
 * checkout instead. Needs `make build` (dist/).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { mergedValues, schemaErrors } from '../../chart/values-schema';
import { FabricDouble, FabricNetwork, releaseDir } from '../../support/fabric-double';
import { request } from '../../support/http';
import { freeTcpPort } from '../../support/ports';
import { waitFor } from '../../support/wait';

jest.setTimeout(180_000);

const repoRoot = path.resolve(__dirname, '../../..');
const readmeText = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const nodeDir = path.dirname(process.execPath);
const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const packageName = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { name: string }).name;

interface QuickStart {
  name: string;
  /** Line of the opening fence in README.md. */
  line: number;
  /** The block without its marker line. */
  script: string;
  /** The TypeScript block right before it, when there is one (between the two, only prose). */
  typescript: { code: string; marker: Record<string, unknown> } | null;
}

/** Every marked shell block of the README, in order. */
function quickStarts(readme: string): QuickStart[] {
  const found: QuickStart[] = [];
  const blocks = [...readme.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)];
  blocks.forEach((block, index) => {
    const [, lang = '', body = ''] = block;
    const name = /^# quick-start: ([\w-]+)\n/.exec(body)?.[1];
    if ((lang !== 'sh' && lang !== 'bash') || name === undefined) return;
    const previous = blocks[index - 1];
    let typescript: QuickStart['typescript'] = null;
    if (previous?.[1] === 'ts' && previous.index !== undefined) {
      const before = readme.slice(0, previous.index);
      const marker = /<!-- ts-check (\{.*\}) -->\n$/.exec(before)?.[1];
      typescript = { code: previous[2] ?? '', marker: marker === undefined ? {} : (JSON.parse(marker) as Record<string, unknown>) };
    }
    found.push({ name, line: readme.slice(0, block.index).split('\n').length, script: body.slice(body.indexOf('\n') + 1), typescript });
  });
  return found;
}

const all = quickStarts(readmeText);

function quickStart(name: string): QuickStart {
  const found = all.find((start) => start.name === name);
  if (found === undefined) throw new Error(`README.md has no quick start "${name}" (a sh block whose first line is "# quick-start: ${name}")`);
  return found;
}

/** The script with every `from` replaced by `to`; each must occur, or the README changed under the test. */
function substitute(script: string, replacements: Array<[string, string]>): string {
  return replacements.reduce((text, [from, to]) => {
    if (!text.includes(from)) throw new Error(`the quick start no longer contains "${from}": update this test with it`);
    return text.split(from).join(to);
  }, script);
}

/** A temp folder, removed after all tests. */
const temps: string[] = [];
async function tempDir(name: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `fabric-ops-quickstart-${name}-`));
  temps.push(dir);
  return dir;
}

/** A folder with `fabric-ops` in it, as `npm install -g` or `npm link` puts it on the PATH: the checkout's bin. */
async function binDir(): Promise<string> {
  const dir = await tempDir('bin');
  await symlink(path.join(repoRoot, 'dist', 'cli.js'), path.join(dir, 'fabric-ops'));
  return dir;
}

interface Ran {
  code: number | null;
  output: string;
}

const running = new Set<ChildProcess>();

/** Runs `script` with `sh -e` in its own process group, to its end (bounded); whatever it left running is killed. */
function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 150_000): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-e', '-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      output += `\n(the quick start did not end within ${timeoutMs} ms: killed)`;
      killGroup(child);
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      killGroup(child);
      running.delete(child);
      resolve({ code, output });
    });
  });
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is gone
  }
}

/** The environment a reader's shell would have: this Node first on the PATH, a home of its own, no Fabric variables. */
async function readerEnv(extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const home = await tempDir('home');
  return { PATH: [nodeDir, process.env.PATH ?? ''].join(path.delimiter), HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), ...extra };
}

/** `npm install a b c`: only this package and its optional peer dependencies, linked from the checkout into `dir`/node_modules. */
async function installAsTheBlockSays(line: string, dir: string): Promise<string[]> {
  const names = line.replace(/^npm install\s+/, '').split(/\s+/);
  expect(names.filter((name) => ![packageName, 'fabric-shim', 'fabric-contract-api'].includes(name))).toEqual([]);
  await mkdir(path.join(dir, 'node_modules', '@types'), { recursive: true });
  for (const name of names) {
    await symlink(name === packageName ? repoRoot : path.join(repoRoot, 'node_modules', name), path.join(dir, 'node_modules', name));
  }
  await symlink(path.join(repoRoot, 'node_modules', '@types', 'node'), path.join(dir, 'node_modules', '@types', 'node'));
  return names;
}

beforeAll(() => {
  for (const file of ['dist/cli.js', 'dist/index.js', 'dist/chaincode/index.js']) {
    if (!existsSync(path.join(repoRoot, file))) throw new Error(`${file} is missing: run \`make build\` before this test`);
  }
});

afterAll(async () => {
  for (const child of running) killGroup(child);
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

test('the README has exactly these quick starts, each marked, in a "Quick starts" section', () => {
  expect(all.map((start) => start.name)).toEqual(['standalone', 'companion', 'fleet', 'helm', 'library', 'chaincode']);
  const section = readmeText.slice(readmeText.indexOf('\n## Quick starts\n'), readmeText.indexOf('\n## ', readmeText.indexOf('\n## Quick starts\n') + 1));
  expect(section.length).toBeGreaterThan(0);
  // Every shell block of that section is a quick start: none is left unchecked.
  expect((section.match(/^```(sh|bash)$/gm) ?? []).length).toBe(all.length);
  expect(all.filter((start) => start.line < readmeText.slice(0, readmeText.indexOf('\n## Quick starts\n')).split('\n').length)).toEqual([]);
});

test('the README stays a front door: at most about 250 lines, the two commands first', () => {
  const lines = readmeText.split('\n');
  expect(lines.length).toBeLessThanOrEqual(260);
  expect(lines.slice(0, 6).join('\n')).toMatch(/^# fabric-ops\n\n```sh\nmake run {5}# .*\nmake test {4}# .*\n```$/);
});

describe('standalone: make run, then curl', () => {
  /**
   * A copy of what `make run` reads (Makefile, scripts, package files, the built dist/), with this
   * checkout's node_modules: `make run` there runs the bundle as built, instead of rebuilding the
   * checkout's dist/ while other suites run it. Sources are left out, so nothing is stale; the
   * package files are dated in the past, so that npm is not run either.
   */
  async function checkoutCopy(): Promise<string> {
    const dir = await tempDir('checkout');
    for (const entry of ['Makefile', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts', 'dist']) {
      await cp(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true });
    }
    await symlink(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
    const past = new Date('2020-01-01T00:00:00Z');
    for (const entry of ['Makefile', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'])
      await utimes(path.join(dir, entry), past, past);
    for (const entry of await readdir(path.join(dir, 'scripts'))) await utimes(path.join(dir, 'scripts', entry), past, past);
    await writeFile(path.join(dir, 'dist', '.bundled'), '');
    return dir;
  }

  test('serves /healthz, takes a PUT /logspec and shows it, and stops', async () => {
    const start = quickStart('standalone');
    const port = await freeTcpPort();
    const script = substitute(start.script, [['127.0.0.1:9443', `127.0.0.1:${port}`]]);
    expect(script).toMatch(/^CORE_OPERATIONS_LISTENADDRESS=127\.0\.0\.1:\d+ make run &/m);
    const ran = await runScript(script, await checkoutCopy(), await readerEnv());
    expect({ code: ran.code, output: ran.output }).toEqual({ code: 0, output: expect.stringContaining('{"status":"OK"') as unknown });
    expect(ran.output).toContain('{"spec":"gossip=debug:info"}');
    expect(ran.output).toMatch(new RegExp(`operations server listening on http://127\\.0\\.0\\.1:${port}`));
  });
});

describe('companion: beside a double of a recorded Fabric 2.5.12 peer', () => {
  let network: FabricNetwork;
  beforeAll(async () => {
    network = await FabricNetwork.open('2.5.12');
    await network.start(['peer0.org1']);
  });
  afterAll(async () => {
    await network?.close();
  });

  test("on the release's sample core.yaml and the peer's environment: the peer's health, and its certificates' expiry", async () => {
    const start = quickStart('companion');
    const peer = network.node('peer0.org1');
    // The peer's configuration folder: the release's own sample core.yaml and MSP.
    const config = await tempDir('peer-config');
    const sampleDir = path.join(releaseDir('2.5.12'), 'sampleconfig');
    await copyFile(path.join(sampleDir, 'core.yaml'), path.join(config, 'core.yaml'));
    await cp(path.join(sampleDir, 'msp'), path.join(config, 'msp'), { recursive: true });
    const companionPort = await freeTcpPort();
    const script = substitute(start.script, [
      ['FABRIC_CFG_PATH=/etc/hyperledger/fabric', `FABRIC_CFG_PATH=${config}`],
      ['127.0.0.1:9449', `127.0.0.1:${companionPort}`],
    ]);
    // What the peer's own environment overrides say of its operations endpoint (TLS from its org's
    // operations CA); the companion reads the same, and is told which CA issued the peer's certificate.
    const peerUrl = new URL(peer.url);
    const env = await readerEnv({
      PATH: [await binDir(), nodeDir, process.env.PATH ?? ''].join(path.delimiter),
      CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${peerUrl.port}`,
      CORE_OPERATIONS_TLS_ENABLED: 'true',
      CORE_OPERATIONS_TLS_CERT_FILE: peer.certFile,
      CORE_OPERATIONS_TLS_KEY_FILE: peer.keyFile,
      CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: peer.caFile,
      CORE_OPERATIONS_COMPANION_NODE_ROOTCAS_FILES: peer.caFile,
      CORE_OPERATIONS_COMPANION_LISTENADDRESS: `127.0.0.1:${companionPort}`,
      // As the chart pins it beside a node: no container-runtime check (the sample core.yaml names Docker's socket).
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    });
    const ran = await runScript(script, config, env);
    expect({ code: ran.code, output: ran.output }).toEqual({ code: 0, output: expect.stringContaining('{"status":"OK"') as unknown });
    // Its /healthz is the peer's (the node checker called the double) and its metrics are the peer's certificates'.
    expect(ran.output).toContain(`companion of the peer at ${peer.url}/healthz`);
    expect(ran.output).toMatch(/companion_certificate_expiry_timestamp_seconds\{kind="msp_signcert",key="peer\.mspConfigPath",/);
  });
});

describe('fleet: one-shot status and versions over doubles of recorded peers', () => {
  let network: FabricNetwork;
  let second: FabricDouble;
  beforeAll(async () => {
    network = await FabricNetwork.open('2.5.12');
    await network.start(['peer0.org1']);
    // A second peer of org1: another double of the recorded peer0.org1 (the recording has one peer per org).
    const first = network.node('peer0.org1');
    const recorded = { name: 'peer0.org1', org: 'org1', dialect: 'peer' as const, mspDir: '', tlsCertFile: '' };
    second = new FabricDouble('2.5.12', recorded, first.ops, await tempDir('peer1'));
    await second.start();
  });
  afterAll(async () => {
    await second?.stop();
    await network?.close();
  });

  test("every node's health and version, asked with the group's credentials", async () => {
    const start = quickStart('fleet');
    const peer0 = network.node('peer0.org1');
    const dir = await tempDir('fleet');
    await mkdir(path.join(dir, 'org1'));
    await copyFile(peer0.clientCertFile, path.join(dir, 'org1', 'client.crt'));
    await copyFile(peer0.clientKeyFile, path.join(dir, 'org1', 'client.key'));
    await copyFile(peer0.caFile, path.join(dir, 'org1', 'ca.crt'));
    await chmod(path.join(dir, 'org1', 'client.key'), 0o600);
    const script = substitute(start.script, [
      ['https://peer0.org1.example.com:9443', peer0.url],
      ['https://peer1.org1.example.com:9443', second.url],
    ]);
    const ran = await runScript(script, dir, await readerEnv({ PATH: [await binDir(), nodeDir, process.env.PATH ?? ''].join(path.delimiter) }));
    expect({ code: ran.code, output: ran.output }).toEqual({ code: 0, output: expect.stringContaining('2/2 healthy (2 required): OK') as unknown });
    expect(ran.output).toMatch(/peer0\.org1 .*ok/);
    expect(ran.output).toMatch(/peer1\.org1 .*ok/);
    expect(ran.output).toContain('2.5.12');
  });
});

describe('helm: checked against the chart (no helm or cluster here)', () => {
  test("the values meet the schema, give a dedicated CA and a ServiceMonitor; the names are the chart's", () => {
    const lines = quickStart('helm')
      .script.split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => line !== '');
    expect(lines).toHaveLength(3);
    const [install = '', rollout = '', helmTest = ''] = lines;
    const installed = /^helm install (\S+) charts\/fabric-ops -n (\S+)((?: --set \S+)*)$/.exec(install);
    if (installed === null) throw new Error(`not a helm install of charts/fabric-ops: ${install}`);
    const [, release = '', namespace = '', sets = ''] = installed;
    const set: Record<string, unknown> = {};
    for (const assignment of sets.split(' --set ').filter(Boolean)) {
      const [key = '', value = ''] = assignment
        .trim()
        .replace(/^--set /, '')
        .split('=');
      set[key] = value === 'true' ? true : value === 'false' ? false : value;
    }
    expect(schemaErrors({ set })).toEqual([]);
    const values = mergedValues({ set }) as { tls: { provider: string }; serviceMonitor: { enabled: unknown }; config: { metrics: { provider: string } } };
    expect({ tls: values.tls.provider, serviceMonitor: values.serviceMonitor.enabled, metrics: values.config.metrics.provider }).toEqual({
      tls: 'certManager',
      serviceMonitor: true,
      metrics: 'prometheus',
    });
    // The fullname rule of templates/_helpers.tpl: the release name, with the chart's name appended unless it holds it.
    const helpers = readFileSync(path.join(repoRoot, 'charts/fabric-ops/templates/_helpers.tpl'), 'utf8');
    expect(helpers).toContain('{{- if contains $name .Release.Name -}}');
    const fullname = release.includes('fabric-ops') ? release : `${release}-fabric-ops`;
    expect(rollout).toBe(`kubectl -n ${namespace} rollout status deployment/${fullname}`);
    expect(helmTest).toBe(`helm test ${release} -n ${namespace}`);
    const templates = path.join(repoRoot, 'charts/fabric-ops/templates');
    // `helm test` runs the chart's test hooks: there must be one.
    const hooks = spawnSync('grep', ['-rlE', '^\\s*helm\\.sh/hook: test$', templates], { encoding: 'utf8' }).stdout.trim();
    expect(hooks.split('\n')).toContain(path.join(templates, 'tests', 'test-healthz.yaml'));
  });
});

describe('library: the TypeScript block compiled as the quick start says, and run', () => {
  test('/healthz runs the checker, /metrics has the counter, SIGTERM stops it', async () => {
    const start = quickStart('library');
    if (start.typescript === null) throw new Error('the library quick start has no TypeScript block before it');
    const fileName = /^\/\/ (\S+\.mts)\n/.exec(start.typescript.code)?.[1];
    expect(fileName).toBe('app.mts');
    const dir = await tempDir('library');
    await writeFile(path.join(dir, 'package.json'), '{ "name": "myapp", "private": true }\n');
    await writeFile(path.join(dir, 'app.mts'), start.typescript.code);
    const [install = '', run = '', ...rest] = start.script.split('\n').filter((line) => line.trim() !== '');
    expect(rest).toEqual([]);
    expect(await installAsTheBlockSays(install, dir)).toEqual([packageName]);
    // `npx tsc ... && node app.mjs`: each command in turn; tsc is this repository's.
    const [compile = '', serve = ''] = run.split(' && ');
    expect(compile).toMatch(/^npx tsc /);
    const compiled = spawnSync(process.execPath, [tsc, ...compile.replace(/^npx tsc /, '').split(/\s+/)], { cwd: dir, encoding: 'utf8' });
    expect({ status: compiled.status, output: `${compiled.stdout}${compiled.stderr}` }).toEqual({ status: 0, output: '' });
    expect(serve).toBe('node app.mjs');
    const port = await freeTcpPort();
    const env = await readerEnv({ CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${port}`, CORE_METRICS_PROVIDER: 'prometheus' });
    const app = spawn(process.execPath, ['app.mjs'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(app);
    let output = '';
    app.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    app.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => app.on('exit', (code) => resolve(code)));
    const health = await waitFor('the app answering /healthz', () => request(`http://127.0.0.1:${port}/healthz`).catch(() => undefined), {
      timeoutMs: 30_000,
      giveUpIf: () => (app.exitCode !== null ? `it exited ${app.exitCode}: ${output}` : undefined),
    });
    expect({ status: health.status, body: health.json }).toEqual({ status: 200, body: { status: 'OK', time: expect.any(String) as unknown } });
    const metrics = await request(`http://127.0.0.1:${port}/metrics`);
    expect(metrics.body).toMatch(/^myapp_orders_total 1$/m);
    expect(output).toContain('ready');
    app.kill('SIGTERM');
    expect(await exited).toBe(0);
    running.delete(app);
  });
});

describe('chaincode: the TypeScript block compiled as a chaincode main module, started as the quick start says', () => {
  test("the chaincode server's operations: /healthz and /version answer; SIGTERM stops it", async () => {
    const start = quickStart('chaincode');
    if (start.typescript === null) throw new Error('the chaincode quick start has no TypeScript block before it');
    const files = (start.typescript.marker.files ?? {}) as Record<string, string>;
    expect(Object.keys(files)).toEqual(['asset-contract']);
    const dir = await tempDir('chaincode');
    await writeFile(path.join(dir, 'package.json'), '{ "name": "asset-chaincode", "private": true, "main": "index.js" }\n');
    await writeFile(path.join(dir, 'index.ts'), start.typescript.code);
    await writeFile(path.join(dir, 'asset-contract.ts'), files['asset-contract'] ?? '');
    const [install = '', serve = '', ...rest] = start.script.split('\n').filter((line) => line.trim() !== '');
    expect(rest).toEqual([]);
    expect(await installAsTheBlockSays(install, dir)).toEqual([packageName, 'fabric-shim', 'fabric-contract-api']);
    const compiled = spawnSync(
      process.execPath,
      [tsc, '--module', 'commonjs', '--target', 'es2022', '--types', 'node', '--experimentalDecorators', '--skipLibCheck', 'index.ts', 'asset-contract.ts'],
      { cwd: dir, encoding: 'utf8' },
    );
    expect({ status: compiled.status, output: `${compiled.stdout}${compiled.stderr}` }).toEqual({ status: 0, output: '' });
    const [operationsPort, chaincodePort] = [await freeTcpPort(), await freeTcpPort()];
    const line = substitute(serve, [
      ['0.0.0.0:9998', `127.0.0.1:${operationsPort}`],
      ['0.0.0.0:9999', `127.0.0.1:${chaincodePort}`],
      ['npx fabric-chaincode-node', path.join(repoRoot, 'node_modules', '.bin', 'fabric-chaincode-node')],
    ]);
    const env = await readerEnv({ CHAINCODE_ID: 'asset_1.0:0123456789abcdef' });
    // `exec env ...`: the line as the reader's shell runs it ("$CHAINCODE_ID" expanded, the assignment for
    // the command only), with the chaincode as this child process, so that its own exit status is seen.
    const chaincode = spawn('sh', ['-c', `exec env ${line}`], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(chaincode);
    let output = '';
    chaincode.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    chaincode.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => chaincode.on('exit', (code) => resolve(code)));
    const health = await waitFor('the chaincode answering /healthz', () => request(`http://127.0.0.1:${operationsPort}/healthz`).catch(() => undefined), {
      timeoutMs: 60_000,
      giveUpIf: () => (chaincode.exitCode !== null ? `it exited ${chaincode.exitCode}: ${output}` : undefined),
    });
    expect(health.json).toMatchObject({ status: expect.any(String) as unknown });
    const version = await request(`http://127.0.0.1:${operationsPort}/version`);
    expect(version.status).toBe(200);
    const metrics = await request(`http://127.0.0.1:${operationsPort}/metrics`);
    expect(metrics.body).toMatch(/^health_check_status\{component="chaincode"\} [01]$/m);
    chaincode.kill('SIGTERM');
    expect(await exited).toBe(0);
    running.delete(chaincode);
  });
});
