import type { NormalisedConfig } from '../config/types';
import type { Logger, LoggerFactory } from '../logging/types';
import { CheckTimeoutError } from './abort-reasons';
import type * as CriModule from './cri-checker';
import type { CriChecker } from './cri-checker';
import { DockerChecker } from './docker-checker';
import { defaultCriSockets, defaultDockerSocket, formatRuntimeEndpoint, parseRuntimeEndpoint, type RuntimeEndpoint } from './endpoint';
import type { HealthChecker } from './types';
import { messageOf } from '../errors';
import { isSocket } from './quote';

export type ContainerRuntimeConfig = NormalisedConfig['health']['containerRuntime'];

export interface ContainerRuntimeChecker {
  component: 'docker' | 'cri';
  checker: HealthChecker;
  /** Releases the checker's connection (the CRI gRPC channel). Call it when the system stops. */
  close(): void;
}

export interface ContainerRuntimeOptions {
  /** How long each start-up probe (Docker `/version`, CRI `Version`) may take; default 2000 ms. */
  probeTimeoutMs?: number;
}

const defaultProbeTimeoutMs = 2000;

/**
 * The container-runtime checker the configuration asks for: null for type `none`; `docker`
 * or `cri` as configured; `auto` asks the endpoint as a Docker Engine, then as a CRI runtime,
 * and logs what it found. Logs the runtime's name and version at start when it answers.
 * Throws ConfigError for an endpoint that does not parse, TlsMaterialError for unreadable
 * Docker TLS files; a runtime that does not answer at start is not an error (its check fails).
 */
export async function createContainerRuntimeChecker(
  config: ContainerRuntimeConfig,
  loggers: LoggerFactory,
  options: ContainerRuntimeOptions = {},
): Promise<ContainerRuntimeChecker | null> {
  const logger = loggers.getLogger('health.runtime');
  const probeTimeoutMs = options.probeTimeoutMs ?? defaultProbeTimeoutMs;
  switch (config.type) {
    case 'none':
      return null;
    case 'docker': {
      const docker = newDocker(config, endpointOrDefault(config.endpoint, defaultDockerSocket));
      await logDockerVersion(docker, logger, probeTimeoutMs);
      return dockerResult(docker);
    }
    case 'cri': {
      const cri = newCri(config, endpointOrDefault(config.endpoint, firstExisting(defaultCriSockets) ?? defaultCriSockets[0]), logger);
      await logCriVersion(cri, logger, probeTimeoutMs);
      return criResult(cri);
    }
    case 'auto':
      return detect(config, logger, probeTimeoutMs);
  }
}

async function detect(config: ContainerRuntimeConfig, logger: Logger, probeTimeoutMs: number): Promise<ContainerRuntimeChecker> {
  const endpoint = endpointOrDefault(config.endpoint, firstExisting([defaultDockerSocket, ...defaultCriSockets]) ?? defaultDockerSocket);
  const where = formatRuntimeEndpoint(endpoint);

  const docker = newDocker(config, endpoint);
  let dockerFailure: string;
  try {
    const version = await withProbeSignal(probeTimeoutMs, (signal) => docker.version(signal));
    logger.info(`container runtime type auto: ${where} is a Docker Engine ${version.version} (API ${version.apiVersion}); registering the docker checker`, {
      endpoint: where,
      runtime: 'docker',
      version: version.version,
      apiVersion: version.apiVersion,
    });
    return dockerResult(docker);
  } catch (error) {
    dockerFailure = messageOf(error);
  }

  const cri = newCri(config, endpoint, logger);
  let criFailure: string;
  try {
    const version = await withProbeSignal(probeTimeoutMs, (signal) => cri.logVersion(signal));
    logger.info(`container runtime type auto: ${where} is a CRI runtime (${version.runtime_name}); registering the cri checker`, {
      endpoint: where,
      runtime: 'cri',
      runtimeName: version.runtime_name,
    });
    return criResult(cri);
  } catch (error) {
    criFailure = messageOf(error);
  }

  const guess = guessKind(endpoint);
  logger.warn(
    `container runtime type auto: nothing answered at ${where} as a Docker Engine (${dockerFailure}) or as a CRI runtime (${criFailure}); ` +
      `registering the ${guess} checker, which fails until the runtime answers. Set the runtime type to docker or cri to choose, or none for no check`,
    { endpoint: where, guess },
  );
  if (guess === 'docker') {
    cri.close();
    return dockerResult(docker);
  }
  return criResult(cri);
}

/** With nothing answering, the name decides: TCP or a socket named like docker's is Docker; other sockets are CRI. */
function guessKind(endpoint: RuntimeEndpoint): 'docker' | 'cri' {
  if (endpoint.kind === 'tcp') return 'docker';
  return /docker/i.test(endpoint.socketPath.split('/').pop() ?? '') ? 'docker' : 'cri';
}

function newDocker(config: ContainerRuntimeConfig, endpoint: RuntimeEndpoint): DockerChecker {
  const tls = config.dockerTls.enabled ? { caFile: config.dockerTls.caFile, certFile: config.dockerTls.certFile, keyFile: config.dockerTls.keyFile } : null;
  return new DockerChecker({ endpoint, tls });
}

/** gRPC and the CRI proto are loaded only here: most processes never check a CRI runtime. */
function newCri(config: ContainerRuntimeConfig, endpoint: RuntimeEndpoint, logger: Logger): CriChecker {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (see above); an import would load gRPC in every process
  const { CriChecker } = require('./cri-checker') as typeof CriModule;
  return new CriChecker({ endpoint, requiredConditions: config.requiredConditions, logger });
}

function dockerResult(docker: DockerChecker): ContainerRuntimeChecker {
  return { component: 'docker', checker: docker, close: () => undefined };
}

function criResult(cri: CriChecker): ContainerRuntimeChecker {
  return { component: 'cri', checker: cri, close: () => cri.close() };
}

async function logDockerVersion(docker: DockerChecker, logger: Logger, probeTimeoutMs: number): Promise<void> {
  const where = formatRuntimeEndpoint(docker.endpoint);
  try {
    const version = await withProbeSignal(probeTimeoutMs, (signal) => docker.version(signal));
    logger.info(`container runtime at ${where} is Docker Engine ${version.version} (API ${version.apiVersion})`, {
      endpoint: where,
      version: version.version,
      apiVersion: version.apiVersion,
    });
  } catch (error) {
    logger.warn(`the Docker daemon at ${where} does not answer at start: ${messageOf(error)}; the docker health check fails until it does`, {
      endpoint: where,
    });
  }
}

async function logCriVersion(cri: CriChecker, logger: Logger, probeTimeoutMs: number): Promise<void> {
  const where = formatRuntimeEndpoint(cri.endpoint);
  try {
    await withProbeSignal(probeTimeoutMs, (signal) => cri.logVersion(signal));
  } catch (error) {
    logger.warn(`the CRI runtime at ${where} does not answer at start: ${messageOf(error)}; the cri health check fails until it does`, {
      endpoint: where,
    });
  }
}

async function withProbeSignal<T>(timeoutMs: number, probe: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new CheckTimeoutError(timeoutMs)), timeoutMs);
  try {
    return await probe(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

function endpointOrDefault(endpoint: string, fallback: string): RuntimeEndpoint {
  return parseRuntimeEndpoint(endpoint === '' ? fallback : endpoint);
}

function firstExisting(paths: readonly string[]): string | undefined {
  return paths.find(isSocket);
}
