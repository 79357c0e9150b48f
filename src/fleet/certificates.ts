/**
 * `GET /fleet/certificates` (docs/fleet-certificates.md): every certificate of every node, soonest
 * expiry first. A node with a companion (docs/companion.md) contributes every certificate its
 * configuration names, from the companion's `GET /companion/report`; a node without one (it answers
 * 404 there, as a Fabric node does) contributes its operations server certificate as the fleet saw
 * it in the TLS handshake. Everything a companion says is checked and bounded before it is kept.
 */
import { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { z } from 'zod';
import { daysLeft } from '../companion/certificates';
import { companionReportPath } from '../companion/report';
import { excerpt } from '../health/quote';
import { clip } from '../text';
import { summariseCertificate } from '../tls/pem';
import { errorText, type CallOutcome, type NodeClient } from './client';
import type { RoundReport } from './health';
import type { CallFailureReason, FleetDialect, FleetNode, NodeHealth } from './types';

/** A certificate is `warning` within this many days of its notAfter (Fabric's own week; the companion's default warningDays). */
export const fleetCertificateWarningDays = 7;
/** Certificates kept per node at most (the soonest to expire); a peer's configuration names some 15 to 30. */
export const maxNodeCertificates = 64;
/** Problem files kept per node at most. */
const maxNodeProblems = 16;
/** Data volumes kept per node at most (a peer has at most two, an orderer three). */
const maxNodeVolumes = 8;

const dayMs = 86_400_000;

export type CertificateStatus = 'expired' | 'warning' | 'ok';
/** Where a certificate was read: the node's companion, or the fleet's own TLS handshake with the node. */
export type CertificateSource = 'companion' | 'handshake';
export type DiskStatus = 'ok' | 'low' | 'unknown';

export interface FleetCertificate {
  node: string;
  group: string;
  source: CertificateSource;
  kind: string;
  /** The node's configuration key naming it (companion), or `handshake`. */
  key: string;
  /** The file it was read from (companion), or the URL whose handshake showed it. */
  path: string;
  subject: string;
  issuer: string;
  serial: string;
  /** ISO 8601. */
  notAfter: string;
  /** Days left, rounded down; negative once expired. */
  daysLeft: number;
  status: CertificateStatus;
  /** handshake: when the fleet last saw it (ISO 8601). */
  seenAt?: string;
}

/** A companion's state in a few figures: what /fleet/healthz shows beside the node. */
export interface CompanionSummary {
  certificatesExpired: number;
  /** Inside the warning window, not yet expired. */
  certificatesExpiringSoon: number;
  certificateProblems: number;
  diskStatus: DiskStatus;
  /** The disk problems, one line each (bounded). */
  diskProblems: string[];
  /** When the fleet read the companion's report (ISO 8601). */
  checkedAt: string;
}

export interface NodeCertificateVolume {
  folder: string;
  key: string;
  freeBytes: number;
  sizeBytes: number;
  freeInodes: number;
  inodes: number;
  minFreeBytes: number;
  minFreeInodes: number;
  status: 'ok' | 'low';
  problem: string;
}

/** How one node's certificates were read. */
export interface NodeCertificates {
  name: string;
  group: string;
  dialect: FleetDialect;
  /** Where /companion/report was asked: the node's companion URL, else the node's own. */
  url: string;
  /** ok: read (from its companion, or it has none and the handshake stands in); else why not. */
  status: 'ok' | CallFailureReason;
  /** companion: its companion's report; handshake: the operations certificate of the handshake; none: no certificate known. */
  source: CertificateSource | 'none';
  error?: string;
  /** Certificates of this node in the answer. */
  certificates: number;
  /** Certificates left out (past maxNodeCertificates, or malformed in the companion's report). */
  omitted: number;
  problems: Array<{ kind: string; key: string; path: string; problem: string }>;
  omittedProblems: number;
  /** The companion's disk figures. */
  disk?: { status: DiskStatus; volumes: NodeCertificateVolume[] };
  /** The companion's state in brief (companion only). */
  companion?: CompanionSummary;
}

export interface FleetCertificateReport {
  /** When the round ended (ISO 8601). */
  time: string;
  warningDays: number;
  round: RoundReport;
  /** Certificates expired now. */
  expired: number;
  /** Certificates within warningDays of their notAfter, not yet expired. */
  warning: number;
  /** Nodes whose certificates could not be read (status other than ok). */
  unread: number;
  /** Every certificate of every node, soonest notAfter first. */
  certificates: FleetCertificate[];
  /** Each node: how its certificates were read, its problem files and disk. */
  nodes: NodeCertificates[];
}

/** Pure: expired, inside the warning window, or neither. */
export function certificateStatus(notAfterMs: number, nowMs: number, warningDays: number): CertificateStatus {
  const left = notAfterMs - nowMs;
  if (left <= 0) return 'expired';
  return left <= warningDays * dayMs ? 'warning' : 'ok';
}

/** What a handshake showed: the certificate's DER and when. */
export interface HandshakeSeen {
  raw: Buffer;
  seenAtMs: number;
}

/**
 * The operations server certificate each node showed in its last TLS handshake with the fleet
 * (any round's call), per node name and URL (a node's companion has its own URL and certificate).
 * Bounded: at most a few URLs per node; a node that leaves is forgotten.
 */
export class HandshakeCertificates {
  private readonly byNode = new Map<string, Map<string, HandshakeSeen>>();

  record(node: Pick<FleetNode, 'name' | 'url'>, certificate: PeerCertificate, nowMs: number): void {
    if (!Buffer.isBuffer(certificate.raw)) return;
    let urls = this.byNode.get(node.name);
    if (urls === undefined) {
      urls = new Map();
      this.byNode.set(node.name, urls);
    }
    urls.delete(node.url);
    urls.set(node.url, { raw: certificate.raw, seenAtMs: nowMs });
    // A node whose URL changed keeps its newest few.
    for (const url of urls.keys()) {
      if (urls.size <= 4) break;
      urls.delete(url);
    }
  }

  get(node: Pick<FleetNode, 'name' | 'url'>): HandshakeSeen | undefined {
    return this.byNode.get(node.name)?.get(node.url);
  }

  forget(name: string): void {
    this.byNode.delete(name);
  }
}

/** Pure: a handshake's certificate as a fleet certificate; null when its DER does not parse. */
function handshakeCertificate(
  node: Pick<FleetNode, 'name' | 'group' | 'url'>,
  seen: HandshakeSeen,
  nowMs: number,
  warningDays: number,
): FleetCertificate | null {
  let summary;
  try {
    summary = summariseCertificate(new X509Certificate(seen.raw));
  } catch {
    return null;
  }
  const notAfterMs = Date.parse(summary.notAfter);
  return {
    node: node.name,
    group: node.group,
    source: 'handshake',
    kind: 'operations_server',
    key: 'handshake',
    path: node.url,
    subject: clip(summary.subject, maxNameLength),
    issuer: clip(summary.issuer, maxNameLength),
    serial: clip(summary.serial, 64),
    notAfter: summary.notAfter,
    daysLeft: daysLeft(notAfterMs, nowMs),
    status: certificateStatus(notAfterMs, nowMs, warningDays),
    seenAt: new Date(seen.seenAtMs).toISOString(),
  };
}

const maxNameLength = 200;
const maxPathLength = 512;
const text = (max: number) => z.string().transform((value) => clip(value, max));

const ReportCertificateSchema = z.object({
  kind: text(64),
  key: text(128),
  path: text(maxPathLength),
  subject: text(maxNameLength),
  issuer: text(maxNameLength),
  serial: text(64),
  notAfter: z.string().refine((value) => Number.isFinite(Date.parse(value)), 'an ISO 8601 date'),
});

const ReportProblemSchema = z.object({ kind: text(64), key: text(128), path: text(maxPathLength), problem: text(300) });

const ReportVolumeSchema = z.object({
  folder: text(maxPathLength),
  key: text(128),
  freeBytes: z.number(),
  sizeBytes: z.number(),
  freeInodes: z.number(),
  inodes: z.number(),
  minFreeBytes: z.number(),
  minFreeInodes: z.number(),
  status: z.enum(['ok', 'low']),
  problem: text(600),
});

/** The parts of a companion's report the fleet reads (src/companion/report.ts); other fields are ignored. */
const CompanionReportSchema = z.object({
  certificates: z.object({
    items: z.array(z.unknown()),
    omitted: z.number().int().min(0).default(0),
    problems: z.array(z.unknown()).default([]),
    omittedProblems: z.number().int().min(0).default(0),
  }),
  disk: z
    .object({
      status: z.enum(['ok', 'low', 'unknown']),
      volumes: z.array(z.unknown()).default([]),
    })
    .optional(),
});

/** One certificate of a companion's report, as the fleet keeps it (ReportCertificateSchema's output; written out so that the published types need no zod). */
export interface ReportedCertificate {
  kind: string;
  key: string;
  path: string;
  subject: string;
  issuer: string;
  serial: string;
  notAfter: string;
}

/** A file the companion could not read as a certificate (ReportProblemSchema's output). */
export interface ReportedProblem {
  kind: string;
  key: string;
  path: string;
  problem: string;
}

export interface ParsedCompanionReport {
  certificates: ReportedCertificate[];
  /** Left out by the companion, or malformed here. */
  omitted: number;
  problems: ReportedProblem[];
  omittedProblems: number;
  disk: { status: DiskStatus; volumes: NodeCertificateVolume[] } | null;
}

// The written-out types above are what the schemas produce (a compile-time check).
const reportedCertificateMatches: z.infer<typeof ReportCertificateSchema> extends ReportedCertificate ? true : never = true;
const reportedProblemMatches: z.infer<typeof ReportProblemSchema> extends ReportedProblem ? true : never = true;
void reportedCertificateMatches;
void reportedProblemMatches;

/** Pure: a companion's report as the fleet keeps it, or why it is not one. A malformed entry is counted, not kept. */
export function parseCompanionReport(body: unknown): { ok: true; value: ParsedCompanionReport } | { ok: false; problem: string } {
  const parsed = CompanionReportSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: `${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'not an object'}` };
  }
  const { certificates, disk } = parsed.data;
  const good = certificates.items.flatMap((item) => {
    const one = ReportCertificateSchema.safeParse(item);
    return one.success ? [one.data] : [];
  });
  const problems = certificates.problems.flatMap((item) => {
    const one = ReportProblemSchema.safeParse(item);
    return one.success ? [one.data] : [];
  });
  good.sort((a, b) => Date.parse(a.notAfter) - Date.parse(b.notAfter));
  const kept = good.slice(0, maxNodeCertificates);
  const volumes = (disk?.volumes ?? []).flatMap((item) => {
    const one = ReportVolumeSchema.safeParse(item);
    return one.success ? [one.data] : [];
  });
  return {
    ok: true,
    value: {
      certificates: kept,
      omitted: certificates.omitted + (certificates.items.length - kept.length),
      problems: problems.slice(0, maxNodeProblems),
      omittedProblems: certificates.omittedProblems + (certificates.problems.length - Math.min(problems.length, maxNodeProblems)),
      disk: disk === undefined ? null : { status: disk.status, volumes: volumes.slice(0, maxNodeVolumes) },
    },
  };
}

/** Where a node's companion report is asked: its companion's URL when the configuration names one, else its own. */
function reportTarget(node: FleetNode): FleetNode {
  if (node.companion === undefined) return node;
  return { name: node.name, url: node.companion.url, dialect: node.dialect, labels: node.labels, group: node.group };
}

/**
 * Pure: one node's certificates from its /companion/report outcome. `handshake`: the node's own
 * operations certificate as last seen (the fallback whenever no companion report is read).
 */
export function nodeCertificates(
  node: FleetNode,
  outcome: CallOutcome,
  handshake: HandshakeSeen | undefined,
  nowMs: number,
  warningDays: number,
): { node: NodeCertificates; certificates: FleetCertificate[] } {
  const named = node.companion !== undefined;
  const url = named ? (node.companion?.url ?? node.url) : node.url;
  const base = { name: node.name, group: node.group, dialect: node.dialect, url, problems: [], omittedProblems: 0 };
  const fromHandshake = (status: NodeCertificates['status'], error?: string): { node: NodeCertificates; certificates: FleetCertificate[] } => {
    const certificate = handshake === undefined ? null : handshakeCertificate(node, handshake, nowMs, warningDays);
    const certificates = certificate === null ? [] : [certificate];
    let why = error;
    if (status === 'ok' && certificate === null)
      why = node.url.startsWith('http:') ? 'no companion, and plain HTTP: no certificate to show' : 'no companion, and no handshake certificate seen';
    return {
      node: {
        ...base,
        status,
        source: certificate === null ? 'none' : 'handshake',
        ...(why !== undefined ? { error: why } : {}),
        certificates: certificates.length,
        omitted: 0,
      },
      certificates,
    };
  };
  const where = `${url}${companionReportPath}`;
  const status = outcome.status;
  if (status === 404) {
    if (!named) return fromHandshake('ok');
    return fromHandshake('bad_response', `${where} answered 404: not a fabric-ops companion (companion.url of node ${node.name})`);
  }
  if (!outcome.ok) return fromHandshake(outcome.reason, excerpt(outcome.error));
  if (status !== 200) return fromHandshake('bad_response', `${where} answered ${status}: ${errorText(outcome.text)}`);
  const parsed = parseCompanionReport(outcome.body);
  if (!parsed.ok) return fromHandshake('bad_response', `${where} answered 200, but not a companion report: ${excerpt(parsed.problem)}`);
  const report = parsed.value;
  const certificates = report.certificates.map((item): FleetCertificate => {
    const notAfterMs = Date.parse(item.notAfter);
    return {
      node: node.name,
      group: node.group,
      source: 'companion',
      kind: item.kind,
      key: item.key,
      path: item.path,
      subject: item.subject,
      issuer: item.issuer,
      serial: item.serial,
      notAfter: new Date(notAfterMs).toISOString(),
      daysLeft: daysLeft(notAfterMs, nowMs),
      status: certificateStatus(notAfterMs, nowMs, warningDays),
    };
  });
  const summary: CompanionSummary = {
    certificatesExpired: certificates.filter((one) => one.status === 'expired').length,
    certificatesExpiringSoon: certificates.filter((one) => one.status === 'warning').length,
    certificateProblems: report.problems.length + report.omittedProblems,
    diskStatus: report.disk?.status ?? 'unknown',
    diskProblems: (report.disk?.volumes ?? []).filter((volume) => volume.status === 'low').map((volume) => excerpt(volume.problem)),
    checkedAt: new Date(nowMs).toISOString(),
  };
  return {
    node: {
      ...base,
      status: 'ok',
      source: 'companion',
      certificates: certificates.length,
      omitted: report.omitted,
      problems: report.problems,
      omittedProblems: report.omittedProblems,
      ...(report.disk !== null ? { disk: report.disk } : {}),
      companion: summary,
    },
    certificates,
  };
}

/** Pure: every node's certificates as one answer, soonest notAfter first (then node, kind, serial). */
export function fleetCertificateReport(
  results: ReadonlyArray<{ node: NodeCertificates; certificates: FleetCertificate[] }>,
  round: RoundReport,
  nowMs: number,
  warningDays: number,
): FleetCertificateReport {
  const certificates = results.flatMap((result) => result.certificates);
  certificates.sort(
    (a, b) =>
      Date.parse(a.notAfter) - Date.parse(b.notAfter) ||
      (a.node < b.node ? -1 : a.node > b.node ? 1 : 0) ||
      a.kind.localeCompare(b.kind) ||
      a.serial.localeCompare(b.serial),
  );
  const nodes = results.map((result) => result.node);
  return {
    time: new Date(nowMs).toISOString(),
    warningDays,
    round,
    expired: certificates.filter((one) => one.status === 'expired').length,
    warning: certificates.filter((one) => one.status === 'warning').length,
    unread: nodes.filter((node) => node.status !== 'ok').length,
    certificates,
    nodes,
  };
}

/** Reads one node's certificates: its /companion/report (bounded as every node call), and the handshake as the fallback. */
export async function readNodeCertificates(
  client: NodeClient,
  handshakes: HandshakeCertificates,
  node: FleetNode,
  signal: AbortSignal,
  now: () => number,
  warningDays: number,
): Promise<{ result: { node: NodeCertificates; certificates: FleetCertificate[] }; outcome: CallOutcome }> {
  const outcome = await client.call(reportTarget(node), 'GET', companionReportPath, undefined, signal);
  return { result: nodeCertificates(node, outcome, handshakes.get(node), now(), warningDays), outcome };
}

/**
 * Pure: the nodes of a health report with their companion's summary beside them (issue 33: "behind
 * because its certificate expired, or its disk is full", in one look), from the last certificate
 * round; a node without a known companion is left as it is.
 */
export function withCompanionSummaries(nodes: NodeHealth[], last: FleetCertificateReport | null): NodeHealth[] {
  if (last === null) return nodes;
  const summaries = new Map<string, CompanionSummary>();
  for (const node of last.nodes) if (node.companion !== undefined) summaries.set(`${node.name}\u0000${node.group}`, node.companion);
  if (summaries.size === 0) return nodes;
  return nodes.map((node) => {
    const summary = summaries.get(`${node.name}\u0000${node.group}`);
    return summary === undefined ? node : { ...node, companion: summary };
  });
}
