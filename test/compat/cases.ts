import type { NodeKind } from '../support/fabric-reference';
import { sentRequestId } from './client';
import { methods, type ClientCert, type HttpCase, type Method } from './model';

/** The four endpoints, then near misses: trailing slash, case, query, double slash, unknown. */
export const paths = [
  '/logspec',
  '/healthz',
  '/metrics',
  '/version',
  '/logspec/',
  '/LOGSPEC',
  '/logspec?x=1',
  '//logspec',
  '/healthz/',
  '/version/',
  '/metrics/',
  '/nothing-here',
] as const;

const mutating: ReadonlySet<Method> = new Set(['PUT', 'POST', 'DELETE', 'PATCH']);
export const caseBody = '{"spec":"compat=debug:info"}';

function endpointCase(group: string, node: NodeKind, method: Method, path: string, client: ClientCert): HttpCase {
  const withBody = method === 'PUT' || method === 'POST' || method === 'PATCH';
  return {
    id: `${group}/${node}/${client}/${method} ${path}`,
    group,
    node,
    method,
    path,
    client,
    ...(withBody ? { body: caseBody, headers: { 'Content-Type': 'application/json' } } : {}),
    transport: 'native',
    checkState: mutating.has(method),
  };
}

/** Every endpoint and near miss with every method, for each client certificate given. */
export function endpointMatrix(group: string, node: NodeKind, clients: ClientCert[]): HttpCase[] {
  return clients.flatMap((client) => paths.flatMap((path) => methods.map((method) => endpointCase(group, node, method, path, client))));
}

/** Plain HTTP written to the TLS port. */
export function plainToTlsCases(group: string, node: NodeKind): HttpCase[] {
  return ['/healthz', '/logspec'].map((path) => ({
    id: `${group}/${node}/plain HTTP to the TLS port: GET ${path}`,
    group,
    node,
    method: 'GET',
    path,
    client: 'none',
    transport: 'plain-to-tls',
    checkState: false,
  }));
}

/** Headers and details of answers: the request id echoed, the whole Content-Type. */
export function detailCases(group: string, node: NodeKind): HttpCase[] {
  const base = { group, node, client: 'none' as const, transport: 'native' as const, checkState: false };
  return [
    { ...base, id: `${group}/${node}/X-Request-Id sent: GET /logspec`, method: 'GET', path: '/logspec', headers: { 'X-Request-Id': sentRequestId } },
    { ...base, id: `${group}/${node}/X-Request-Id sent: GET /healthz`, method: 'GET', path: '/healthz', headers: { 'X-Request-Id': sentRequestId } },
    { ...base, id: `${group}/${node}/X-Request-Id sent: GET /nothing-here`, method: 'GET', path: '/nothing-here', headers: { 'X-Request-Id': sentRequestId } },
    { ...base, id: `${group}/${node}/whole Content-Type: GET /logspec`, method: 'GET', path: '/logspec', fullContentType: true },
    { ...base, id: `${group}/${node}/whole Content-Type: GET /version`, method: 'GET', path: '/version', fullContentType: true },
    { ...base, id: `${group}/${node}/whole Content-Type: GET /metrics`, method: 'GET', path: '/metrics', fullContentType: true },
  ];
}

/** /healthz and /metrics with the Docker checker on the real dockerd, a missing socket, or none. */
export function healthCases(group: string, node: NodeKind): HttpCase[] {
  const base = { group, node, client: 'none' as const, transport: 'native' as const, checkState: false };
  return [
    { ...base, id: `${group}/${node}/GET /healthz`, method: 'GET', path: '/healthz' },
    { ...base, id: `${group}/${node}/HEAD /healthz`, method: 'HEAD', path: '/healthz' },
    { ...base, id: `${group}/${node}/GET /metrics (provider disabled)`, method: 'GET', path: '/metrics' },
  ];
}
