/**
 * `GET /companion/report` (docs/companion.md, "With the fleet"): what the companion knows of its
 * node's certificates and disk, as one JSON document a fleet reads (`/fleet/certificates`,
 * `fabric-ops fleet certs`). Protected as `/metrics`: a client certificate verified against the
 * companion's client CAs whenever its TLS is on. Bounded: at most `maxReportCertificates`
 * certificates (the soonest to expire) and `maxReportProblems` problem files, whatever the MSP holds.
 */
import { Router, type Request, type Response } from 'express';
import { sendError } from '../http/errors';
import { sendJson } from '../http/json';
import { requireClientCertificate } from '../http/middleware/client-auth';
import type { Logger } from '../logging/types';
import { daysLeft } from './certificates';
import type { CertificateReport } from './certificate-monitor';
import type { DiskThresholds } from './disk';
import type { DiskReport } from './disk-monitor';

/** The path a fleet asks; a node that answers 404 there has no companion. */
export const companionReportPath = '/companion/report';

/** Certificates a report lists at most, soonest first (a peer's configuration names some 15 to 30). */
export const maxReportCertificates = 64;
/** Problem files a report lists at most. */
const maxReportProblems = 16;

export type DiskStatus = 'ok' | 'low' | 'unknown';

export interface CompanionReportCertificate {
  kind: string;
  key: string;
  path: string;
  subject: string;
  issuer: string;
  serial: string;
  notBefore: string;
  notAfter: string;
  /** Days left, rounded down (negative once expired), when the report was made. */
  daysLeft: number;
  stage: string;
}

export interface CompanionReportVolume {
  folder: string;
  key: string;
  /** The other data-folder keys on the same volume. */
  alsoHolds: string[];
  sizeBytes: number;
  freeBytes: number;
  inodes: number;
  freeInodes: number;
  minFreeBytes: number;
  minFreeInodes: number;
  status: 'ok' | 'low';
  /** Why it is low ('' when it is not). */
  problem: string;
}

export interface CompanionReport {
  dialect: string;
  /** The node's operations endpoint, as the companion calls it. */
  node: string;
  /** When the report was made (ISO 8601). */
  time: string;
  certificates: {
    checkedAt: string | null;
    warningDays: number;
    planningDays: number;
    items: CompanionReportCertificate[];
    /** Certificates left out past maxReportCertificates (the latest to expire). */
    omitted: number;
    problems: Array<{ kind: string; key: string; path: string; problem: string }>;
    omittedProblems: number;
  };
  disk: {
    checkedAt: string | null;
    /** low: a volume is under a threshold; unknown: no data folder could be measured. */
    status: DiskStatus;
    thresholds: DiskThresholds;
    volumes: CompanionReportVolume[];
    unmeasured: Array<{ key: string; path: string; missing: boolean; problem: string }>;
  };
}

/** Pure: the report from the monitors' last reads. */
export function companionReport(
  certificates: CertificateReport,
  disk: DiskReport,
  settings: { dialect: string; node: string; warningDays: number; planningDays: number; thresholds: DiskThresholds },
  nowMs: number,
): CompanionReport {
  const sorted = [...certificates.certificates].sort((a, b) => a.notAfterMs - b.notAfterMs || a.kind.localeCompare(b.kind) || a.path.localeCompare(b.path));
  const kept = sorted.slice(0, maxReportCertificates);
  const volumes: CompanionReportVolume[] = disk.volumes.map((volume) => ({
    folder: volume.folder.path,
    key: volume.folder.key,
    alsoHolds: volume.alsoHolds.map((folder) => folder.key),
    ...volume.figures,
    minFreeBytes: volume.verdict.minFreeBytes,
    minFreeInodes: volume.verdict.minFreeInodes,
    status: volume.verdict.ok ? 'ok' : 'low',
    problem: volume.problem,
  }));
  const diskStatus: DiskStatus = volumes.some((volume) => volume.status === 'low') ? 'low' : volumes.length > 0 ? 'ok' : 'unknown';
  return {
    dialect: settings.dialect,
    node: settings.node,
    time: new Date(nowMs).toISOString(),
    certificates: {
      checkedAt: certificates.checkedAt,
      warningDays: settings.warningDays,
      planningDays: settings.planningDays,
      items: kept.map((certificate) => ({
        kind: certificate.kind,
        key: certificate.key,
        path: certificate.path,
        subject: certificate.subject,
        issuer: certificate.issuer,
        serial: certificate.serial,
        notBefore: certificate.notBefore,
        notAfter: certificate.notAfter,
        daysLeft: daysLeft(certificate.notAfterMs, nowMs),
        stage: certificate.stage,
      })),
      omitted: sorted.length - kept.length,
      problems: certificates.problems.slice(0, maxReportProblems).map(({ kind, key, path, problem }) => ({ kind, key, path, problem })),
      omittedProblems: Math.max(0, certificates.problems.length - maxReportProblems),
    },
    disk: {
      checkedAt: disk.checkedAt,
      status: diskStatus,
      thresholds: { minFreePercent: settings.thresholds.minFreePercent, minFreeBytes: settings.thresholds.minFreeBytes },
      volumes,
      unmeasured: disk.unmeasured.map(({ key, path, missing, problem }) => ({ key, path, missing, problem })),
    },
  };
}

const allowed = 'GET, HEAD, OPTIONS';

/** The route: `report()` makes the answer (the disk figures read again first: statfs is cheap). */
export function companionReportRouter(report: () => Promise<CompanionReport>, options: { tlsEnabled: boolean; logger: Logger }): Router {
  const router = Router({ caseSensitive: true, strict: true });
  const clientCertificate = requireClientCertificate(options.tlsEnabled, options.logger);
  const route = router.route(companionReportPath);
  route.get(clientCertificate, async (_req: Request, res: Response) => {
    const answer = await report();
    if (!res.headersSent) sendJson(res, 200, answer);
  });
  route.options((_req, res) => {
    res.setHeader('Allow', allowed);
    res.status(204).end();
  });
  route.all(clientCertificate, (req, res) => {
    res.setHeader('Allow', allowed);
    sendError(res, 405, `method ${req.method} not allowed on ${companionReportPath}; allowed: ${allowed}`);
  });
  return router;
}
