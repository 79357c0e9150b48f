/**
 * `fabric-ops fleet certs` (GET /fleet/certificates, docs/fleet-certificates.md): the table of every
 * certificate of every node, soonest expiry first, and what `fleet status` says of a node's
 * companion. Pure: the answer in, the text out (src/fleet/cli-table.ts escapes and fits it).
 */
import { cutNote, prose, renderTable, type Cell, type Column } from './cli-table';

type Json = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]).filter((item) => typeof item === 'object' && item !== null) : []);
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

function fitted(columns: readonly Column[], rows: ReadonlyArray<readonly Cell[]>, width: number | undefined): string {
  const table = renderTable(columns, rows, width);
  return table.text + (width === undefined ? '' : cutNote(table, width));
}

/** `2026-11-27T06:00:40.000Z` as its day `2026-11-27` (the table: DAYS LEFT says the rest), or to the second (--wide). */
function notAfterText(iso: unknown, wide: boolean): string {
  const text = str(iso);
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(text);
  if (match === null) return text;
  return wide ? `${match[1]}T${match[2]}Z` : (match[1] as string);
}

/**
 * The subject as the table shows it: its common name (`CN=peer0.org1`, what tells certificates apart;
 * the subject's other parts are the org's), the whole subject when it has none. --wide shows it whole.
 */
export function subjectCell(subject: string): string {
  const names = subject.split(', ').filter((part) => part.startsWith('CN='));
  return names.length === 1 ? (names[0] as string) : subject;
}

/** `245`, `3 warning`, `-2 expired`. */
function daysLeftText(certificate: Json): string {
  const days = str(certificate.daysLeft);
  return certificate.status === 'expired' || certificate.status === 'warning' ? `${days} ${str(certificate.status)}` : days;
}

/** The answer of GET /fleet/certificates as tables and a verdict; partial (exit 1) when a certificate is expired or within the window, or a node was not read. */
export function renderCertificates(body: Json, width: number | undefined, wide: boolean): { text: string; partial: boolean } {
  const certificates = list(body.certificates);
  const nodes = list(body.nodes);
  const warningDays = count(body.warningDays);
  const nodeColumn: Column = { header: 'NODE', min: 12, phase: 2 };
  const columns: Column[] = wide
    ? [
        nodeColumn,
        { header: 'GROUP' },
        { header: 'SOURCE' },
        { header: 'KIND' },
        { header: 'KEY' },
        { header: 'SUBJECT' },
        { header: 'ISSUER' },
        { header: 'SERIAL' },
        { header: 'NOT AFTER' },
        { header: 'DAYS LEFT' },
        { header: 'PATH' },
      ]
    : // Node, kind and subject give way together (the widest first): each tells certificates apart.
      [{ header: 'NODE', min: 12 }, { header: 'KIND', min: 12 }, { header: 'SUBJECT', min: 15 }, { header: 'NOT AFTER' }, { header: 'DAYS LEFT' }];
  const rows = certificates.map((certificate) =>
    wide
      ? [
          str(certificate.node),
          str(certificate.group),
          str(certificate.source),
          str(certificate.kind),
          str(certificate.key),
          str(certificate.subject),
          str(certificate.issuer),
          str(certificate.serial),
          notAfterText(certificate.notAfter, true),
          daysLeftText(certificate),
          str(certificate.path),
        ]
      : [
          str(certificate.node),
          str(certificate.kind),
          subjectCell(str(certificate.subject)),
          notAfterText(certificate.notAfter, false),
          daysLeftText(certificate),
        ],
  );
  let text = certificates.length > 0 ? fitted(columns, rows, width) : '';

  const unread = nodes.filter((node) => node.status !== 'ok');
  if (unread.length > 0) {
    if (text !== '') text += '\n';
    text += fitted(
      [{ ...nodeColumn, header: 'NOT READ' }, { header: 'REASON' }, { header: 'ERROR', min: 12 }],
      unread.map((node) => [str(node.name), str(node.status), str(node.error)]),
      width,
    );
  }
  // Files a node's configuration names that gave no certificate: whole sentences (key, path and problem all matter), wrapped.
  const problems = nodes.flatMap((node) => list(node.problems).map((problem) => ({ node, problem })));
  if (problems.length > 0) {
    if (text !== '') text += '\n';
    text += prose("Problem files (named by the node's configuration, no certificate read):", width);
    for (const { node, problem } of problems) text += prose(`${str(node.name)}: ${str(problem.key)} ${str(problem.path)}: ${str(problem.problem)}`, width);
  }
  if (text !== '') text += '\n';

  const expired = count(body.expired);
  const warning = count(body.warning);
  const withCompanion = nodes.filter((node) => node.source === 'companion').length;
  const fromHandshake = nodes.filter((node) => node.source === 'handshake').length;
  const omitted = nodes.reduce((sum, node) => sum + count(node.omitted), 0);
  let summary = `${plural(certificates.length, 'certificate')} of ${plural(nodes.length, 'node')} (${withCompanion} read from a companion, ${fromHandshake} from the TLS handshake)`;
  if (omitted > 0) summary += `, ${omitted} left out (--json shows which nodes)`;
  const verdicts: string[] = [];
  if (expired > 0) verdicts.push(`${plural(expired, 'certificate')} EXPIRED`);
  if (warning > 0) verdicts.push(`${plural(warning, 'certificate')} ${warning === 1 ? 'expires' : 'expire'} within ${warningDays} days`);
  if (unread.length > 0) verdicts.push(`${plural(unread.length, 'node')} not read: ${unread.length === 1 ? 'its' : 'their'} certificates are unknown`);
  if (verdicts.length === 0) verdicts.push(`none expired or within ${warningDays} days`);
  text += prose(`${summary}: ${verdicts.join('; ')}`, width);
  const lowDisks = nodes.filter((node) => (node.disk as Json | undefined)?.status === 'low');
  for (const node of lowDisks) text += prose(`${str(node.name)}: disk low (its companion): ${companionDiskProblems(node.companion)}`, width);
  return { text, partial: expired > 0 || warning > 0 || unread.length > 0 };
}

function companionDiskProblems(summary: unknown): string {
  if (typeof summary !== 'object' || summary === null) return '';
  const problems = (summary as Json).diskProblems;
  return Array.isArray(problems) ? problems.map(str).join('; ') : '';
}

/** What `fleet status` adds to a node's detail when its companion's summary is known: '' when all is well. */
export function companionDetail(summary: unknown): string {
  if (typeof summary !== 'object' || summary === null) return '';
  const companion = summary as Json;
  const parts: string[] = [];
  const expired = count(companion.certificatesExpired);
  const soon = count(companion.certificatesExpiringSoon);
  if (expired > 0) parts.push(`${plural(expired, 'certificate')} expired`);
  if (soon > 0) parts.push(`${plural(soon, 'certificate')} expiring soon`);
  if (companion.diskStatus === 'low') parts.push('disk low');
  return parts.length === 0 ? '' : `companion: ${parts.join(', ')}`;
}
