import { statSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { FabricOpsError, messageOf } from '../errors';
import type { Logger } from '../logging/types';
import { describeAbort } from './abort-reasons';
import { formatRuntimeEndpoint, grpcTarget, type RuntimeEndpoint } from './endpoint';
import { describeRefusedSocket, excerpt } from './quote';
import type { CheckResult, HealthChecker } from './types';

/**
 * The proto sits next to this file: src/health in the sources, dist/health once built
 * (scripts/copy-assets.js); the bundled command (dist/cli.js, scripts/bundle.js) runs from dist/.
 */
export const criProtoPath = path.basename(__dirname) === 'health' ? path.join(__dirname, 'cri.proto') : path.join(__dirname, 'health', 'cri.proto');

export interface CriVersion {
  /** Version of the CRI API the runtime speaks (`0.1.0` for v1). */
  version: string;
  runtime_name: string;
  runtime_version: string;
  runtime_api_version: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

interface StatusResponse {
  status: { conditions: RuntimeCondition[] } | null;
}

interface RuntimeServiceMethods {
  version: grpc.MethodDefinition<{ version: string }, CriVersion>;
  status: grpc.MethodDefinition<{ verbose: boolean }, StatusResponse>;
}

let methods: RuntimeServiceMethods | undefined;

function runtimeServiceMethods(): RuntimeServiceMethods {
  if (!methods) {
    const definition = protoLoader.loadSync(criProtoPath, { keepCase: true, defaults: true, longs: String, enums: String });
    const service = definition['runtime.v1.RuntimeService'] as grpc.ServiceDefinition | undefined;
    if (!service?.Version || !service.Status) throw new Error(`${criProtoPath} does not define runtime.v1.RuntimeService Version and Status`);
    methods = {
      version: service.Version as RuntimeServiceMethods['version'],
      status: service.Status as RuntimeServiceMethods['status'],
    };
  }
  return methods;
}

/** A failed call to the runtime, with a cause a person understands. */
export class CriRequestError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_CRI_REQUEST';
  /** The gRPC status of the failed call, or null when the call did not get that far. */
  readonly grpcStatus: grpc.status | null;
  constructor(message: string, grpcStatus: grpc.status | null) {
    super(message);
    this.grpcStatus = grpcStatus;
  }
}

export interface CriCheckerOptions {
  endpoint: RuntimeEndpoint;
  /** Conditions that must be reported true (e.g. RuntimeReady, NetworkReady). */
  requiredConditions: readonly string[];
  /** Where the runtime's name and version are logged once it is first reached. */
  logger: Logger;
}

/**
 * The `cri` health checker: gRPC `runtime.v1.RuntimeService` Status over the runtime's socket
 * (containerd, CRI-O). Fails when the runtime cannot be reached or a required condition is false.
 */
export class CriChecker implements HealthChecker {
  readonly endpoint: RuntimeEndpoint;
  private readonly requiredConditions: readonly string[];
  private readonly logger: Logger;
  private readonly client: grpc.Client;
  private versionLogged = false;

  constructor(options: CriCheckerOptions) {
    this.endpoint = options.endpoint;
    this.requiredConditions = options.requiredConditions;
    this.logger = options.logger;
    runtimeServiceMethods();
    this.client = new grpc.Client(grpcTarget(options.endpoint), grpc.credentials.createInsecure(), {
      // A runtime that restarts is found again within a second, not after gRPC's default 2 min backoff.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      'grpc.enable_retries': 0,
    });
  }

  async check(signal: AbortSignal): Promise<CheckResult> {
    try {
      if (!this.versionLogged) await this.logVersion(signal);
      const conditions = await this.status(signal);
      const problems = conditionProblems(conditions, this.requiredConditions);
      return problems.length === 0 ? { ok: true } : { ok: false, reason: problems.join('; ') };
    } catch (error) {
      return { ok: false, reason: `failed to get the CRI runtime status from ${formatRuntimeEndpoint(this.endpoint)}: ${messageOf(error)}` };
    }
  }

  /** Calls Version and logs the runtime's name and version (once). */
  async logVersion(signal: AbortSignal): Promise<CriVersion> {
    const version = await this.version(signal);
    if (!this.versionLogged) {
      this.versionLogged = true;
      this.logger.info(
        `container runtime at ${formatRuntimeEndpoint(this.endpoint)} is ${version.runtime_name} ${version.runtime_version} (CRI ${version.runtime_api_version})`,
        {
          endpoint: formatRuntimeEndpoint(this.endpoint),
          runtimeName: version.runtime_name,
          runtimeVersion: version.runtime_version,
          runtimeApiVersion: version.runtime_api_version,
        },
      );
    }
    return version;
  }

  version(signal: AbortSignal): Promise<CriVersion> {
    return this.call(runtimeServiceMethods().version, { version: '0.1.0' }, signal);
  }

  async status(signal: AbortSignal): Promise<RuntimeCondition[]> {
    const answer = await this.call(runtimeServiceMethods().status, { verbose: false }, signal);
    return answer.status?.conditions ?? [];
  }

  close(): void {
    this.client.close();
  }

  private call<Req, Res>(method: grpc.MethodDefinition<Req, Res>, request: Req, signal: AbortSignal): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      if (signal.aborted) {
        reject(new CriRequestError(describeAbort(signal), null));
        return;
      }
      const onAbort = (): void => call.cancel();
      const call = this.client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        new grpc.Metadata(),
        {},
        (error, response) => {
          signal.removeEventListener('abort', onAbort);
          if (signal.aborted) reject(new CriRequestError(describeAbort(signal), null));
          else if (error) reject(new CriRequestError(describeGrpcError(error, this.endpoint), error.code));
          else if (response === undefined) reject(new CriRequestError('the runtime answered with an empty message', null));
          else resolve(response);
        },
      );
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** One text per required condition that is not reported true: `NetworkReady is false: <reason>: <message>`. */
export function conditionProblems(conditions: readonly RuntimeCondition[], required: readonly string[]): string[] {
  const problems: string[] = [];
  for (const name of required) {
    const condition = conditions.find((c) => c.type === name);
    if (!condition) {
      problems.push(`${name} is not reported by the runtime`);
    } else if (!condition.status) {
      // The runtime's words, each cut as the Docker checker cuts the daemon's (src/health/quote.ts).
      const details = [condition.reason, condition.message]
        .filter((part) => part !== '')
        .map(excerpt)
        .join(': ');
      problems.push(details === '' ? `${name} is false` : `${name} is false: ${details}`);
    }
  }
  return problems;
}

/** grpc-js details without its timestamps and empty notes: `No connection established. Last error: Protocol error`. */
function cleanDetails(details: string): string {
  return details
    .replace(/\s*\(\d{4}-\d\d-\d\dT[\d:.]+Z\)/g, '')
    .replace(/\s*Resolution note:\s*$/, '')
    .trim()
    .replace(/\.$/, '');
}

function describeGrpcError(error: grpc.ServiceError, endpoint: RuntimeEndpoint): string {
  // Tested whole, quoted cut: the status message is the runtime's own text.
  const raw = cleanDetails(error.details || error.message);
  const details = excerpt(raw);
  switch (error.code) {
    case grpc.status.UNAVAILABLE:
      if (endpoint.kind === 'unix') {
        const socketPath = endpoint.socketPath;
        if (!exists(socketPath)) return `socket ${socketPath} does not exist (is the runtime running, and is its socket mounted here?)`;
        if (/EACCES|EPERM/.test(raw)) return `permission denied on socket ${socketPath} (the process needs read and write access to it)`;
        if (/ECONNREFUSED|ENOTSOCK/.test(raw)) return describeRefusedSocket(socketPath);
      }
      if (/Protocol error/i.test(raw)) return `unreachable: ${details} (it does not speak gRPC: is it a CRI runtime's socket?)`;
      return `unreachable: ${details}`;
    case grpc.status.UNIMPLEMENTED:
      return `it does not serve runtime.v1.RuntimeService (is it a CRI runtime, with its CRI plugin enabled?): ${details}`;
    default:
      return `${grpc.status[error.code] ?? error.code}: ${details}`;
  }
}

function exists(filePath: string): boolean {
  try {
    statSync(filePath);
    return true;
  } catch {
    return false;
  }
}
