import { createHash } from 'node:crypto';
import type { TlsConfig } from '../config/types';
import { ConfigError } from '../errors';
import type { Logger } from '../logging/types';
import type { Counter } from '../metrics/types';
import { type ConfigKeys, type TlsMaterial, loadTlsMaterial, sameTlsMaterial } from './material';
import { type CertificateSummary, summarisePem } from './pem';
import { type FileRead, fileIdentity, readPemFile } from './files';

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export interface TlsMaterialWatcherOptions {
  tls: TlsConfig;
  keys: ConfigKeys;
  logger: Logger;
  /** The material in use now (as loaded at start). */
  current: TlsMaterial;
  /**
   * Called with new, valid material. If it throws (the caller refuses the material), the
   * error is logged, the previous material stays current and the same files are not retried.
   */
  onChange: (material: TlsMaterial) => void;
  /** Poll period; default 1000. */
  intervalMs?: number;
  /** Counts each reload failure that is logged (files refused, material refused, or any exception). */
  failures?: Pick<Counter, 'add'>;
  /** Told each reload failure that is logged (the same problem is told once, as it is logged once). */
  onFailure?: (problem: string) => void;
  /** Reads and checks the files; default loadTlsMaterial (tests inject failures here). */
  load?: (tls: TlsConfig, keys: ConfigKeys, now: number) => TlsMaterial;
  /** The wall clock (ms since the epoch) that certificate validity is judged by; default Date.now. */
  now?: () => number;
}

/**
 * Reloads the server certificate, key and client root CAs when their contents change.
 * Nothing that goes wrong while reloading leaves this class: it is logged, counted, and the
 * current material keeps serving (a timer callback that threw would end the process).
 *
 * Polls by reading the files: a Kubernetes secret update re-points a symlinked `..data`
 * directory, which file watchers on the (unchanged) symlink paths never see. Reading a few
 * KiB per second is cheaper than getting that wrong. The files are read without blocking the
 * event loop (readPemFile: regular files only, bounded), one poll at a time.
 */
export class TlsMaterialWatcher {
  private readonly options: TlsMaterialWatcherOptions;
  private readonly intervalMs: number;
  private current: TlsMaterial;
  private timer: NodeJS.Timeout | undefined;
  /** The poll under way, if any: the timer does not start another one meanwhile. */
  private polling: Promise<void> | undefined;
  /** Set by stop(): a poll under way then hands nothing over. */
  private stopped = false;
  /** Digest of the files' raw contents at the last poll that looked at them. */
  private lastDigest: string | undefined;
  private lastFailure: string | undefined;
  /**
   * Files that could not be read (not a regular file, too large, unreadable), with their
   * identity (fileIdentity) then: such a file is not opened again until its identity changes.
   */
  private readonly failedReads = new Map<string, { identity: string; read: FileRead }>();
  private readonly load: (tls: TlsConfig, keys: ConfigKeys, now: number) => TlsMaterial;
  private readonly now: () => number;

  constructor(options: TlsMaterialWatcherOptions) {
    this.options = options;
    this.intervalMs = options.intervalMs ?? 1000;
    this.current = options.current;
    this.load = options.load ?? loadTlsMaterial;
    this.now = options.now ?? Date.now;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.stopped = false;
    this.timer = setInterval(() => {
      if (this.polling === undefined) void this.checkNow();
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One poll: reload when the files' contents differ from the last poll. Never rejects; a poll under way is joined, not doubled. */
  checkNow(): Promise<void> {
    this.polling ??= this.pollSafely().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async pollSafely(): Promise<void> {
    try {
      await this.poll();
    } catch (error) {
      // Not a refusal of the files but a fault on the way (a bug, a missing API, EMFILE...):
      // look again at the next poll; a repeated failure is logged once.
      this.lastDigest = undefined;
      this.reportFailure(`unexpected error while reloading: ${describeError(error)}`);
    }
  }

  private async poll(): Promise<void> {
    const digest = await this.digestFiles();
    if (this.stopped) return;
    const now = this.now();
    // An intermediate client CA entering or leaving its validity window changes the trust
    // anchors (anchors.ts) without any file changing.
    const trustDue = this.current.trustChangesAt !== null && now >= this.current.trustChangesAt;
    if (digest === this.lastDigest && !trustDue) return;
    this.lastDigest = digest;

    let material: TlsMaterial;
    try {
      material = this.load(this.options.tls, this.options.keys, now);
    } catch (error) {
      // The files are read again for loading, so they may have changed since the digest:
      // retry at the next poll (a repeated failure is logged only once).
      this.lastDigest = undefined;
      this.reportFailure(error instanceof ConfigError ? error.problems.join('; ') : describeError(error));
      return;
    }
    this.lastFailure = undefined;
    if (sameTlsMaterial(material, this.current)) return;

    try {
      this.options.onChange(material);
    } catch (error) {
      this.reportFailure(`new TLS material refused: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    const previous = this.current;
    this.current = material;
    this.logReload(material, previous);
  }

  private logReload(material: TlsMaterial, previous: TlsMaterial): void {
    const fields = {
      fingerprint: material.fingerprint,
      certificateChanged: material.certPem !== previous.certPem,
      clientRootCAsChanged: material.clientCAPems.join('') !== previous.clientCAPems.join(''),
      clientRootCAs: material.clientCAPems.length,
      trustedClientRootCAs: material.trustedClientCAPems.length,
    };
    let certificate: CertificateSummary;
    try {
      certificate = summarisePem(material.certPem);
    } catch (error) {
      // The material is in use already: say so, without the details that could not be read.
      this.options.logger.info(`TLS material reloaded: server certificate ${material.fingerprint} (not described: ${describeError(error)})`, fields);
      return;
    }
    this.options.logger.info(
      `TLS material reloaded: server certificate subject "${certificate.subject}", serial ${certificate.serial}, ` + `valid until ${certificate.notAfter}`,
      { subject: certificate.subject, serial: certificate.serial, notAfter: certificate.notAfter, ...fields },
    );
  }

  private reportFailure(problem: string): void {
    if (problem === this.lastFailure) return;
    this.lastFailure = problem;
    this.options.failures?.add(1);
    this.options.onFailure?.(problem);
    this.options.logger.error(`TLS material not reloaded, keeping the current certificate: ${problem}`, {
      problem,
      fingerprint: this.current.fingerprint,
    });
  }

  /** One watched file, unless it could not be read last time and its identity has not changed since. */
  private async readFile(path: string): Promise<FileRead> {
    const identity = await fileIdentity(path);
    const failed = this.failedReads.get(path);
    if (failed?.identity === identity) return failed.read;
    const read = await readPemFile(path);
    if (read.ok) this.failedReads.delete(path);
    else this.failedReads.set(path, { identity, read });
    return read;
  }

  /** Contents, or why they were not read, of every watched file, through any symlinks. */
  private async digestFiles(): Promise<string> {
    const { certFile, keyFile, clientRootCAFiles } = this.options.tls;
    const hash = createHash('sha256');
    for (const path of [certFile, keyFile, ...clientRootCAFiles]) {
      const read = await this.readFile(path);
      hash.update(path).update('\0');
      hash.update(read.ok ? read.bytes : `unreadable:${read.problem}`);
      hash.update('\0');
    }
    return hash.digest('hex');
  }
}
