import { readdir, type Dirent } from 'node:fs';
import * as path from 'node:path';
import type { CompanionCertificateSource } from '../config/types';
import { describeFileError } from '../file-errors';
import { readPemFile } from '../tls/files';
import { looksLikeKeyFile, parseCertificateText, type CertificateProblem, type NodeCertificate } from './certificates';

/**
 * Reads every certificate the sources name: files through the project's safe reader (regular
 * files only, at most 8 MiB, a FIFO never waited on), folders listed one level deep. A file whose
 * name is a private key's is never opened, and no folder but the sources' is ever listed (the
 * MSP's `keystore/` is not a source). Never throws: what cannot be read is a problem.
 */

/** The MSP folders Fabric requires; the others (intermediatecerts, admincerts, ...) may be absent. */
const requiredFolders = new Set(['signcerts', 'cacerts']);

/** Files read from one folder at most: a folder of thousands is an operator's mistake, and series must stay bounded. */
const maxFilesPerFolder = 256;

export interface Scan {
  certificates: NodeCertificate[];
  problems: CertificateProblem[];
  /** Files named by the configuration and left unread because their names are a private key's. */
  skipped: string[];
}

function list(dir: string): Promise<{ ok: true; entries: Dirent[] } | { ok: false; code: string | undefined; problem: string }> {
  return new Promise((resolve) => {
    readdir(dir, { withFileTypes: true }, (error, entries) => {
      if (error) resolve({ ok: false, code: error.code, problem: describeFileError(error) });
      else resolve({ ok: true, entries });
    });
  });
}

async function readFile(source: { key: string; kind: string; path: string }, scan: Scan): Promise<void> {
  const read = await readPemFile(source.path);
  if (!read.ok) {
    scan.problems.push({ ...source, problem: `cannot be read: ${read.problem}` });
    return;
  }
  const parsed = parseCertificateText(read.bytes.toString('utf8'), source);
  scan.certificates.push(...parsed.certificates);
  scan.problems.push(...parsed.problems);
}

async function readFolder(source: CompanionCertificateSource, scan: Scan): Promise<void> {
  const listed = await list(source.path);
  if (!listed.ok) {
    const optional = listed.code === 'ENOENT' && !requiredFolders.has(path.basename(source.path));
    if (!optional) scan.problems.push({ key: source.key, kind: source.kind, path: source.path, problem: `folder cannot be listed: ${listed.problem}` });
    return;
  }
  // Fabric reads the files of the folder, not its subfolders; symbolic links (a Secret mount) are followed by the reader.
  const names = listed.entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) => entry.name)
    .filter((name) => !name.startsWith('.'))
    .sort();
  const kept = names.filter((name) => !looksLikeKeyFile(name));
  scan.skipped.push(...names.filter((name) => looksLikeKeyFile(name)).map((name) => path.join(source.path, name)));
  if (kept.length > maxFilesPerFolder) {
    scan.problems.push({
      key: source.key,
      kind: source.kind,
      path: source.path,
      problem: `holds ${kept.length} files; only the first ${maxFilesPerFolder} (by name) are read`,
    });
  }
  if (source.kind === 'msp_signcert' && kept.length === 0) {
    scan.problems.push({
      key: source.key,
      kind: source.kind,
      path: source.path,
      problem: 'holds no certificate file (the node needs its signing certificate here)',
    });
  }
  for (const name of kept.slice(0, maxFilesPerFolder)) await readFile({ key: source.key, kind: source.kind, path: path.join(source.path, name) }, scan);
}

export async function scanCertificates(sources: readonly CompanionCertificateSource[]): Promise<Scan> {
  const scan: Scan = { certificates: [], problems: [], skipped: [] };
  for (const source of sources) {
    if (source.form === 'folder') await readFolder(source, scan);
    else if (looksLikeKeyFile(path.basename(source.path))) {
      scan.skipped.push(source.path);
      scan.problems.push({ key: source.key, kind: source.kind, path: source.path, problem: "is named as a private key's file is: never opened" });
    } else await readFile(source, scan);
  }
  return scan;
}

/** The folders to watch for changes: each folder source, and the folder of each file source (a Secret's `..data` swap shows there). */
export function foldersToWatch(sources: readonly CompanionCertificateSource[]): string[] {
  return [...new Set(sources.map((source) => (source.form === 'folder' ? source.path : path.dirname(source.path))))];
}
