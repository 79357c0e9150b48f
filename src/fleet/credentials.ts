import { X509Certificate, createPrivateKey } from 'node:crypto';
import { statSync } from 'node:fs';
import { ConfigError, messageOf } from '../errors';
import { certificateBlocks, hasIncompletePemBlock, privateKeyBlockOf } from '../tls/pem';
import type { GroupTlsFiles } from './config';
import { readPemFileSync } from '../tls/files';

/** A group's client material, read and checked. Never logged, never returned by an endpoint. */
export interface GroupMaterial {
  cert?: string;
  key?: string;
  ca: string[];
}

function readText(key: string, file: string, problems: string[]): string | undefined {
  // As the server's own files: regular files only (a FIFO does not block), at most 8 MiB.
  const read = readPemFileSync(file);
  if (!read.ok) {
    problems.push(`${key}: cannot read ${file}: ${read.problem}`);
    return undefined;
  }
  const text = read.bytes.toString('utf8');
  if (text.trim() === '') {
    problems.push(`${key}: ${file} is empty`);
    return undefined;
  }
  return text;
}

function incomplete(text: string, what: string): string {
  return hasIncompletePemBlock(text) ? 'holds an incomplete PEM block (BEGIN without END; a file still being written?)' : `holds no PEM ${what}`;
}

/**
 * Reads a group's files as the server's own are read: every CA file holds at least one valid
 * certificate; the client certificate and key parse and belong together. Throws ConfigError
 * naming `groups.<name>.tls.<key>` and the file; the messages never include key material.
 */
export function readGroupMaterial(group: string, files: GroupTlsFiles): GroupMaterial {
  const problems: string[] = [];
  const prefix = `groups.${group}.tls`;
  const ca: string[] = [];
  for (const file of files.caFiles) {
    const text = readText(`${prefix}.caFiles`, file, problems);
    if (text === undefined) continue;
    const pems = certificateBlocks(text);
    if (pems.length === 0) problems.push(`${prefix}.caFiles: ${file} ${incomplete(text, 'certificate')}`);
    for (const pem of pems) {
      try {
        new X509Certificate(pem);
        ca.push(pem);
      } catch (error) {
        problems.push(`${prefix}.caFiles: ${file} holds a certificate that does not parse (${messageOf(error)})`);
      }
    }
  }
  let cert: string | undefined;
  let key: string | undefined;
  if (files.certFile !== undefined && files.keyFile !== undefined) {
    const certText = readText(`${prefix}.certFile`, files.certFile, problems);
    const keyText = readText(`${prefix}.keyFile`, files.keyFile, problems);
    let certificate: X509Certificate | undefined;
    if (certText !== undefined) {
      const pems = certificateBlocks(certText);
      if (pems.length === 0) problems.push(`${prefix}.certFile: ${files.certFile} ${incomplete(certText, 'certificate')}`);
      else {
        try {
          certificate = new X509Certificate(pems[0] as string);
          cert = pems.join('\n');
        } catch (error) {
          problems.push(`${prefix}.certFile: ${files.certFile} is not a valid X.509 certificate (${messageOf(error)})`);
        }
      }
    }
    if (keyText !== undefined) {
      const pem = privateKeyBlockOf(keyText);
      if (pem === null) problems.push(`${prefix}.keyFile: ${files.keyFile} ${incomplete(keyText, 'private key')}`);
      else {
        try {
          const privateKey = createPrivateKey(pem);
          key = pem;
          if (certificate !== undefined && !certificate.checkPrivateKey(privateKey)) {
            problems.push(`${prefix}.keyFile: ${files.keyFile} is not the key of ${files.certFile}`);
          }
        } catch (error) {
          problems.push(`${prefix}.keyFile: ${files.keyFile} holds a private key that cannot be parsed (${messageOf(error)})`);
        }
      }
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { ca, ...(cert !== undefined ? { cert } : {}), ...(key !== undefined ? { key } : {}) };
}

/** mtime and size of each file, to notice a rotation without reading the files every round. */
export function fingerprintFiles(files: GroupTlsFiles): string {
  const names = [...files.caFiles, files.certFile, files.keyFile].filter((name): name is string => name !== undefined);
  return names
    .map((name) => {
      try {
        const stat = statSync(name);
        return `${stat.mtimeMs}:${stat.size}`;
      } catch {
        return 'missing';
      }
    })
    .join('|');
}
