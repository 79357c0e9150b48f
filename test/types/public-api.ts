/**
 * Type tests of the published API (as pino's test-types): compiled, never run, against the built
 * declarations (`fabric-ops` resolves to this package's own dist/ through its `exports`), by
 * test/packaging/public-types.test.ts (`tsc -p test/types`). Each `@ts-expect-error` line is a
 * misuse that must stay a compile error: if it compiles, tsc reports the unused directive.
 */
import {
  ConfigError,
  FabricOpsError,
  LogSpecError,
  MetricValueError,
  startOperationsSystem,
  type CertificateSummary,
  type CheckResult,
  type Clock,
  type FailedCheck,
  type HealthChecker,
  type HealthReport,
  type HostPort,
  type HttpExtension,
  type LogSpecActor,
  type OperationsEvent,
  type OperationsHealth,
  type OperationsLogging,
  type OperationsSystem,
  type StartOptions,
  type VersionDocument,
} from 'fabric-ops';
import * as api from 'fabric-ops';

export async function publicApi(): Promise<void> {
  const clock: Clock = { now: () => Date.parse('2024-05-06T07:08:09Z') };
  const options: StartOptions = { configFile: '/etc/hyperledger/fabric/core.yaml', clock, httpLimits: { maxBodyBytes: 1024 } };
  const ops: OperationsSystem = await startOperationsSystem(options);

  // Every type a public member uses has a name the reader can import.
  const address: HostPort = ops.address;
  const version: VersionDocument = ops.version;
  const health: OperationsHealth = ops.health;
  const logging: OperationsLogging = ops.logging;
  const certificate: CertificateSummary | null = ops.servingCertificate;
  // The server's limits, as extensions (fleet mode's /fleet bodies) take them.
  const bodyLimit: number = ops.httpLimits.maxBodyBytes;
  const kubernetes = await api.startKubernetesIntegration(ops);
  // Other parts record Events on the pod through the integration (fleet mode's writes).
  kubernetes?.record('Warning', 'FleetLogSpecChanged', 'fleet logging specification ...');
  const report: HealthReport = await health.check();
  health.register('queue', { check: async () => ({ ok: true }) });
  const components: string[] = health.components();
  health.unregister('queue');
  void components;
  const failed: FailedCheck[] | undefined = report.failed_checks;
  void [address.host, address.port, version.Version, version.CommitSHA, certificate?.notAfter, failed, bodyLimit];

  const checker: HealthChecker = { check: async (): Promise<CheckResult> => ({ ok: false, reason: 'ledger directory missing' }) };
  ops.registerChecker('ledger', checker);
  ops.metrics
    .newCounter({ namespace: 'myapp', name: 'orders', help: 'Orders.', labelNames: ['channel'] })
    .with({ channel: 'c' })
    .add(1);

  // Both ways to change the spec are the audited one; the actor is optional.
  ops.setLogSpec('debug');
  ops.setLogSpec('debug', 'configmap ns/name');
  const actor: LogSpecActor = { name: 'my tool', fields: { tool: 'my tool' } };
  const change = logging.setSpec('info', actor);
  void [change.previous, change.current, logging.getSpec(), logging.getLogger('myapp').isEnabled('debug')];
  // A LoggingSystem of the embedding code's own, shared with the system (StartOptions.logging).
  const shared = new api.LoggingSystem({ spec: 'info', format: 'json' });
  await (await startOperationsSystem({ logging: shared })).stop();
  // What the command does: the configuration read first, then handed to the start.
  const loaded = api.loadConfig({ configFile: '/etc/hyperledger/fabric/core.yaml' });
  await (await startOperationsSystem({ loaded })).stop();
  const unsubscribe = ops.onEvent((event: OperationsEvent) => {
    if (event.type === 'logspec.changed') void event.actor.toUpperCase();
  });
  unsubscribe();

  try {
    await startOperationsSystem({});
  } catch (error) {
    if (error instanceof ConfigError) void error.problems.join('\n');
    if (error instanceof FabricOpsError) void error.code.startsWith('FABRIC_OPS_');
  }
  const code: string = new LogSpecError('bad').code;
  void [code, new MetricValueError('NaN').code];

  // An extension's handler is typed with Node's request and response (no @types/express needed).
  const extension: HttpExtension = { path: '/mine', handler: (_req, res, next) => (res.headersSent ? next() : res.end('mine')), stop: async () => undefined };
  void extension;

  // Misuse that must not compile:
  // @ts-expect-error -- one start function: OperationsSystem.start is internal (stripped from the published types)
  void api.OperationsSystem.start;
  // @ts-expect-error -- the constructor is private: start through startOperationsSystem
  void new api.OperationsSystem();
  // @ts-expect-error -- a Clock answers milliseconds since the epoch, not a Date
  void startOperationsSystem({ clock: { now: () => new Date() } });
  // @ts-expect-error -- the RBAC table of the Kubernetes integration is for the chart's tests, not public
  void api.kubernetesApiAccess;
  // @ts-expect-error -- messageOf is internal
  void api.messageOf;
  // @ts-expect-error -- the observer is the system's wiring: replacing it would silently end the audit (log line, metric, event) of every later spec change
  void ops.logging.setObserver;
  // @ts-expect-error -- nor on a LoggingSystem of the embedding code's own: setObserver is internal (stripped from the published types)
  void shared.setObserver;
  // @ts-expect-error -- whether an actor is a remote request (no refusal event) is the HTTP server's to say
  logging.setSpec('debug', { name: 'my tool', fields: {}, remote: true });
  // @ts-expect-error -- the health service's class is internal: checkers are registered on ops.health
  void (null as unknown as api.HealthService);
  // @ts-expect-error -- so is the observer's type
  void (null as unknown as api.LoggingObserver);
  // @ts-expect-error -- ops.health is read-only
  ops.health = health;
  // @ts-expect-error -- a spec is a string
  ops.setLogSpec({ spec: 'debug' });
  // @ts-expect-error -- a checker answers { ok, reason }, not a boolean
  ops.registerChecker('bad', { check: async () => true });
  // @ts-expect-error -- address is read-only information about the listening socket
  ops.address = { host: '::', port: 1 };
  // @ts-expect-error -- an Event is Normal or Warning
  kubernetes?.record('Error', 'Reason', 'message');
  // @ts-expect-error -- the limits are read-only
  ops.httpLimits = { ...ops.httpLimits };
  // @ts-expect-error -- the error code is read-only
  new ConfigError(['x']).code = 'OTHER';

  await ops.stop();
}
