/** Companion mode (docs/companion.md): fabric-ops beside one peer or orderer, reporting what Fabric does not. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import type { CompanionConfig, NormalisedConfig } from '../config/types';
import type { HealthChecker } from '../health/types';
import type { Logger } from '../logging/types';
import type { MetricsProvider } from '../metrics/types';
import type { Scheduler } from '../time';
import { CertificateMonitor } from './certificate-monitor';
import { DiskMonitor } from './disk-monitor';
import { NodeHealthChecker } from './node-health';
import { createNodeLogSpec, type NodeLogSpec } from './logspec';
import { nodeLogSpecRouter } from './logspec-http';
import { companionReport, companionReportRouter } from './report';
import { realScheduler } from '../time';
import { Router } from 'express';
import { companionKeysFor } from '../config/companion-keys';
import { maxBodyBytes } from '../http/limits';

export { CertificateMonitor, certificateMetricOptions, type CertificateReport } from './certificate-monitor';
export { NodeHealthChecker } from './node-health';
export { NodeLogSpec, logSpecMetricOptions } from './logspec';
export { DiskMonitor, diskMetricOptions, type DiskReport } from './disk-monitor';
export type { NodeCertificate, CertificateProblem, ExpiryStage } from './certificates';
export { companionReportPath, type CompanionReport } from './report';

/** What the companion uses of the operations system (OperationsSystem fits): its public API only. */
export interface CompanionHost {
  readonly config: NormalisedConfig;
  readonly metrics: MetricsProvider;
  getLogger(name: string): Logger;
  registerChecker(component: string, checker: HealthChecker): void;
  /** The server's body limit (OperationsSystem.httpLimits); default Fabric's 16 KiB. */
  readonly httpLimits?: { readonly maxBodyBytes: number };
}

export interface CompanionExtensionOptions {
  scheduler?: Scheduler;
  /** Called with the running companion (tests read its certificate report). */
  onStarted?(companion: Companion): void;
}

export interface Companion {
  readonly certificates: CertificateMonitor;
  readonly node: NodeHealthChecker;
  readonly disk: DiskMonitor;
  /** The node's log level: /logspec, and the spec the logspec ConfigMap declares (docs/companion.md). */
  readonly logspec: NodeLogSpec;
}

/** The component name of the node checker on the companion's /healthz. */
const nodeCheckerName = 'node';
/** The component name of the disk checker (the node's data volumes, docs/companion.md "Disk"). */
const diskCheckerName = 'disk';

/**
 * For startOperationsSystem({ extensions: [companionExtension(config.companion)] }) (the system adds
 * it when the configuration turns companion mode on): reads the node's certificates, registers
 * the `node` health checker. Its mount serves /logspec, which acts on the node, and /companion/report
 * (the certificates and disk, for a fleet); every other path falls through.
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
      holdEvents: host.config.kubernetes?.events.enabled === true,
      ...(scheduler ? { scheduler } : {}),
    });
    await certificates.start();
    host.registerChecker(nodeCheckerName, node);
    const disk = new DiskMonitor({
      folders: companion.dataFolders,
      thresholds: companion.disk,
      recheckIntervalMs: companion.disk.recheckIntervalMs,
      logger: host.getLogger('companion.disk'),
      metrics: host.metrics,
      ...(scheduler ? { scheduler } : {}),
    });
    await disk.start();
    host.registerChecker(diskCheckerName, disk);
    const logspec = createNodeLogSpec(
      companion,
      {
        dialect: host.config.dialect,
        timeoutMs: host.config.health.timeoutMs,
        metrics: host.metrics,
        logger: host.getLogger('companion.logspec'),
        kubernetesEvents: host.config.kubernetes?.events.enabled === true,
      },
      scheduler,
    );
    try {
      await logspec.start();
    } catch (error) {
      certificates.stop();
      disk.stop();
      throw error;
    }
    const logspecRoutes = nodeLogSpecRouter(logspec, {
      tlsEnabled: host.config.operations.tls.enabled,
      writable: companion.logspec.writable,
      writableKey: companionKeysFor(host.config.dialect).logspecWritable,
      maxBodyBytes: host.httpLimits?.maxBodyBytes ?? maxBodyBytes,
      logger: host.getLogger('companion.logspec'),
    });
    // GET /companion/report: the certificates and disk as one document, for a fleet (docs/companion.md, "With the fleet").
    const reportRoutes = companionReportRouter(
      async () => {
        await disk.refresh();
        return companionReport(
          certificates.report,
          disk.report,
          {
            dialect: host.config.dialect,
            node: node.url,
            warningDays: companion.certificates.warningDays,
            planningDays: companion.certificates.planningDays,
            thresholds: companion.disk,
          },
          (scheduler ?? realScheduler).now(),
        );
      },
      { tlsEnabled: host.config.operations.tls.enabled, logger: host.getLogger('companion.report') },
    );
    const routes = Router({ caseSensitive: true, strict: true });
    routes.use(logspecRoutes, reportRoutes);
    const { report } = certificates;
    logger.info(`companion of the ${host.config.dialect} at ${node.url}: ${report.certificates.length} certificates, ${report.problems.length} problem files`, {
      node: node.url,
      certificates: report.certificates.length,
      problems: report.problems.length,
    });
    options.onStarted?.({ certificates, node, disk, logspec });
    return {
      path: '/',
      handler: (request, response, next) => routes(request as Request, response as Response, next),
      stop: async () => {
        certificates.stop();
        disk.stop();
        await logspec.stop();
      },
    };
  };
}
