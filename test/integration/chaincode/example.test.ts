import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request, type HttpAnswer } from '../../support/http';
import { acceptsConnections, freeTcpPort } from '../../support/ports';
import { waitFor } from '../../support/wait';

/**
 * Issue 30 item 11: examples/chaincode-as-a-service installed as its README says, with
 * `"fabric-ops": "file:../.."` (npm links the checkout), reported a false state: fabric-ops
 * resolved the checkout's own fabric-shim (a dev dependency) and hooked it, while
 * `fabric-chaincode-node server` ran the example's; /healthz stayed 503 "the chaincode server has
 * not been created" while the server listened, and nothing warned. Installed here the README's way
 * (a copy of the example, the file: dependency pointed at this checkout, `npm install` from the
 * npm registry, `npm run build`) and started with the example's own `fabric-chaincode-node`.
 */

jest.setTimeout(300_000);

const repoRoot = path.resolve(__dirname, '../../..');
const exampleDir = path.join(repoRoot, 'examples/chaincode-as-a-service');
/** This Node first on the PATH: npm, the bins it links and the chaincode run on it. */
const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
let project: string;

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: { ...process.env, PATH }, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} in ${cwd} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

beforeAll(async () => {
  const built = path.join(repoRoot, 'dist/chaincode/index.js');
  if (!existsSync(built)) throw new Error(`${built} is missing: run \`make build\` before this test (the example links this checkout's dist/)`);
  project = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-cc-example-'));
  await cp(exampleDir, project, { recursive: true, filter: (source) => !/[\\/](node_modules|dist)$|\.tgz$/.test(source) });
  // The example's `file:../..`, from a copy outside the checkout: the same link, to the same checkout.
  await run('npm', ['pkg', 'set', `dependencies.fabric-ops=file:${repoRoot}`], project);
  await run('npm', ['install', '--no-audit', '--no-fund'], project);
  await run('npm', ['run', 'build'], project);
});

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

test('installed as shipped (fabric-ops linked from the checkout): /healthz is 200 once the chaincode server listens, no warning', async () => {
  // Probed, not port 0: fabric-shim's server does not say which port it bound.
  const ccPort = await freeTcpPort();
  const child = spawn(
    path.join(project, 'node_modules/.bin/fabric-chaincode-node'),
    ['server', `--chaincode-address=127.0.0.1:${ccPort}`, '--chaincode-id=kv_1.0:0123456789abcdef'],
    { cwd: project, env: { PATH, HOME: project, CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' } },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    const giveUpIf = (): string | undefined => (child.exitCode === null ? undefined : `the chaincode exited ${child.exitCode}: ${output}`);
    const url = await waitFor('the operations server URL', () => /operations server listening on (http:\/\/\S+)/.exec(output)?.[1], { giveUpIf });
    await waitFor('the chaincode server to listen', () => acceptsConnections(ccPort), { giveUpIf });
    const health = await waitFor(
      '/healthz 200 with the chaincode server listening',
      async (): Promise<HttpAnswer> => {
        const answer = await request(`${url}/healthz`);
        if (answer.status !== 200) throw new Error(`${answer.status} ${answer.body}`);
        return answer;
      },
      { giveUpIf },
    );
    expect((health.json as { status?: string }).status).toBe('OK');
    expect(output).toContain(`chaincode server listening on 127.0.0.1:${ccPort}`);
    expect(output).not.toMatch(/fabric-shim is loaded| WARN |fabric-ops: warning/);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    child.kill('SIGKILL');
  }
});
