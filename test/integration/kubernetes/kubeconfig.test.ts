import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { requireBuiltCli, runCli, runCliToEnd } from '../../support/cli';
import { FakeApiServer } from '../../support/fake-apiserver';
import { createTestPki, type TestPki } from '../../support/pki';
import { terminate } from '../../support/processes';
import { waitFor } from '../../support/wait';

/**
 * The credentials of a kubeconfig user as kubectl reads them (client-go's AuthInfo), against the
 * fake API server: `tokenFile:` (which client-node alone would drop, calling the API as
 * system:anonymous) is sent as the bearer token, relative to the kubeconfig's folder, re-read from the
 * file and without its newline; a field fabric-ops cannot honour stops the start (exit 1, as every
 * Kubernetes setup failure), naming it.
 */

let pki: TestPki;
let dir: string;
let api: FakeApiServer;
const namespace = 'fabric';

beforeAll(async () => {
  pki = await createTestPki();
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-kubeconfig-'));
  api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-from-file');
  await api.start();
  api.setConfigMap(namespace, 'logspec', { logspec: 'info' });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await pki?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function kubeconfig(user: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster: { server: api.url, 'certificate-authority-data': Buffer.from(pki.serverCA.certPem).toString('base64') } }],
    users: [{ name: 'operator', user }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'operator', namespace } }],
    'current-context': 'fake',
  });
}

async function writeKubeconfig(name: string, user: Record<string, unknown>): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, kubeconfig(user));
  return file;
}

/** The command with the logspec ConfigMap on and `file` as KUBECONFIG. */
function commandEnv(file: string): NodeJS.ProcessEnv {
  return {
    KUBECONFIG: file,
    POD_NAME: 'peer0-0',
    POD_NAMESPACE: namespace,
    CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
    CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME: 'logspec',
  };
}

/** The Authorization headers of the API calls the command made with `file` (it is stopped once one came). */
async function authorizationsSent(file: string): Promise<string[]> {
  requireBuiltCli();
  const before = api.requests.length;
  const cli = runCli([], commandEnv(file));
  try {
    await cli.listening();
    await waitFor('an API call', () => api.requests.length > before);
  } finally {
    await terminate(cli.child, cli.exited, 5000);
  }
  return [...new Set(api.requests.slice(before).map((request) => request.authorization))];
}

async function refusal(file: string): Promise<{ code: number | null; stderr: string }> {
  requireBuiltCli();
  return runCliToEnd([], commandEnv(file));
}

test('tokenFile (relative to the kubeconfig, with a trailing newline) is sent as the bearer token', async () => {
  await writeFile(path.join(dir, 'token'), 'token-from-file\n');
  const file = await writeKubeconfig('relative.yaml', { tokenFile: 'token' });
  expect(await authorizationsSent(file)).toEqual(['Bearer token-from-file']);
});

test('a tokenFile that cannot be read is refused at start, naming the field and the file', async () => {
  const file = await writeKubeconfig('missing.yaml', { tokenFile: 'no-such-token' });
  const { code, stderr } = await refusal(file);
  expect(code).toBe(1);
  expect(stderr).toContain(
    `cannot load Kubernetes credentials: ${file}: users[name="operator"].user.tokenFile: cannot read ${path.join(dir, 'no-such-token')}`,
  );
});

test('a FIFO at the tokenFile or at KUBECONFIG is refused at once, naming it (no start that hangs on a read)', async () => {
  const fifo = path.join(dir, 'token-fifo');
  execFileSync('mkfifo', [fifo]);
  const file = await writeKubeconfig('fifo-token.yaml', { tokenFile: 'token-fifo' });
  const token = await refusal(file);
  expect(token.code).toBe(1);
  expect(token.stderr).toContain(`users[name="operator"].user.tokenFile: cannot read ${fifo}: `);
  const kubeconfigFifo = path.join(dir, 'kubeconfig-fifo');
  execFileSync('mkfifo', [kubeconfigFifo]);
  const config = await refusal(kubeconfigFifo);
  expect(config.code).toBe(1);
  expect(config.stderr).toContain(`cannot load Kubernetes credentials: cannot read ${kubeconfigFifo}: `);
});

test.each([
  ['as-groups', ['system:masters']],
  ['as-uid', '1000'],
])('kubectl impersonation field %s, which fabric-ops would drop, is refused naming it', async (field, value) => {
  const file = await writeKubeconfig(`${field}.yaml`, { token: 'token-from-file', as: 'someone', [field]: value });
  const { code, stderr } = await refusal(file);
  expect(code).toBe(1);
  expect(stderr).toContain(`${file}: users[name="operator"].user.${field}: impersonation by ${field} is not supported`);
});

test('an unknown credential field (a typo of tokenFile) is refused naming it, not ignored into system:anonymous', async () => {
  const file = await writeKubeconfig('typo.yaml', { tokenfile: 'token' });
  const { code, stderr } = await refusal(file);
  expect(code).toBe(1);
  expect(stderr).toContain(`${file}: users[name="operator"].user.tokenfile: unknown credential field`);
});

test('an inline token still works, and wins over tokenFile as in kubectl', async () => {
  await writeFile(path.join(dir, 'other-token'), 'not-this-one');
  const file = await writeKubeconfig('inline.yaml', { token: 'token-from-file', tokenFile: 'other-token' });
  expect(await authorizationsSent(file)).toEqual(['Bearer token-from-file']);
});
