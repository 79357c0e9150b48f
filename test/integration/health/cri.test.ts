import { rm } from 'node:fs/promises';
import path from 'node:path';
import { startOperationsSystem } from '../../../src';
import { createContainerRuntimeChecker } from '../../../src/health/container-runtime';
import { CriChecker } from '../../../src/health/cri-checker';
import { HealthService } from '../../../src/health/health-service';
import { CaptureLoggers } from '../../support/capture-logger';
import { testConfig } from '../../support/config';
import { TestContainerd } from '../../support/containerd';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { waitFor } from '../../support/wait';

const jsonEnv = { FABRIC_LOGGING_FORMAT: 'json' };
const sampleOrdererYaml = path.resolve(__dirname, '../../../../shared/fixtures/fabric-sampleconfig/orderer.yaml');

/** The checker against a real containerd with its CRI plugin and no CNI configured. */
describe('CRI checker against a real containerd', () => {
  let containerd: TestContainerd;
  const checkers: CriChecker[] = [];
  const never = new AbortController().signal;

  beforeAll(async () => {
    containerd = await TestContainerd.start();
  });
  afterAll(async () => {
    for (const checker of checkers) checker.close();
    await containerd?.dispose();
  });

  function criChecker(requiredConditions: string[], socketPath = containerd.socketPath, loggers = new CaptureLoggers()): CriChecker {
    const checker = new CriChecker({ endpoint: { kind: 'unix', socketPath }, requiredConditions, logger: loggers.getLogger('health.runtime') });
    checkers.push(checker);
    return checker;
  }

  it('Version answers with containerd and its version', async () => {
    const version = await criChecker([]).version(never);
    expect(version.runtime_name).toBe('containerd');
    expect(version.runtime_version).toMatch(/^\d+\.\d+/);
    expect(version.runtime_api_version).toBe('v1');
  });

  it('Status reports RuntimeReady true and NetworkReady false (NetworkPluginNotReady)', async () => {
    const conditions = await criChecker([]).status(never);
    expect(conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'RuntimeReady', status: true }),
        expect.objectContaining({ type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady' }),
      ]),
    );
  });

  it('fails with the condition, its reason and its message when NetworkReady is required', async () => {
    const result = await criChecker(['RuntimeReady', 'NetworkReady']).check(never);
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/^NetworkReady is false: NetworkPluginNotReady: .*cni/) });
  });

  it('passes when only RuntimeReady is required', async () => {
    await expect(criChecker(['RuntimeReady']).check(never)).resolves.toEqual({ ok: true });
  });

  it('logs the runtime name and version once, on the first check', async () => {
    const loggers = new CaptureLoggers();
    const checker = criChecker(['RuntimeReady'], containerd.socketPath, loggers);
    await checker.check(never);
    await checker.check(never);
    const lines = loggers.find('info', /is containerd /);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.msg).toMatch(new RegExp(`^container runtime at unix://${containerd.socketPath} is containerd \\S+ \\(CRI v1\\)$`));
  });

  it('says the socket does not exist', async () => {
    const missing = path.join(containerd.dir, 'missing.sock');
    await expect(criChecker(['RuntimeReady'], missing).check(never)).resolves.toEqual({
      ok: false,
      reason: `failed to get the CRI runtime status from unix://${missing}: socket ${missing} does not exist (is the runtime running, and is its socket mounted here?)`,
    });
  });

  it('createContainerRuntimeChecker (type cri) logs the runtime at start', async () => {
    const loggers = new CaptureLoggers();
    const runtime = await createContainerRuntimeChecker(
      {
        type: 'cri',
        endpoint: containerd.endpoint,
        requiredConditions: ['RuntimeReady'],
        dockerTls: { enabled: false, caFile: '', certFile: '', keyFile: '' },
      },
      loggers,
    );
    try {
      expect(runtime?.component).toBe('cri');
      expect(loggers.find('info', /is containerd \S+ \(CRI v1\)/)).toHaveLength(1);
      await expect(runtime?.checker.check(never)).resolves.toEqual({ ok: true });
    } finally {
      runtime?.close();
    }
  });

  it('createContainerRuntimeChecker (type auto) finds a CRI runtime, not Docker, and says so', async () => {
    const loggers = new CaptureLoggers();
    const runtime = await createContainerRuntimeChecker(
      {
        type: 'auto',
        endpoint: containerd.socketPath,
        requiredConditions: ['RuntimeReady', 'NetworkReady'],
        dockerTls: { enabled: false, caFile: '', certFile: '', keyFile: '' },
      },
      loggers,
    );
    try {
      expect(runtime?.component).toBe('cri');
      expect(loggers.find('info', /^container runtime type auto: unix:\/\/\S+ is a CRI runtime \(containerd\); registering the cri checker$/)).toHaveLength(1);
      await expect(runtime?.checker.check(never)).resolves.toMatchObject({ ok: false, reason: expect.stringContaining('NetworkPluginNotReady') });
    } finally {
      runtime?.close();
    }
  });

  describe('/healthz of an operations system with the cri checker', () => {
    it('answers 503 with the cri entry carrying NetworkPluginNotReady when NetworkReady is required (the default)', async () => {
      const logs = new LogCapture();
      const system = await startOperationsSystem({
        config: testConfig({ health: { containerRuntime: { type: 'cri', endpoint: containerd.endpoint } } }),
        env: jsonEnv,
        logStream: logs,
      });
      try {
        expect(logs.matching(/container runtime at unix:\/\/\S+ is containerd \S+ \(CRI v1\)/)).toHaveLength(1);
        const answer = await request(`${system.url}/healthz`);
        expect(answer.status).toBe(503);
        expect(answer.json).toEqual({
          status: 'Service Unavailable',
          time: expect.any(String),
          failed_checks: [{ component: 'cri', reason: expect.stringMatching(/^NetworkReady is false: NetworkPluginNotReady: /) }],
        });
        expect(logs.matching(/health check cri is failing: NetworkReady is false: NetworkPluginNotReady/)).toHaveLength(1);
      } finally {
        await system.stop();
      }
    });

    it('answers 200 when the configuration requires only RuntimeReady', async () => {
      const system = await startOperationsSystem({
        config: testConfig({ health: { containerRuntime: { type: 'cri', endpoint: containerd.endpoint, requiredConditions: ['RuntimeReady'] } } }),
        env: jsonEnv,
        logStream: new LogCapture(),
      });
      try {
        const answer = await request(`${system.url}/healthz`);
        expect(answer.status).toBe(200);
        expect(answer.json).toEqual({ status: 'OK', time: expect.any(String) });
      } finally {
        await system.stop();
      }
    });

    it("reads the orderer dialect's Operations.HealthCheck.* keys (here from the environment)", async () => {
      const env = {
        ...jsonEnv,
        ORDERER_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
        ORDERER_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'auto',
        ORDERER_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_ENDPOINT: containerd.endpoint,
        ORDERER_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_REQUIREDCONDITIONS: 'RuntimeReady',
        ORDERER_OPERATIONS_HEALTHCHECK_TIMEOUT: '1500ms',
      };
      const logs = new LogCapture();
      const system = await startOperationsSystem({ configFile: sampleOrdererYaml, env, logStream: logs });
      try {
        expect(system.config.health.timeoutMs).toBe(1500);
        expect(system.health.components()).toEqual(['cri']);
        expect(logs.matching(/container runtime type auto: \S+ is a CRI runtime \(containerd\); registering the cri checker/)).toHaveLength(1);
        expect((await request(`${system.url}/healthz`)).status).toBe(200);
      } finally {
        await system.stop();
      }
    });
  });

  describe('through HealthService while containerd stops and starts', () => {
    it('fails while containerd is down and passes again once it is back', async () => {
      const loggers = new CaptureLoggers();
      const service = new HealthService({ timeoutMs: 2000, loggers });
      service.register('cri', criChecker(['RuntimeReady']));
      await expect(service.check()).resolves.toMatchObject({ status: 'OK' });

      await containerd.stop();
      await rm(containerd.socketPath, { force: true });
      const down = await service.check();
      expect(down.status).toBe('Service Unavailable');
      expect(down.failed_checks).toEqual([{ component: 'cri', reason: expect.stringMatching(/^failed to get the CRI runtime status from unix:\/\/\S+: /) }]);

      await containerd.restart();
      // gRPC reconnects with a backoff of at most 1 s: polled until the check passes.
      const report = await waitFor(
        'the cri check to pass again',
        async () => {
          const checked = await service.check();
          return checked.status === 'OK' && checked;
        },
        { timeoutMs: 15_000, everyMs: 100 },
      );
      expect(report).toMatchObject({ status: 'OK' });
      expect(loggers.find('warn', /health check cri is failing/)).toHaveLength(1);
      expect(loggers.find('info', /health check cri is ok again/)).toHaveLength(1);
    });
  });
});
