/**
 * `fabric-ops fleet status --fleet-config` reads nodes only: whatever the file says about where
 * put-backs are kept (`stateConfigMap` alone here), the one-shot run neither needs nor touches it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestPki, type TestPki } from '../../support/pki';
import { fleetCommandInProcess } from './harness';

let pki: TestPki;
let dir: string;

beforeAll(async () => {
  pki = await createTestPki();
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-oneshot-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await pki?.cleanup();
});

test('a fleet file with stateConfigMap and no stateDirectory: status answers (503 for a closed port, exit 1), not a usage error', async () => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const file = path.join(dir, 'fleet.yaml');
  await writeFile(
    file,
    [
      'stateConfigMap: fleet-putbacks',
      'groups:',
      `  ops: { tls: { caFiles: ['${pki.serverCA.cert}'], certFile: '${pki.client.cert}', keyFile: '${pki.client.key}' } }`,
      'nodes:',
      `  - { name: gone, url: 'https://127.0.0.1:${port}', group: ops }`,
      '',
    ].join('\n'),
  );
  const { code, stdout, stderr } = await fleetCommandInProcess(['status', '--fleet-config', file], {});
  expect(stderr).toBe('');
  expect(code).toBe(1);
  expect(stdout).toMatch(/^gone\s+ops\s+unknown\s+unreachable\s/m);
  expect(stdout).toContain('0/1 healthy (1 required): Service Unavailable');
});
