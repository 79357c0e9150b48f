import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startOperationsSystem, type OperationsSystem } from '../../../src';
import { createContainerRuntimeChecker } from '../../../src/health/container-runtime';
import { DockerChecker } from '../../../src/health/docker-checker';
import { CaptureLoggers } from '../../support/capture-logger';
import { containerRuntimeConfig, testConfig } from '../../support/config';
import { PrivateDockerd } from '../../support/dockerd';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type TestPki } from '../../support/pki';
import { freePort } from '../../support/ports';

const jsonEnv = { FABRIC_LOGGING_FORMAT: 'json' };
const sampleCoreYaml = path.resolve(__dirname, '../../../../shared/fixtures/fabric-sampleconfig/core.yaml');
const never = new AbortController().signal;

/**
 * Against a private Docker engine started by this file (its own socket, data and exec roots,
 * and a TLS listener on 127.0.0.1), never the machine's shared one.
 */
describe('health against a private Docker engine', () => {
  let pki: TestPki;
  let dockerd: PrivateDockerd;

  beforeAll(async () => {
    pki = await createTestPki();
    // Probed: PrivateDockerd (test/support/dockerd.ts) passes the port to dockerd's -H flag and
    // waits on it; reading a bound port 0 back from dockerd's log is not done yet.
    dockerd = await PrivateDockerd.start({
      tls: { port: await freePort(), caFile: pki.clientCA.cert, certFile: pki.server.cert, keyFile: pki.server.key },
    });
  });
  afterAll(async () => {
    await dockerd?.dispose();
    await pki?.cleanup();
  });

  describe('the docker checker', () => {
    it('passes against the running engine and reads its version', async () => {
      const checker = new DockerChecker({ endpoint: { kind: 'unix', socketPath: dockerd.socketPath } });
      await expect(checker.check(never)).resolves.toEqual({ ok: true });
      await expect(checker.version(never)).resolves.toEqual({ version: expect.stringMatching(/^\d+\.\d+/), apiVersion: expect.stringMatching(/^1\.\d+$/) });
    });

    it('pings over TCP with TLS, presenting a client certificate the engine verifies', async () => {
      const checker = new DockerChecker({
        endpoint: { kind: 'tcp', host: 'localhost', port: dockerd.tls?.port ?? 0 },
        tls: { caFile: pki.serverCA.cert, certFile: pki.client.cert, keyFile: pki.client.key },
      });
      await expect(checker.check(never)).resolves.toEqual({ ok: true });
    });

    it('fails over TLS when the engine refuses a client certificate from another CA', async () => {
      const checker = new DockerChecker({
        endpoint: { kind: 'tcp', host: 'localhost', port: dockerd.tls?.port ?? 0 },
        tls: { caFile: pki.serverCA.cert, certFile: pki.untrustedClient.cert, keyFile: pki.untrustedClient.key },
      });
      const result = await checker.check(never);
      expect(result.ok).toBe(false);
      expect(result.ok === false && result.reason).toMatch(/^failed to ping to Docker daemon: /);
    });

    it('is what type auto finds on a Docker socket, and it says so', async () => {
      const loggers = new CaptureLoggers();
      const runtime = await createContainerRuntimeChecker(containerRuntimeConfig({ type: 'auto', endpoint: dockerd.endpoint }), loggers);
      expect(runtime?.component).toBe('docker');
      expect(
        loggers.find('info', /^container runtime type auto: unix:\/\/\S+ is a Docker Engine \S+ \(API 1\.\d+\); registering the docker checker$/),
      ).toHaveLength(1);
      await expect(runtime?.checker.check(never)).resolves.toEqual({ ok: true });
    });
  });

  describe('/healthz with the docker checker configured', () => {
    let system: OperationsSystem;
    let logs: LogCapture;

    beforeAll(async () => {
      logs = new LogCapture();
      system = await startOperationsSystem({
        config: testConfig({ health: { containerRuntime: { type: 'docker', endpoint: dockerd.endpoint } } }),
        env: jsonEnv,
        logStream: logs,
      });
    });
    afterAll(async () => system?.stop());

    it('logs the engine and its version at start', () => {
      expect(logs.matching(/container runtime at unix:\/\/\S+ is Docker Engine \S+ \(API 1\.\d+\)/)).toHaveLength(1);
    });

    it('answers 200 while the engine runs, 503 with the docker entry once it stops, and 200 again once it is back', async () => {
      const healthy = await request(`${system.url}/healthz`);
      expect(healthy.status).toBe(200);
      expect(healthy.json).toEqual({ status: 'OK', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/) });

      await dockerd.stop();
      const down = await request(`${system.url}/healthz`);
      expect(down.status).toBe(503);
      expect(down.json).toEqual({
        status: 'Service Unavailable',
        time: expect.any(String),
        failed_checks: [
          {
            component: 'docker',
            reason: `failed to ping to Docker daemon: socket ${dockerd.socketPath} does not exist (is the Docker daemon running, and is its socket mounted here?)`,
          },
        ],
      });

      await dockerd.start();
      const back = await request(`${system.url}/healthz`);
      expect(back.status).toBe(200);
      expect(back.json).toEqual({ status: 'OK', time: expect.any(String) });

      expect(logs.matching(/health check docker is failing: failed to ping to Docker daemon: socket .* does not exist/)).toHaveLength(1);
      expect(logs.matching(/health check docker is ok again/)).toHaveLength(1);
    });
  });

  describe("a real core.yaml: Fabric's vm.endpoint registers the docker checker", () => {
    const peerEnv = (vmEndpoint: string): NodeJS.ProcessEnv => ({
      ...jsonEnv,
      CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
      CORE_VM_ENDPOINT: vmEndpoint,
    });

    it('checks the engine named by vm.endpoint', async () => {
      const system = await startOperationsSystem({ configFile: sampleCoreYaml, env: peerEnv(dockerd.endpoint), logStream: new LogCapture() });
      try {
        expect(system.health.components()).toEqual(['docker']);
        expect((await request(`${system.url}/healthz`)).status).toBe(200);
      } finally {
        await system.stop();
      }
    });

    it('fails forever when vm.endpoint names a socket that is not there (the Kubernetes trap)', async () => {
      const missing = path.join(dockerd.dir, 'not-mounted.sock');
      const system = await startOperationsSystem({ configFile: sampleCoreYaml, env: peerEnv(`unix://${missing}`), logStream: new LogCapture() });
      try {
        const answer = await request(`${system.url}/healthz`);
        expect(answer.status).toBe(503);
        expect(answer.json).toMatchObject({ failed_checks: [{ component: 'docker', reason: expect.stringContaining(`socket ${missing} does not exist`) }] });
      } finally {
        await system.stop();
      }
    });

    async function expectNoChecker(system: OperationsSystem): Promise<void> {
      try {
        expect(system.health.components()).toEqual([]);
        const answer = await request(`${system.url}/healthz`);
        expect(answer.status).toBe(200);
        expect(answer.json).toEqual({ status: 'OK', time: expect.any(String) });
      } finally {
        await system.stop();
      }
    }

    it('registers no checker when vm.endpoint is empty in core.yaml (the fix for that trap)', async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'core-'));
      try {
        const coreYaml = readFileSync(sampleCoreYaml, 'utf8');
        const emptied = coreYaml.replace(/^( {2}endpoint: )unix:\/\/\/var\/run\/docker\.sock$/m, '$1""');
        expect(emptied).not.toBe(coreYaml);
        writeFileSync(path.join(dir, 'core.yaml'), emptied);
        // An empty CORE_VM_ENDPOINT does not clear it (empty variables are ignored, as viper does), so the file says it.
        const env = { ...jsonEnv, CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' };
        await expectNoChecker(await startOperationsSystem({ configFile: path.join(dir, 'core.yaml'), env, logStream: new LogCapture() }));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('registers no checker when the runtime type is none, whatever vm.endpoint says (the other fix)', async () => {
      const env = { ...peerEnv(`unix://${path.join(dockerd.dir, 'not-mounted.sock')}`), CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none' };
      await expectNoChecker(await startOperationsSystem({ configFile: sampleCoreYaml, env, logStream: new LogCapture() }));
    });
  });
});
