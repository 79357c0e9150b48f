import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { startOperationsSystem } from '../../../src';
import { CriChecker, criProtoPath } from '../../../src/health/cri-checker';
import { DockerChecker } from '../../../src/health/docker-checker';
import { CaptureLoggers } from '../../support/capture-logger';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';

/**
 * Issue 18 items 12 and 14: what a CRI runtime says is bounded as the Docker checker bounds the
 * daemon's message (200 characters), and a regular file at the endpoint reads the same in both.
 * The runtime here is a gRPC server on a unix socket serving runtime.v1.RuntimeService from
 * src/health/cri.proto, answering as a runtime whose network plugin fails with a long message.
 */

const never = new AbortController().signal;
let dir: string;
let server: grpc.Server;
let socketPath: string;
/** What the runtime answers: a 3 MiB condition message (under gRPC's 4 MiB default limit), or a 3 MiB error. */
const hugeMessage = `cni plugin not initialized: ${'x'.repeat(3 * 1024 * 1024)}`;
/** A gRPC status message travels in a header: grpc-js refuses one of 3 MiB itself; 8 KB passes. */
const longError = `cni plugin not initialized: ${'x'.repeat(8000)}`;
let answer: 'conditions' | 'error' = 'conditions';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-cri-bounds-'));
  socketPath = path.join(dir, 'runtime.sock');
  const definition = protoLoader.loadSync(criProtoPath, { keepCase: true, defaults: true, longs: String, enums: String });
  const service = definition['runtime.v1.RuntimeService'] as grpc.ServiceDefinition;
  server = new grpc.Server();
  server.addService(service, {
    Version: (_call: unknown, done: grpc.sendUnaryData<unknown>) =>
      done(null, { version: '0.1.0', runtime_name: 'fake', runtime_version: '1.0', runtime_api_version: 'v1' }),
    Status: (_call: unknown, done: grpc.sendUnaryData<unknown>) => {
      if (answer === 'error') {
        done({ code: grpc.status.INTERNAL, details: longError });
        return;
      }
      done(null, {
        status: {
          conditions: [
            { type: 'RuntimeReady', status: true, reason: '', message: '' },
            { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: hugeMessage },
          ],
        },
      });
    },
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())),
  );
});

afterAll(async () => {
  server?.forceShutdown();
  await rm(dir, { recursive: true, force: true });
});

function checker(endpointPath = socketPath): CriChecker {
  return new CriChecker({
    endpoint: { kind: 'unix', socketPath: endpointPath },
    requiredConditions: ['RuntimeReady', 'NetworkReady'],
    logger: new CaptureLoggers().getLogger('x'),
  });
}

test('a 3 MiB condition message: /healthz and the log line carry at most 200 characters of it', async () => {
  answer = 'conditions';
  const logs = new LogCapture();
  const system = await startOperationsSystem({
    config: testConfig({ health: { containerRuntime: { type: 'cri', endpoint: `unix://${socketPath}` } } }),
    env: {},
    logStream: logs,
  });
  try {
    const health = await request(`${system.url}/healthz`);
    expect(health.status).toBe(503);
    expect(health.body.length).toBeLessThan(1000);
    const failed = (health.json as { failed_checks: Array<{ component: string; reason: string }> }).failed_checks;
    expect(failed).toEqual([
      {
        component: 'cri',
        reason: expect.stringMatching(/^NetworkReady is false: NetworkPluginNotReady: cni plugin not initialized: x+\.\.\. \(\d+ characters\)$/),
      },
    ]);
    // The runtime's message is cut to 200 characters, as the Docker checker cuts the daemon's.
    expect(failed[0]?.reason).toBe(`NetworkReady is false: NetworkPluginNotReady: ${hugeMessage.slice(0, 200)}... (${hugeMessage.length} characters)`);
    const logged = logs.matching(/health check cri is failing/);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.length).toBeLessThan(1000);
  } finally {
    await system.stop();
  }
});

test('a long gRPC error message from the runtime is bounded too', async () => {
  answer = 'error';
  const cri = checker();
  try {
    const result = await cri.check(never);
    expect(result).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^failed to get the CRI runtime status from unix:\/\/\S+: INTERNAL: cni plugin not initialized: x+\.\.\. \(\d+ characters\)$/,
      ),
    });
    expect(result.ok ? 0 : result.reason.length).toBeLessThan(400);
  } finally {
    cri.close();
    answer = 'conditions';
  }
});

test('a regular file as the endpoint: both checkers say "is not a socket"', async () => {
  const file = path.join(dir, 'not-a-socket');
  await writeFile(file, 'just a file');
  const cri = checker(file);
  try {
    await expect(cri.check(never)).resolves.toEqual({ ok: false, reason: `failed to get the CRI runtime status from unix://${file}: ${file} is not a socket` });
  } finally {
    cri.close();
  }
  const docker = new DockerChecker({ endpoint: { kind: 'unix', socketPath: file } });
  await expect(docker.check(never)).resolves.toEqual({ ok: false, reason: `failed to ping to Docker daemon: ${file} is not a socket` });
});
