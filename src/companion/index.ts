/** Companion mode (docs/companion.md): fabric-ops beside one peer or orderer, reporting what Fabric does not. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompanionConfig, NormalisedConfig } from '../config/types';
import type { HealthChecker } from '../health/types';
import type { Logger } from '../logging/types';
import type { MetricsProvider } from '../metrics/types';
import type { Scheduler } from '../time';
import { CertificateMonitor } from './certificate-monitor';
import { NodeHealthChecker } from './node-health';

export { CertificateMonitor, certificateMetricOptions, type CertificateReport } from './certificate-monitor';
export { NodeHealthChecker } from './node-health';
export type { NodeCertificate, CertificateProblem, ExpiryStage } from './certificates';

/** What the companion uses of the operations system (OperationsSystem fits): its public API only. */
export interface CompanionHost {
  readonly config: NormalisedConfig;
  readonly metrics: MetricsProvider;
  getLogger(name: string): Logger;
  registerChecker(component: string, checker: HealthChecker): void;
}

export interface CompanionExtensionOptions {
  scheduler?: Scheduler;
  /** Called with the running companion (tests read its certificate report). */
  onStarted?(companion: Companion): void;
}

export interface Companion {
  readonly certificates: CertificateMonitor;
  readonly node: NodeHealthChecker;
}

/** The component name of the node checker on the companion's /healthz. */
export const nodeCheckerName = 'node';

/**
 * For startOperationsSystem({ extensions: [companionExtension(config.companion)] }) (the system adds
 * it when the configuration turns companion mode on): reads the node's certificates, registers
 * the `node` health checker. Its mount serves nothing yet: every path under /companion falls through.
 */
export function companionExtension(
  companion: CompanionConfig,
  options: CompanionExtensionOptions = {},
): (
  host: CompanionHost,
) => Promise<{ path: string; handler(request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void): void; stop(): Promise<void> }> {
  return async (host) => {
    const logger = host.getLogger('companion');
    const scheduler = options.scheduler;
    const node = new NodeHealthChecker({
      dialect: host.config.dialect,
      node: companion.node,
      timeoutMs: host.config.health.timeoutMs,
      ...(scheduler ? { scheduler } : {}),
    });
    const certificates = new CertificateMonitor({
      certificates: companion.certificates,
      logger: host.getLogger('companion.certificates'),
      metrics: host.metrics,
      ...(scheduler ? { scheduler } : {}),
    });
    await certificates.start();
    host.registerChecker(nodeCheckerName, node);
    const { report } = certificates;
    logger.info(`companion of the ${host.config.dialect} at ${node.url}: ${report.certificates.length} certificates, ${report.problems.length} problem files`, {
      node: node.url,
      certificates: report.certificates.length,
      problems: report.problems.length,
    });
    options.onStarted?.({ certificates, node });
    return {
      path: '/companion',
      handler: (_request, _response, next) => next(),
      stop: () => {
        certificates.stop();
        return Promise.resolve();
      },
    };
  };
}
