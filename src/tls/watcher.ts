import { createHash } from 'node:crypto';
import type { TlsConfig } from '../config/types';
import { ConfigError, messageOf } from '../errors';
import type { Logger } from '../logging/types';
import type { Counter } from '../metrics/types';
import { type ConfigKeys, type ReadFile, type TlsMaterial, buildTlsMaterial, sameTlsMaterial } from './material';
import { type CertificateSummary, summarisePem } from './pem';
import { type FileRead, fileIdentity, readPemFile } from './files';
import { systemClock, type Clock } from '../time';

/** An error nobody expected here (a bug, not bad material): its class named too, as a stack's first line does. */
function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${messageOf(error)}` : messageOf(error);
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
  /**
   * Checks the files' contents, as read by this poll (`read`), and makes the material; default
   * buildTlsMaterial (tests inject failures here).
   */
  build?: (tls: TlsConfig, keys: ConfigKeys, read: ReadFile, now: number) => TlsMaterial;
  /** The wall clock that certificate validity is judged by; default Date.now. */
  clock?: Clock;
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
  /**
   * When the trust anchors next change with no file changing (an intermediate client CA entering or
   * leaving its validity window): set after every build, whatever became of it, so that a refused
   * build or a refused hand-over is not redone at every poll once that moment has passed.
   */
  private nextTrustChangeAt: number | null;
  private timer: NodeJS.Timeout | undefined;
  /** The poll under way, if any: the timer does not start another one meanwhile. */
  private polling: Promise<void> | undefined;
  /** Set by stop(): a poll under way then hands nothing over. */
  private stopped = false;
  /** Digest of the files' raw contents at the last poll that looked at them. */
  private lastDigest: string | undefined;
  private lastFailure: string | undefined;
  /**
   * Each file's last read, with its identity (fileIdentity) then. A file that could not be read
   * (not a regular file, too large, unreadable), or any file while the material made from the
   * last reads stands refused, is not read again until its identity changes.
   */
  private readonly lastReads = new Map<string, { identity: string; read: FileRead }>();
  private refused = false;
  private readonly build: (tls: TlsConfig, keys: ConfigKeys, read: ReadFile, now: number) => TlsMaterial;
  private readonly clock: Clock;

  constructor(options: TlsMaterialWatcherOptions) {
    this.options = options;
    this.intervalMs = options.intervalMs ?? 1000;
    this.current = options.current;
    this.nextTrustChangeAt = options.current.trustChangesAt;
    this.build = options.build ?? buildTlsMaterial;
    this.clock = options.clock ?? systemClock;
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
    // One read of each file, compared and built from: what is compared is what serves. (Reading
    // the files again to build let a reload storm leave in use a certificate the files no longer
    // held, until their next change: issue 18, item 13.)
    const reads = await this.readFiles();
    if (this.stopped) return;
    const digest = digestOf(reads);
    const now = this.clock.now();
    // An intermediate client CA entering or leaving its validity window changes the trust
    // anchors (anchors.ts) without any file changing.
    const trustDue = this.nextTrustChangeAt !== null && now >= this.nextTrustChangeAt;
    if (digest === this.lastDigest && !trustDue) return;
    this.lastDigest = digest;

    let material: TlsMaterial;
    try {
      material = this.build(this.options.tls, this.options.keys, (path) => reads.get(path) ?? { ok: false, problem: 'not read' }, now);
    } catch (error) {
      // A refusal of these bytes stands until they change. Anything else is a fault on the way:
      // try again at the next poll (a repeated failure is logged only once).
      if (!(error instanceof ConfigError)) this.lastDigest = undefined;
      // Refused bytes wait for a file to change; a fault is retried at the next poll anyway.
      else this.nextTrustChangeAt = null;
      this.refused = error instanceof ConfigError;
      this.reportFailure(error instanceof ConfigError ? error.problems.join('; ') : describeError(error));
      return;
    }
    this.nextTrustChangeAt = material.trustChangesAt;
    this.lastFailure = undefined;
    this.refused = false;
    if (sameTlsMaterial(material, this.current)) return;

    try {
      this.options.onChange(material);
    } catch (error) {
      this.refused = true;
      this.reportFailure(`new TLS material refused: ${messageOf(error)}`);
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

  /** One watched file, unless its last read failed or was refused and its identity has not changed since. */
  private async readFile(path: string): Promise<FileRead> {
    const identity = await fileIdentity(path);
    const last = this.lastReads.get(path);
    if (last?.identity === identity && (!last.read.ok || this.refused)) return last.read;
    const read = await readPemFile(path);
    this.lastReads.set(path, { identity, read });
    return read;
  }

  /** Contents, or why they were not read, of every watched file, through any symlinks: one read each. */
  private async readFiles(): Promise<Map<string, FileRead>> {
    const { certFile, keyFile, clientRootCAFiles } = this.options.tls;
    const reads = new Map<string, FileRead>();
    for (const path of [certFile, keyFile, ...clientRootCAFiles]) {
      if (!reads.has(path)) reads.set(path, await this.readFile(path));
    }
    return reads;
  }
}

function digestOf(reads: ReadonlyMap<string, FileRead>): string {
  const hash = createHash('sha256');
  for (const [path, read] of reads) {
    hash.update(path).update('\0');
    hash.update(read.ok ? read.bytes : `unreadable:${read.problem}`);
    hash.update('\0');
  }
  return hash.digest('hex');
}
