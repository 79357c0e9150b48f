import { isIP } from 'node:net';
import { ConfigError } from '../errors';

/** Where a container runtime listens. */
export type RuntimeEndpoint = { kind: 'unix'; socketPath: string } | { kind: 'tcp'; host: string; port: number };

/** The usual sockets, in the order `auto` looks for them when no endpoint is configured. */
export const defaultDockerSocket = '/var/run/docker.sock';
export const defaultCriSockets = ['/run/containerd/containerd.sock', '/var/run/crio/crio.sock'] as const;

const forms = 'use unix:///path/to.sock, /path/to.sock or tcp://host:port';

/**
 * Parses `unix:///abs/path`, `/abs/path`, or `tcp://host:port` (also `http://` and
 * `https://`, which Fabric's `vm.endpoint` accepts for the same TCP connection).
 * Throws ConfigError naming the value.
 */
export function parseRuntimeEndpoint(text: string): RuntimeEndpoint {
  if (text.startsWith('unix://') || text.startsWith('/')) {
    const socketPath = text.startsWith('unix://') ? text.slice('unix://'.length) : text;
    if (!socketPath.startsWith('/')) {
      throw new ConfigError([`container runtime endpoint ${JSON.stringify(text)}: the socket path must be absolute (${forms})`]);
    }
    return { kind: 'unix', socketPath };
  }
  const tcp = /^(?:tcp|https?):\/\/(?:\[([^\]]+)\]|([^/:[\]]+)):(\d{1,5})\/?$/.exec(text);
  if (tcp) {
    const host = tcp[1] ?? tcp[2] ?? '';
    const port = Number(tcp[3]);
    if (tcp[1] !== undefined && isIP(host) !== 6) {
      throw new ConfigError([`container runtime endpoint ${JSON.stringify(text)}: ${JSON.stringify(host)} is not an IPv6 address`]);
    }
    if (port < 1 || port > 65535) {
      throw new ConfigError([`container runtime endpoint ${JSON.stringify(text)}: port ${port} is not in 1..65535`]);
    }
    return { kind: 'tcp', host, port };
  }
  throw new ConfigError([`container runtime endpoint ${JSON.stringify(text)} is not an endpoint (${forms})`]);
}

/** `unix:///path` or `tcp://host:port`, for messages and logs. */
export function formatRuntimeEndpoint(endpoint: RuntimeEndpoint): string {
  if (endpoint.kind === 'unix') return `unix://${endpoint.socketPath}`;
  const host = isIP(endpoint.host) === 6 ? `[${endpoint.host}]` : endpoint.host;
  return `tcp://${host}:${endpoint.port}`;
}

/** The address @grpc/grpc-js dials. */
export function grpcTarget(endpoint: RuntimeEndpoint): string {
  if (endpoint.kind === 'unix') return `unix://${endpoint.socketPath}`;
  const host = isIP(endpoint.host) === 6 ? `[${endpoint.host}]` : endpoint.host;
  return `${host}:${endpoint.port}`;
}
