import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { build } from 'esbuild';
import { request } from '../../support/http';
import { acceptsConnections, freeTcpPort } from '../../support/ports';
import { waitFor } from '../../support/wait';

/**
 * A chaincode process as `fabric-chaincode-node server` runs it, with fabric-ops/chaincode
 * bundled from src/ (esbuild; the packages stay this repository's node_modules), in a
 * module dir under .tmp/ so that they resolve as in an installed project (issue 21 item 4).
 */

const repoRoot = path.resolve(__dirname, '../../..');
const fabricSampleConfig = path.resolve(repoRoot, '../shared/fixtures/fabric-sampleconfig');
let moduleDir: string;

const main = `const { enableChaincodeOperations } = require('./fabric-ops-chaincode.js');
const { Contract } = require('fabric-contract-api');
exports.operations = enableChaincodeOperations();
class Kv extends Contract {
  constructor() { super('kv'); }
  async get() { return 'x'; }
}
exports.contracts = [Kv];
`;

beforeAll(async () => {
  await mkdir(path.join(repoRoot, '.tmp'), { recursive: true });
  moduleDir = await mkdtemp(path.join(repoRoot, '.tmp', 'chaincode-start-'));
  await build({
    entryPoints: [path.join(repoRoot, 'src/chaincode/index.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    logLevel: 'warning',
    packages: 'external',
    outfile: path.join(moduleDir, 'fabric-ops-chaincode.js'),
  });
  await writeFile(path.join(moduleDir, 'main.js'), main);
  await writeFile(path.join(moduleDir, 'package.json'), JSON.stringify({ name: 'kv-start', version: '1.0.0', main: 'main.js' }));
}, 120_000);

afterAll(async () => {
  if (moduleDir) await rm(moduleDir, { recursive: true, force: true });
});

/** Runs the chaincode until it exits (at most 30 s); its status and output. */
function runChaincode(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string; stdout: string }> {
  // Port 0 for the chaincode server: no peer dials it here, each run exits on its operations settings.
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(repoRoot, 'node_modules/fabric-shim/cli.js'), 'server', '--chaincode-address=127.0.0.1:0', '--chaincode-id=kv:1'],
      { cwd: moduleDir, env: { PATH: process.env.PATH, HOME: moduleDir, ...env } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the chaincode did not exit within 30 s; stderr:\n${stderr}`));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

test('operations port taken: one fabric-ops line naming the address and the variable, exit 1, no usage text or stack', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address() as net.AddressInfo;
  try {
    const result = await runChaincode({ CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${port}` });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^fabric-ops: .*127\\.0\\.0\\.1:${port}.*CORE_OPERATIONS_LISTENADDRESS`));
    const everything = result.stdout + result.stderr;
    expect(everything).not.toMatch(/Options:|--help|Major failure|\n\s+at /);
  } finally {
    blocker.close();
  }
});

test('bad configuration: the problem named, exit 1, no usage text or stack', async () => {
  const result = await runChaincode({ CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', CORE_METRICS_PROVIDER: 'graphite' });
  expect(result.code).toBe(1);
  expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^fabric-ops: .*metrics\.provider.*graphite/)]);
  expect(result.stdout + result.stderr).not.toMatch(/Options:|--help|Major failure|\n\s+at /);
});

/**
 * Issue 30 item 12: a problem with the settings read when the chaincode's module calls
 * enableChaincodeOperations() (a peer CLI's FABRIC_CFG_PATH, a chaincode variable, the logging
 * spec) was thrown into fabric-shim's command line, which printed its usage text and then the
 * error with a stack trace. Now: one line per problem, first and alone on stderr, exit 1.
 */
describe('settings problems at the call: one fabric-ops line each, first and alone on stderr, exit 1', () => {
  test.each([
    [
      "the peer CLI's FABRIC_CFG_PATH (Fabric's sample core.yaml)",
      { FABRIC_CFG_PATH: fabricSampleConfig },
      [
        `fabric-ops: FABRIC_CFG_PATH=${fabricSampleConfig}: ${fabricSampleConfig}/core.yaml is a peer's configuration (it has peer.gossip, peer.fileSystemPath, peer.address, peer.id, ledger, vm, chaincode); ` +
          "a chaincode does not take a peer's configuration: unset FABRIC_CFG_PATH for the chaincode, or name the chaincode's own file in FABRIC_OPS_CHAINCODE_CONFIG (read whatever it holds)",
      ],
    ],
    [
      'a chaincode duration without a unit',
      { FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: '45' },
      ['fabric-ops: FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: "45" is not a duration (e.g. 10s, 1m30s, 500ms)'],
    ],
    [
      'a bad FABRIC_LOGGING_SPEC',
      { FABRIC_LOGGING_SPEC: 'shim=loud' },
      ["fabric-ops: FABRIC_LOGGING_SPEC: invalid logging specification 'shim=loud': bad segment 'shim=loud'"],
    ],
    [
      'two problems at once: both named',
      { FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: 'many', FABRIC_CFG_PATH: fabricSampleConfig },
      [
        'fabric-ops: FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: "many" is not a whole number from 0 to 10000',
        expect.stringMatching(/^fabric-ops: FABRIC_CFG_PATH=\S+: \S+core\.yaml is a peer's configuration .*unset FABRIC_CFG_PATH for the chaincode/),
      ],
    ],
  ])('%s', async (_what, env, lines) => {
    const result = await runChaincode({ CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', ...env });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr.split('\n') }).toEqual({ code: 1, stdout: '', stderr: [...lines, ''] });
  });
});

test('without fabric-shim installed: a MissingPeerDependencyError saying to install the optional peer dependency, no require stack', async () => {
  // A project outside this repository whose node_modules has everything but fabric-shim and fabric-contract-api.
  const project = await mkdtemp(path.join(tmpdir(), 'fabric-ops-no-shim-'));
  try {
    await mkdir(path.join(project, 'node_modules'));
    for (const entry of await readdir(path.join(repoRoot, 'node_modules'))) {
      if (entry === 'fabric-shim' || entry === 'fabric-contract-api' || entry.startsWith('.')) continue;
      await symlink(path.join(repoRoot, 'node_modules', entry), path.join(project, 'node_modules', entry));
    }
    await build({
      entryPoints: [path.join(repoRoot, 'src/chaincode/index.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      logLevel: 'warning',
      packages: 'external',
      outfile: path.join(project, 'fabric-ops-chaincode.js'),
    });
    const script = `try { require('./fabric-ops-chaincode.js').enableChaincodeOperations({ handleSignals: false }); } catch (e) {
      const classes = []; for (let p = Object.getPrototypeOf(e); p; p = Object.getPrototypeOf(p)) classes.push(p.constructor.name);
      console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message, fabricOps: classes.includes('FabricOpsError') }));
    }`;
    const output = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', script], { cwd: project, env: { PATH: process.env.PATH, CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('exit', () => resolve({ stdout, stderr }));
    });
    expect({ stderr: output.stderr, stdoutLines: output.stdout.trim().split('\n').length }).toEqual({ stderr: '', stdoutLines: 1 });
    const { peerDependencies } = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
    const peerRange = peerDependencies['fabric-shim'];
    expect(JSON.parse(output.stdout)).toEqual({
      name: 'MissingPeerDependencyError',
      code: 'FABRIC_OPS_MISSING_PEER_DEPENDENCY',
      fabricOps: true,
      message:
        'fabric-ops/chaincode needs fabric-shim, an optional peer dependency of fabric-ops that is not installed where fabric-ops is: ' +
        `install it beside fabric-ops (npm install fabric-shim@${peerRange}); fabric-contract-api too for contract chaincodes`,
    });
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});

/**
 * Issue 30 item 11: two copies of fabric-shim in one process. fabric-ops hooks the one the
 * chaincode runs; a server made by another copy was invisible and nothing said so (/healthz: "the
 * chaincode server has not been created" while it listened). An application whose main module
 * resolves the repository's fabric-shim, and which then serves through a second copy (as a
 * library that bundles its own would): one warning naming both folders, and /healthz's reason names them.
 */
test('a second copy of fabric-shim that makes the server: one warning naming both copies, and /healthz says why it sees no server', async () => {
  const vendored = path.join(moduleDir, 'vendor/node_modules/fabric-shim');
  const shipped = path.join(repoRoot, 'node_modules/fabric-shim');
  await mkdir(vendored, { recursive: true });
  for (const entry of ['package.json', 'index.js', 'lib', 'node_modules']) await cp(path.join(shipped, entry), path.join(vendored, entry), { recursive: true });
  await writeFile(
    path.join(moduleDir, 'app.js'),
    `const { enableChaincodeOperations } = require('./fabric-ops-chaincode.js');
exports.operations = enableChaincodeOperations();
const second = require('./vendor/node_modules/fabric-shim');
const chaincode = { Init: async () => second.success(), Invoke: async () => second.success() };
second.server(chaincode, { ccid: 'kv:1', address: '127.0.0.1:' + process.env.CC_PORT }).start();
`,
  );
  // Probed, not port 0: fabric-shim's server does not say which port it bound.
  const ccPort = await freeTcpPort();
  const child = spawn(process.execPath, ['app.js'], {
    cwd: moduleDir,
    env: { PATH: process.env.PATH, HOME: moduleDir, CC_PORT: String(ccPort), CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    const giveUpIf = (): string | undefined => (child.exitCode === null ? undefined : `the application exited ${child.exitCode}: ${output}`);
    const url = await waitFor('the operations server URL', () => /operations server listening on (http:\/\/\S+)/.exec(output)?.[1], { giveUpIf });
    await waitFor('the chaincode server made by the second copy to listen', () => acceptsConnections(ccPort), { giveUpIf });
    const health = await request(`${url}/healthz`);
    const note =
      `fabric-ops hooks the fabric-shim at ${shipped}, and another copy is loaded (${vendored}): a server made by that copy is not seen; ` +
      'keep one copy of fabric-shim in the chaincode (`npm ls fabric-shim` lists them)';
    expect({ status: health.status, failed: (health.json as { failed_checks?: unknown }).failed_checks }).toEqual({
      status: 503,
      failed: [{ component: 'chaincode', reason: `the chaincode server has not been created (fabric-shim server() was not called): ${note}` }],
    });
    const warnings = output.split('\n').filter((line) => line.includes('fabric-shim is loaded'));
    expect(warnings).toEqual([
      expect.stringContaining(`fabric-shim is loaded 2 times in this process: ${shipped} (the copy fabric-ops hooks) and ${vendored}; `),
    ]);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});
