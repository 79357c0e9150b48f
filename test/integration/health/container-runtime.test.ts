import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../../src/errors';
import { createContainerRuntimeChecker, type ContainerRuntimeChecker, type ContainerRuntimeConfig } from '../../../src/health/container-runtime';
import { CaptureLoggers } from '../../support/capture-logger';
import { containerRuntimeConfig } from '../../support/config';

let dir: string;
const opened: ContainerRuntimeChecker[] = [];
const servers: http.Server[] = [];
const never = new AbortController().signal;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'crt-'));
});
afterEach(async () => {
  for (const runtime of opened.splice(0)) runtime.close();
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function create(overrides: Partial<ContainerRuntimeConfig>, loggers = new CaptureLoggers()): Promise<ContainerRuntimeChecker | null> {
  const runtime = await createContainerRuntimeChecker(containerRuntimeConfig(overrides), loggers, { probeTimeoutMs: 1000 });
  if (runtime) opened.push(runtime);
  return runtime;
}

/** An HTTP server on a unix socket in the test dir. */
async function httpOnSocket(name: string, handler: http.RequestListener): Promise<string> {
  const socketPath = path.join(dir, name);
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  servers.push(server);
  return socketPath;
}

describe('createContainerRuntimeChecker', () => {
  it('registers nothing for type none', async () => {
    await expect(create({ type: 'none' })).resolves.toBeNull();
  });

  it('makes the docker checker for type docker and logs the engine version at start', async () => {
    const socketPath = await httpOnSocket('d1.sock', (req, res) =>
      res.end(req.url === '/version' ? JSON.stringify({ Version: '27.1.0', ApiVersion: '1.46' }) : 'OK'),
    );
    const loggers = new CaptureLoggers();
    const runtime = await create({ type: 'docker', endpoint: `unix://${socketPath}` }, loggers);
    expect(runtime?.component).toBe('docker');
    expect(loggers.find('info', /is Docker Engine 27\.1\.0 \(API 1\.46\)$/)).toHaveLength(1);
    await expect(runtime?.checker.check(never)).resolves.toEqual({ ok: true });
  });

  it('still makes the docker checker when the daemon does not answer at start, and warns', async () => {
    const missing = path.join(dir, 'missing-docker.sock');
    const loggers = new CaptureLoggers();
    const runtime = await create({ type: 'docker', endpoint: missing }, loggers);
    expect(runtime?.component).toBe('docker');
    expect(loggers.find('warn', /does not answer at start: socket .* does not exist/)).toHaveLength(1);
    await expect(runtime?.checker.check(never)).resolves.toMatchObject({ ok: false });
  });

  it('makes the cri checker for type cri even when the runtime is not up yet, and warns', async () => {
    const loggers = new CaptureLoggers();
    const runtime = await create({ type: 'cri', endpoint: path.join(dir, 'missing-cri.sock') }, loggers);
    expect(runtime?.component).toBe('cri');
    expect(loggers.find('warn', /the CRI runtime at unix:\/\/\S+ does not answer at start/)).toHaveLength(1);
  });

  it('refuses an endpoint that does not parse', async () => {
    await expect(create({ type: 'docker', endpoint: 'docker.sock' })).rejects.toThrow(ConfigError);
  });

  describe('type auto', () => {
    it('takes an HTTP server that answers /version like an engine for Docker', async () => {
      const socketPath = await httpOnSocket('d2.sock', (_req, res) => res.end(JSON.stringify({ Version: '20.10.24', ApiVersion: '1.41' })));
      const loggers = new CaptureLoggers();
      const runtime = await create({ type: 'auto', endpoint: socketPath }, loggers);
      expect(runtime?.component).toBe('docker');
      expect(loggers.find('info', /is a Docker Engine 20\.10\.24 \(API 1\.41\); registering the docker checker/)).toHaveLength(1);
    });

    it('falls back to the cri checker for a socket that answers neither way, and says what each probe got', async () => {
      const socketPath = await httpOnSocket('other.sock', (_req, res) => {
        res.statusCode = 404;
        res.end('not here');
      });
      const loggers = new CaptureLoggers();
      const runtime = await create({ type: 'auto', endpoint: socketPath }, loggers);
      expect(runtime?.component).toBe('cri');
      const [warning] = loggers.find('warn', /^container runtime type auto: nothing answered at/);
      expect(warning?.msg).toMatch(/as a Docker Engine \(unexpected answer HTTP 404: not here\) or as a CRI runtime \(/);
      expect(warning?.msg).toContain(
        "or as a CRI runtime (unreachable: No connection established. Last error: Protocol error (it does not speak gRPC: is it a CRI runtime's socket?))",
      );
      expect(warning?.msg).toMatch(/registering the cri checker, which fails until the runtime answers/);
    });

    it('guesses docker for a missing socket named like docker', async () => {
      const loggers = new CaptureLoggers();
      const runtime = await create({ type: 'auto', endpoint: path.join(dir, 'docker.sock') }, loggers);
      expect(runtime?.component).toBe('docker');
      expect(loggers.find('warn', /registering the docker checker/)).toHaveLength(1);
    });

    it('guesses cri for any other missing socket', async () => {
      const runtime = await create({ type: 'auto', endpoint: path.join(dir, 'containerd.sock') });
      expect(runtime?.component).toBe('cri');
    });
  });
});
