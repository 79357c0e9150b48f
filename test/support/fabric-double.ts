import { execFile } from 'node:child_process';
import { randomBytes, randomUUID, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { duplexPair, type Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { requireCommand } from './prerequisites';

/**
 * Doubles of the real Fabric peers and orderers recorded in ../shared/fixtures/fabric-recorded/<release>/
 * (its README.md): each answers on its operations endpoint what the recorded node answered, and
 * otherwise what Fabric's operations service does (../shared/docs/reference-behaviour.md, "TLS
 * (Fabric)" and "Observed on the real Fabric peer"; Fabric's core/operations, core/middleware and
 * flogging sources). Nothing here comes from src/: the double is what the code under test is
 * measured against. test/real/fabric/fleet-real-nodes.test.ts puts a double beside a real peer.
 *
 * - HTTPS on 127.0.0.1 with a server certificate minted at the first start from the org's
 *   operations CA (`ops/<org>/ca.crt` + `ca.key`) into a temp folder; client certificates are
 *   verified against that CA only, so an org's operator certificate (`ops/<org>/client.crt`) is
 *   trusted by its own org's nodes only, as in the recording. The recording made the operations
 *   CAs and client certificates valid for a month; once they are out of date the network issues
 *   them again with the recorded keys and names (DoubleOptions.reissueOpsCertificates).
 * - Client certificates as Go's crypto/tls does for Fabric: optional by default
 *   (VerifyClientCertIfGiven: an untrusted one fails the handshake with a `bad certificate`
 *   alert, none at all is let through and the protected paths `/logspec` and `/metrics` answer
 *   401); with `clientAuthRequired` none at all fails the handshake too. Node's TLS server only
 *   checks a client certificate after its handshake and then can only drop the connection, so the
 *   double offers TLS 1.2 (Fabric's cipher suites) and reads the client's Certificate message,
 *   which TLS 1.2 sends in the clear, to refuse it with the alert in the handshake as Go does.
 *   Deviation: a real node also offers TLS 1.3.
 * - Bodies, status codes and headers of Go's net/http and Fabric's handlers: `/healthz` (GET only,
 *   else 405 empty), `/version` (the recorded body; other methods 400 with an `"Error"` key),
 *   `/logspec` (GET, PUT with Go's json.Decoder messages and flogging's grammar, else 400),
 *   `/metrics` (the recorded text of the current step), X-Request-Id on every handler's answer,
 *   404 `404 page not found` elsewhere, ServeMux's redirect of unclean paths (301, 307 on 3.1.5).
 *   `/version` is `text/plain; charset=utf-8` (Fabric sets its type after WriteHeader: Go sniffs).
 *   Deviations: Node adds `Connection`/`Keep-Alive` headers Go does not send; /metrics is never
 *   gzipped (promhttp compresses for a client that accepts gzip).
 * - Steps: setStep(n) serves `metrics-<n>.txt`; FabricNetwork.setStep stops the nodes
 *   `heights-<n>.txt` says were stopped and starts them again when a later step has them back.
 *   setHeight(channel, n) serves another height in the recording's own height line (a node
 *   between two steps: catching up, or its chain stopped while the others moved).
 * - stop() closes the port (connections refused) and keeps it reserved; start() listens on the same
 *   port again with the recorded spec (a restarted node reads core.yaml again), the same certificate.
 */

export type RecordedRelease = '2.5.12' | '3.0.0' | '3.1.5';
export const recordedReleases: readonly RecordedRelease[] = ['2.5.12', '3.0.0', '3.1.5'];

/** The recordings: $FABRIC_RECORDED, else ../shared/fixtures/fabric-recorded beside the repository. */
export function recordingsDir(): string {
  const dir = process.env.FABRIC_RECORDED ?? path.resolve(__dirname, '..', '..', '..', 'shared', 'fixtures', 'fabric-recorded');
  if (!existsSync(path.join(dir, 'README.md'))) {
    throw new Error(`test fixtures missing: no recorded Fabric nodes in ${dir} (set FABRIC_RECORDED to the fabric-recorded folder)`);
  }
  return dir;
}

export function releaseDir(release: RecordedRelease): string {
  return path.join(recordingsDir(), release);
}

/** One entry of nodes.json. */
export interface RecordedNode {
  name: string;
  org: string;
  dialect: 'peer' | 'orderer';
  mspDir: string;
  tlsCertFile: string;
}

export function recordedNodes(release: RecordedRelease): RecordedNode[] {
  return JSON.parse(readFileSync(path.join(releaseDir(release), 'nodes.json'), 'utf8')) as RecordedNode[];
}

/** heights-<step>.txt: per node its `ledger_blockchain_height` per channel, or `stopped`. */
export function recordedHeights(release: RecordedRelease, step: number): Map<string, Record<string, number> | 'stopped'> {
  const file = path.join(releaseDir(release), `heights-${step}.txt`);
  if (!existsSync(file)) throw new Error(`no step ${step} in the ${release} recording: ${file} does not exist`);
  const heights = new Map<string, Record<string, number> | 'stopped'>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [name, ...fields] = line.trim().split(/\s+/);
    if (name === undefined || name === '') continue;
    const channels: Record<string, number> = {};
    for (const field of fields) {
      const [channel = '', height = ''] = field.split('=');
      channels[channel] = Number(height);
    }
    heights.set(name, fields[0] === 'stopped' ? 'stopped' : channels);
  }
  return heights;
}

/** One entry of a 503 /healthz: Fabric's healthz.FailedCheck. */
export interface FailedCheck {
  component: string;
  reason: string;
}

export interface DoubleOptions {
  /** Fabric's `operations.tls.clientAuthRequired`; default false, as in the recording. */
  clientAuthRequired?: boolean;
  /**
   * Issue each org's operations CA certificate and operator client certificate again, with the
   * recorded keys and names, into the temp folder. Done anyway once the recorded ones are out of
   * date: the recording made them valid for a month only.
   */
  reissueOpsCertificates?: boolean;
}

/** An org's operations material: the CA (certificate and key) and the operator's client certificate and key. */
export interface OpsMaterial {
  caFile: string;
  caKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

const execFileAsync = promisify(execFile);

async function openssl(args: string[]): Promise<void> {
  requireCommand('openssl');
  await execFileAsync('openssl', args).catch((error: unknown) => {
    throw new Error(`openssl ${args.join(' ')} failed: ${String((error as { stderr?: string }).stderr ?? error)}`, { cause: error });
  });
}

/** A positive 128-bit serial number. */
function randomSerial(): string {
  return `0x${Buffer.from([(randomBytes(1)[0] ?? 0) & 0x7f]).toString('hex')}${randomBytes(15).toString('hex')}`;
}

/** A certificate's subject as openssl's -subj takes it (`/O=org1/CN=operator`). */
function subjectOf(file: string): string {
  return new X509Certificate(readFileSync(file)).subject
    .split('\n')
    .map((part) => `/${part}`)
    .join('');
}

/**
 * Signs a certificate for `subject` with `issuer` into `cert`: for the key in `key` when it exists,
 * else for a new EC P-256 key written there. `-set_serial`: nothing is written beside the CA (the
 * fixtures are read-only).
 */
async function issueCertificate(cert: string, key: string, subject: string, issuer: { cert: string; key: string }, extensions: string[]): Promise<void> {
  const [csr, ext] = [`${cert}.csr`, `${cert}.ext`];
  await writeFile(ext, ['[ext]', ...extensions, ''].join('\n'));
  const newKey = existsSync(key) ? ['-key', key] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key];
  await openssl(['req', '-new', ...newKey, '-out', csr, '-subj', subject]);
  const signing = ['-CA', issuer.cert, '-CAkey', issuer.key, '-set_serial', randomSerial(), '-days', '7', '-sha256'];
  await openssl(['x509', '-req', '-in', csr, ...signing, '-extfile', ext, '-extensions', 'ext', '-out', cert]);
  await Promise.all([rm(csr), rm(ext)]);
}

/**
 * An operations server certificate for `name` from an org's operations CA, as the recording's nodes
 * had (EC P-256, serverAuth, SAN IP 127.0.0.1 and localhost), into `dir` as ops.crt and ops.key.
 */
export async function mintOperationsCertificate(
  ca: { cert: string; key: string },
  subject: { org: string; name: string },
  dir: string,
): Promise<{ cert: string; key: string }> {
  await mkdir(dir, { recursive: true });
  const [cert, key] = [path.join(dir, 'ops.crt'), path.join(dir, 'ops.key')];
  await rm(key, { force: true });
  await issueCertificate(cert, key, `/O=${subject.org}/CN=${subject.name}`, ca, [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    'extendedKeyUsage=serverAuth',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ]);
  return { cert, key };
}

function validNow(file: string): boolean {
  const certificate = new X509Certificate(readFileSync(file));
  return Date.now() >= Date.parse(certificate.validFrom) && Date.now() <= Date.parse(certificate.validTo);
}

/**
 * An org's operations material: the recorded files while they are valid; otherwise (or when asked)
 * the CA certificate self-signed again and the client certificate issued again, with the recorded
 * keys and names, into `dir`: the same CA to every verifier, and the same trust between the orgs.
 */
async function opsMaterial(release: RecordedRelease, org: string, dir: string, reissue: boolean): Promise<OpsMaterial & { reissued: boolean }> {
  const recorded = path.join(releaseDir(release), 'ops', org);
  const material = {
    caFile: path.join(recorded, 'ca.crt'),
    caKeyFile: path.join(recorded, 'ca.key'),
    clientCertFile: path.join(recorded, 'client.crt'),
    clientKeyFile: path.join(recorded, 'client.key'),
  };
  if (!reissue && validNow(material.caFile) && validNow(material.clientCertFile)) return { ...material, reissued: false };
  const out = path.join(dir, 'ops', org);
  await mkdir(out, { recursive: true });
  const [caFile, clientCertFile] = [path.join(out, 'ca.crt'), path.join(out, 'client.crt')];
  const caExtensions = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', 'subjectKeyIdentifier=hash'];
  const addext = caExtensions.flatMap((extension) => ['-addext', extension]);
  await openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    material.caKeyFile,
    '-subj',
    subjectOf(material.caFile),
    '-days',
    '30',
    '-set_serial',
    randomSerial(),
    ...addext,
    '-out',
    caFile,
  ]);
  await issueCertificate(clientCertFile, material.clientKeyFile, subjectOf(material.clientCertFile), { cert: caFile, key: material.caKeyFile }, [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=clientAuth',
  ]);
  return { ...material, caFile, clientCertFile, reissued: true };
}

/** Go's crypto/x509 verification of a client's chain, as VerifyClientCertIfGiven asks: chained to a root, in date, clientAuth usage. */
function chainVerifies(presented: X509Certificate[], roots: X509Certificate[]): boolean {
  const [leaf] = presented;
  if (leaf === undefined) return false;
  const now = Date.now();
  const inDate = (certificate: X509Certificate) => now >= Date.parse(certificate.validFrom) && now <= Date.parse(certificate.validTo);
  const clientAuth = (usage: string[] | undefined) => usage === undefined || usage.includes('1.3.6.1.5.5.7.3.2') || usage.includes('2.5.29.37.0');
  if (!inDate(leaf) || !clientAuth(leaf.keyUsage)) return false;
  const issuedBy = (child: X509Certificate, issuer: X509Certificate) =>
    issuer.ca && inDate(issuer) && child.checkIssued(issuer) && child.verify(issuer.publicKey);
  let current = leaf;
  for (let depth = 0; depth < 5; depth += 1) {
    if (roots.some((root) => issuedBy(current, root))) return true;
    const next = presented.slice(1).find((candidate) => issuedBy(current, candidate));
    if (next === undefined) return false;
    current = next;
  }
  return false;
}

/** A TLS 1.2 fatal alert record: bad_certificate (42), what Go sends for a refused client certificate. */
const badCertificateAlert = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x2a]);

/**
 * Puts itself between a client's TCP connection and the TLS server: passes the bytes through, reads
 * the client's handshake records until its ChangeCipherSpec and, when the client's Certificate
 * message comes, asks `accept`; a refused certificate gets the alert and the connection is closed
 * before the TLS server sees the rest. Plain HTTP gets Go's answer for it. Returns the TLS server's end.
 */
function gateClientCertificates(raw: net.Socket, accept: (chain: X509Certificate[]) => boolean): Duplex {
  const [outer, inner] = duplexPair();
  let pending = Buffer.alloc(0);
  let handshake = Buffer.alloc(0);
  let clear = true;
  let started = false;
  let closed = false;
  const close = (last?: Buffer): void => {
    closed = true;
    if (last === undefined) raw.end();
    else raw.end(last);
    inner.destroy();
  };
  outer.on('data', (chunk: Buffer) => {
    if (!closed) raw.write(chunk);
  });
  outer.on('end', () => raw.end());
  outer.on('error', () => raw.destroy());
  raw.on('end', () => outer.end());
  raw.on('error', () => outer.destroy());
  raw.on('close', () => {
    outer.destroy();
    inner.destroy();
  });
  raw.on('data', (chunk: Buffer) => {
    if (closed) return;
    if (!clear) {
      outer.write(chunk);
      return;
    }
    pending = Buffer.concat([pending, chunk]);
    if (!started && pending.length < 5) return;
    const first = !started;
    started = true;
    // Go's net/http: a first record header that reads like an HTTP request gets this answer.
    if (first && ['GET /', 'HEAD ', 'POST ', 'PUT /', 'OPTIO'].includes(pending.subarray(0, 5).toString('latin1'))) {
      close(Buffer.from('HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n'));
      return;
    }
    while (clear && pending.length >= 5 && pending.length >= 5 + pending.readUInt16BE(3)) {
      const record = pending.subarray(0, 5 + pending.readUInt16BE(3));
      pending = pending.subarray(record.length);
      if (record[0] === 20) clear = false; // ChangeCipherSpec: what follows is encrypted
      if (record[0] === 22) {
        handshake = Buffer.concat([handshake, record.subarray(5)]);
        while (handshake.length >= 4 && handshake.length >= 4 + handshake.readUIntBE(1, 3)) {
          const message = handshake.subarray(0, 4 + handshake.readUIntBE(1, 3));
          handshake = handshake.subarray(message.length);
          const chain = message[0] === 11 ? certificateList(message.subarray(4)) : [];
          if (chain === undefined || (message[0] === 11 && !accept(chain))) {
            close(badCertificateAlert);
            return;
          }
        }
      }
      outer.write(record);
    }
    if (!clear && pending.length > 0) {
      outer.write(pending);
      pending = Buffer.alloc(0);
    }
  });
  return inner;
}

/**
 * The certificates of a TLS 1.2 Certificate message body (24-bit list length, then 24-bit length +
 * DER each); undefined when one does not parse (Go refuses it with the same alert).
 */
function certificateList(body: Buffer): X509Certificate[] | undefined {
  const certificates: X509Certificate[] = [];
  try {
    for (let offset = 3; offset + 3 <= body.length;) {
      const length = body.readUIntBE(offset, 3);
      certificates.push(new X509Certificate(body.subarray(offset + 3, offset + 3 + length)));
      offset += 3 + length;
    }
  } catch {
    return undefined;
  }
  return certificates;
}

/** Why Go's json.Decoder refused a body: its message word for word. */
class GoJsonError extends Error {}

type GoJsonValue =
  { kind: 'object'; entries: Array<[string, GoJsonValue]> } | { kind: 'string'; value: string } | { kind: 'array' | 'number' | 'bool' | 'null' };

/** A byte as Go's JSON scanner quotes it in a message. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  if (c === 0x5c) return "'\\\\'";
  const named: Record<number, string> = { 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r' };
  if (named[c] !== undefined) return `'\\${named[c]}'`;
  const hex = c.toString(16).padStart(2, '0');
  if (c < 0x20 || c === 0x7f) return `'\\x${hex}'`;
  if ((c >= 0x80 && c <= 0x9f) || c === 0xad) return `'\\u00${hex}'`;
  return `'${String.fromCharCode(c)}'`;
}

/** The first JSON value of a body as Go's json.Decoder.Decode reads it (what follows it is not read), with Go's messages. */
class GoJsonReader {
  private pos = 0;

  constructor(private readonly bytes: Buffer) {}

  first(): GoJsonValue {
    this.skipSpace();
    if (this.at() === -1) throw new GoJsonError('EOF');
    return this.value();
  }

  private at(): number {
    return this.bytes[this.pos] ?? -1;
  }

  private next(): number {
    const c = this.at();
    if (c === -1) throw new GoJsonError('unexpected EOF');
    return c;
  }

  private fail(context: string): never {
    throw new GoJsonError(`invalid character ${quoteChar(this.next())} ${context}`);
  }

  private skipSpace(): void {
    while ([0x20, 0x09, 0x0a, 0x0d].includes(this.at())) this.pos += 1;
  }

  private digit(): boolean {
    return this.at() >= 0x30 && this.at() <= 0x39;
  }

  private value(): GoJsonValue {
    const c = this.next();
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (c === 0x22) return { kind: 'string', value: this.string() };
    if (c === 0x2d || this.digit()) return this.number();
    for (const [word, kind] of [
      ['true', 'bool'],
      ['false', 'bool'],
      ['null', 'null'],
    ] as const) {
      if (c !== word.charCodeAt(0)) continue;
      for (const expected of word.slice(1)) {
        this.pos += 1;
        if (this.next() !== expected.charCodeAt(0)) this.fail(`in literal ${word} (expecting '${expected}')`);
      }
      this.pos += 1;
      return { kind };
    }
    return this.fail('looking for beginning of value');
  }

  private object(): GoJsonValue {
    const entries: Array<[string, GoJsonValue]> = [];
    this.pos += 1;
    this.skipSpace();
    if (this.next() === 0x7d) {
      this.pos += 1;
      return { kind: 'object', entries };
    }
    for (;;) {
      this.skipSpace();
      if (this.next() !== 0x22) this.fail('looking for beginning of object key string');
      const key = this.string();
      this.skipSpace();
      if (this.next() !== 0x3a) this.fail('after object key');
      this.pos += 1;
      this.skipSpace();
      entries.push([key, this.value()]);
      this.skipSpace();
      const c = this.next();
      this.pos += 1;
      if (c === 0x7d) return { kind: 'object', entries };
      if (c !== 0x2c) {
        this.pos -= 1;
        this.fail('after object key:value pair');
      }
    }
  }

  private array(): GoJsonValue {
    this.pos += 1;
    this.skipSpace();
    if (this.next() === 0x5d) {
      this.pos += 1;
      return { kind: 'array' };
    }
    for (;;) {
      this.skipSpace();
      this.value();
      this.skipSpace();
      const c = this.next();
      this.pos += 1;
      if (c === 0x5d) return { kind: 'array' };
      if (c !== 0x2c) {
        this.pos -= 1;
        this.fail('after array element');
      }
    }
  }

  private string(): string {
    const start = this.pos;
    this.pos += 1;
    for (;;) {
      const c = this.next();
      if (c === 0x22) break;
      if (c < 0x20) this.fail('in string literal');
      this.pos += 1;
      if (c !== 0x5c) continue;
      const escape = this.next();
      if (escape === 0x75) {
        for (let i = 0; i < 4; i += 1) {
          this.pos += 1;
          if (!/[0-9a-fA-F]/.test(String.fromCharCode(this.next()))) this.fail('in \\u hexadecimal character escape');
        }
      } else if (!'"\\/bfnrt'.includes(String.fromCharCode(escape))) {
        this.fail('in string escape code');
      }
      this.pos += 1;
    }
    this.pos += 1;
    return JSON.parse(this.bytes.subarray(start, this.pos).toString('utf8')) as string;
  }

  private number(): GoJsonValue {
    if (this.at() === 0x2d) this.pos += 1;
    this.next();
    if (this.at() === 0x30) this.pos += 1;
    else if (this.digit()) while (this.digit()) this.pos += 1;
    else this.fail('in numeric literal');
    if (this.at() === 0x2e) {
      this.pos += 1;
      this.next();
      if (!this.digit()) this.fail('after decimal point in numeric literal');
      while (this.digit()) this.pos += 1;
    }
    if (this.at() === 0x65 || this.at() === 0x45) {
      this.pos += 1;
      if (this.next() === 0x2b || this.at() === 0x2d) this.pos += 1;
      this.next();
      if (!this.digit()) this.fail('in exponent of numeric literal');
      while (this.digit()) this.pos += 1;
    }
    return { kind: 'number' };
  }
}

/**
 * A PUT /logspec body as Fabric's httpadmin decodes it into `LogSpec{Spec string "json:spec"}`: the key
 * matched exactly or ignoring case, the last one winning, null and unknown keys ignored (so `{}` and
 * `null` give the empty spec, which is `info`), a wrong type an error after the whole value was read.
 */
export function decodeLogSpecBody(body: Buffer): { spec: string } | { error: string } {
  let value: GoJsonValue;
  try {
    value = new GoJsonReader(body).first();
  } catch (error) {
    if (error instanceof GoJsonError) return { error: error.message };
    throw error;
  }
  if (value.kind === 'null') return { spec: '' };
  if (value.kind !== 'object') return { error: `json: cannot unmarshal ${value.kind} into Go value of type httpadmin.LogSpec` };
  let spec = '';
  let typeError: string | undefined;
  for (const [key, field] of value.entries) {
    if (key.toLowerCase() !== 'spec' || field.kind === 'null') continue;
    if (field.kind === 'string') spec = field.value;
    else typeError ??= `json: cannot unmarshal ${field.kind} into Go struct field LogSpec.spec of type string`;
  }
  return typeError === undefined ? { spec } : { error: typeError };
}

/** flogging's level names (all-lower or all-upper) and how its Spec() prints them: zap's names, payload as `Level(-2)`. */
const levelNames: Record<string, string> = {
  payload: 'Level(-2)',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  dpanic: 'dpanic',
  panic: 'panic',
  fatal: 'fatal',
  notice: 'info',
  critical: 'error',
};

function levelName(word: string): string | undefined {
  const lower = word.toLowerCase();
  if (word !== lower && word !== word.toUpperCase()) return undefined;
  return Object.hasOwn(levelNames, lower) ? levelNames[lower] : undefined;
}

/**
 * flogging's ActivateSpec and Spec(): `[<logger>[,<logger>...]=]<level>[:...]`, nothing trimmed; the
 * normalised spec is every `logger=level` sorted as strings, then the default level.
 */
export function activateLogSpec(spec: string): { spec: string } | { error: string } {
  const invalid = (why: string) => ({ error: `invalid logging specification '${spec}': ${why}` });
  let defaultLevel = 'info';
  const loggers = new Map<string, string>();
  for (const segment of spec.split(':')) {
    const parts = segment.split('=');
    if (parts.length === 1) {
      const level = segment === '' ? 'info' : levelName(segment);
      if (level === undefined) return invalid(`bad segment '${segment}'`);
      defaultLevel = level;
    } else if (parts.length === 2) {
      const [names = '', word = ''] = parts;
      if (names === '') return invalid(`no logger specified in segment '${segment}'`);
      const level = levelName(word);
      if (level === undefined) return invalid(`bad segment '${segment}'`);
      for (const name of names.split(',')) {
        if (!/^[A-Za-z0-9_#:-]+(\.[A-Za-z0-9_#:-]+)*$/.test(name.endsWith('.') ? name.slice(0, -1) : name)) return invalid(`bad logger name '${name}'`);
        loggers.set(name, level);
      }
    } else {
      return invalid(`bad segment '${segment}'`);
    }
  }
  return { spec: [...[...loggers].map(([name, level]) => `${name}=${level}`).sort(), defaultLevel].join(':') };
}

/** Go's json.Marshal of a value: HTML characters and the JS line separators escaped. */
function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** time.Now() as Go's JSON writes it (RFC 3339, nanoseconds, trailing zeros dropped), in UTC. */
function goTimeNow(): string {
  const iso = new Date().toISOString();
  const fraction = `${iso.slice(20, 23)}${(process.hrtime.bigint() % 1_000_000n).toString().padStart(6, '0')}`.replace(/0+$/, '');
  return `${iso.slice(0, 19)}${fraction === '' ? '' : `.${fraction}`}Z`;
}

/** One recorded node's double. */
export class FabricDouble {
  readonly name: string;
  readonly org: string;
  readonly dialect: 'peer' | 'orderer';
  /** The org's operations CA: it issued the server certificate and is the only client root. */
  readonly caFile: string;
  /** The org's operator client certificate and key (the recorded ones, or issued again: see ops). */
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  /** The server certificate minted at the first start, and its key. */
  readonly certFile: string;
  readonly keyFile: string;
  private readonly recordedSpec: string;
  private readonly version: string;
  private readonly roots: X509Certificate[];
  private currentSpec: string;
  private currentStep = 0;
  private failedChecks: FailedCheck[] = [];
  private readonly heightOverrides = new Map<string, number>();
  private port = 0;
  private listener: net.Server | null = null;
  private reservation: net.BoundSocket | null = null;
  private tlsServer: https.Server | null = null;
  private readonly connections = new Set<net.Socket>();

  constructor(
    readonly release: RecordedRelease,
    recorded: RecordedNode,
    /** The org's operations CA (certificate and key) and operator client certificate. */
    readonly ops: OpsMaterial,
    /** Where the server certificate is minted (a folder per node). */
    workDir: string,
    private readonly options: DoubleOptions = {},
  ) {
    this.name = recorded.name;
    this.org = recorded.org;
    this.dialect = recorded.dialect;
    this.caFile = ops.caFile;
    this.clientCertFile = ops.clientCertFile;
    this.clientKeyFile = ops.clientKeyFile;
    this.certFile = path.join(workDir, recorded.name, 'ops.crt');
    this.keyFile = path.join(workDir, recorded.name, 'ops.key');
    this.roots = [new X509Certificate(readFileSync(this.caFile))];
    this.recordedSpec = (JSON.parse(this.recorded('logspec.json')) as { spec: string }).spec;
    this.currentSpec = this.recordedSpec;
    this.version = this.recorded('version.json');
  }

  private recorded(file: string): string {
    return readFileSync(path.join(releaseDir(this.release), 'nodes', this.name, file), 'utf8');
  }

  private hasRecording(step: number): boolean {
    return existsSync(path.join(releaseDir(this.release), 'nodes', this.name, `metrics-${step}.txt`));
  }

  get running(): boolean {
    return this.listener !== null;
  }

  /** https://127.0.0.1:<port>; the same port from the first start on. */
  get url(): string {
    if (this.port === 0) throw new Error(`${this.name} (${this.release}) was never started: it has no port yet`);
    return `https://127.0.0.1:${this.port}`;
  }

  /** What GET /logspec answers now. */
  get spec(): string {
    return this.currentSpec;
  }

  get step(): number {
    return this.currentStep;
  }

  /** Serve the recording of `step` on /metrics; a running node must have one (a node stopped at that step has none). */
  setStep(step: number): void {
    if (this.running && !this.hasRecording(step)) throw new Error(`${this.name} (${this.release}) has no recording at step ${step}: stop it first`);
    this.currentStep = step;
  }

  /**
   * /metrics serves `height` as the channel's `ledger_blockchain_height` instead of the recorded
   * one (a node catching up between two recorded steps, or one whose chain stopped while the
   * others moved), in the recording's own line; null serves the recording again. Every other
   * line stays as recorded.
   */
  setHeight(channel: string, height: number | null): void {
    if (height === null) this.heightOverrides.delete(channel);
    else this.heightOverrides.set(channel, height);
  }

  /** /healthz answers 503 with these failed checks; [] makes it healthy again. */
  setFailedChecks(checks: FailedCheck[]): void {
    this.failedChecks = checks.map((check) => ({ component: check.component, reason: check.reason }));
  }

  async start(): Promise<void> {
    if (this.running) return;
    if (!this.hasRecording(this.currentStep))
      throw new Error(`${this.name} (${this.release}) has no recording at step ${this.currentStep}: it was stopped then`);
    if (this.tlsServer === null) {
      await mintOperationsCertificate({ cert: this.ops.caFile, key: this.ops.caKeyFile }, this, path.dirname(this.certFile));
      this.tlsServer = https.createServer(
        {
          cert: readFileSync(this.certFile),
          key: readFileSync(this.keyFile),
          ca: readFileSync(this.caFile),
          requestCert: true,
          rejectUnauthorized: false,
          minVersion: 'TLSv1.2',
          maxVersion: 'TLSv1.2',
          ciphers:
            'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:AES128-GCM-SHA256:AES256-GCM-SHA384',
          ALPNProtocols: ['http/1.1'],
        },
        (req, res) => this.serve(req, res),
      );
      this.tlsServer.on('tlsClientError', () => undefined);
    }
    const tlsServer = this.tlsServer;
    // A connection refused at the handshake never reaches the TLS server: the gate answers it.
    const accept = (chain: X509Certificate[]) => (chain.length === 0 ? this.options.clientAuthRequired !== true : chainVerifies(chain, this.roots));
    const listener = net.createServer((raw) => {
      this.connections.add(raw);
      raw.on('close', () => this.connections.delete(raw));
      tlsServer.emit('connection', gateClientCertificates(raw, accept));
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      if (typeof net.BoundSocket === 'function') {
        // Bound with SO_REUSEPORT so that stop() can hold the port while nothing listens on it.
        const bound = this.reservation ?? new net.BoundSocket({ host: '127.0.0.1', port: this.port, reusePort: true });
        this.reservation = null;
        listener.listen(bound, resolve);
      } else {
        listener.listen(this.port, '127.0.0.1', resolve);
      }
    });
    this.port = (listener.address() as net.AddressInfo).port;
    this.listener = listener;
  }

  /** Stops listening (connections are refused, open ones cut) and forgets PUT /logspec; the port stays reserved for start(). */
  async stop(): Promise<void> {
    const listener = this.listener;
    if (listener === null) return;
    this.listener = null;
    // Bound, not listening: the port is ours (no ephemeral port is handed out on it) and connections are refused.
    if (typeof net.BoundSocket === 'function') this.reservation = new net.BoundSocket({ host: '127.0.0.1', port: this.port, reusePort: true });
    const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
    for (const socket of this.connections) socket.destroy();
    await closed;
    this.currentSpec = this.recordedSpec;
  }

  /** Stops and gives the port back. */
  async close(): Promise<void> {
    await this.stop();
    this.reservation?.close();
    this.reservation = null;
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const target = req.url ?? '/';
    const query = target.includes('?') ? target.slice(target.indexOf('?')) : '';
    let pathName: string;
    try {
      pathName = decodeURIComponent(target.slice(0, target.length - query.length));
    } catch {
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' }).end('400 Bad Request');
      return;
    }
    // ServeMux: an unclean path is redirected to the clean one (Go 1.26, in 3.1.5, with 307).
    const clean = path.posix.normalize(pathName.startsWith('/') ? pathName : `/${pathName}`);
    if (clean !== pathName) {
      const status = this.release === '3.1.5' ? 307 : 301;
      const location = `${clean}${query}`;
      res.statusCode = status;
      res.setHeader('Location', location);
      if (req.method === 'GET' || req.method === 'HEAD') res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(req.method === 'GET' ? `<a href="${location}">${status === 301 ? 'Moved Permanently' : 'Temporary Redirect'}</a>.\n\n` : undefined);
      return;
    }
    if (!['/healthz', '/version', '/logspec', '/metrics'].includes(pathName)) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }).end('404 page not found\n');
      return;
    }
    // middleware.RequireCert, then WithRequestID, on /logspec and /metrics; WithRequestID alone on the others.
    if ((pathName === '/logspec' || pathName === '/metrics') && !(req.socket as TLSSocket).authorized) {
      res.writeHead(401, { 'Content-Length': '0' }).end();
      return;
    }
    res.setHeader('X-Request-Id', req.headersDistinct['x-request-id']?.[0] ?? randomUUID());
    const method = req.method ?? 'GET';
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (pathName === '/healthz') this.healthz(method, res);
      else if (pathName === '/version') this.versionAnswer(method, res);
      else if (pathName === '/logspec') this.logspec(method, Buffer.concat(chunks), res);
      else this.metrics(res);
    });
  }

  /** fabric-lib-go healthz.HealthHandler. */
  private healthz(method: string, res: ServerResponse): void {
    if (method !== 'GET') {
      res.writeHead(405, { 'Content-Length': '0' }).end();
      return;
    }
    const failed = this.failedChecks.length > 0;
    // Healthy: the recorded answer with the time of now; failing: HealthStatus with its failed_checks.
    const body = failed
      ? { status: 'Service Unavailable', time: goTimeNow(), failed_checks: this.failedChecks }
      : { ...(JSON.parse(this.recorded('healthz.json')) as object), time: goTimeNow() };
    res.writeHead(failed ? 503 : 200, { 'Content-Type': 'application/json' }).end(goJson(body));
  }

  /** core/operations VersionInfoHandler: its Content-Type is set after WriteHeader, so Go's sniffing decides it. */
  private versionAnswer(method: string, res: ServerResponse): void {
    const sniffed = { 'Content-Type': 'text/plain; charset=utf-8' };
    if (method === 'GET') res.writeHead(200, sniffed).end(this.version);
    else res.writeHead(400, sniffed).end(goJson({ Error: `invalid request method: ${method}` }));
  }

  /** httpadmin.SpecHandler: json.Encoder answers (a trailing newline). */
  private logspec(method: string, body: Buffer, res: ServerResponse): void {
    const send = (status: number, payload: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(`${goJson(payload)}\n`);
    if (method === 'GET') {
      send(200, { spec: this.currentSpec });
      return;
    }
    if (method !== 'PUT') {
      send(400, { error: `invalid request method: ${method}` });
      return;
    }
    const decoded = decodeLogSpecBody(body);
    const activated = 'error' in decoded ? decoded : activateLogSpec(decoded.spec);
    if ('error' in activated) {
      send(400, { error: activated.error });
      return;
    }
    this.currentSpec = activated.spec;
    res.writeHead(204).end();
  }

  /** promhttp: any method, the Prometheus text format. */
  private metrics(res: ServerResponse): void {
    let text = this.recorded(`metrics-${this.currentStep}.txt`);
    if (this.heightOverrides.size > 0) {
      text = text.replace(/^ledger_blockchain_height\{channel="([^"]*)"\} \S+$/gm, (line, channel: string) => {
        const height = this.heightOverrides.get(channel);
        return height === undefined ? line : `ledger_blockchain_height{channel="${channel}"} ${height}`;
      });
    }
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
  }
}

/** The recorded network of one release: a double per node of nodes.json (none started), and the recording's steps. */
export class FabricNetwork {
  private readonly stoppedByStep = new Set<FabricDouble>();
  private currentStep = 0;

  private constructor(
    readonly release: RecordedRelease,
    /** The temp folder with the minted server certificates (and the operations material issued again, if it was). */
    readonly dir: string,
    readonly nodes: FabricDouble[],
    /** True when the orgs' CA and client certificates were issued again (see DoubleOptions.reissueOpsCertificates). */
    readonly reissued: boolean,
  ) {}

  static async open(release: RecordedRelease, options: DoubleOptions = {}): Promise<FabricNetwork> {
    const recorded = recordedNodes(release);
    const dir = await mkdtemp(path.join(os.tmpdir(), `fabric-double-${release}-`));
    try {
      const orgs = [...new Set(recorded.map((node) => node.org))];
      const reissue = options.reissueOpsCertificates === true;
      const material = new Map(await Promise.all(orgs.map(async (org) => [org, await opsMaterial(release, org, dir, reissue)] as const)));
      const nodes = recorded.map((node) => new FabricDouble(release, node, material.get(node.org) as OpsMaterial, dir, options));
      return new FabricNetwork(
        release,
        dir,
        nodes,
        [...material.values()].some((org) => org.reissued),
      );
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  node(name: string): FabricDouble {
    const found = this.nodes.find((node) => node.name === name);
    if (found === undefined) throw new Error(`no node ${name} in the ${this.release} recording (${this.nodes.map((node) => node.name).join(', ')})`);
    return found;
  }

  get step(): number {
    return this.currentStep;
  }

  /** Starts the named nodes (default every node) that are not running. */
  async start(names: string[] = this.nodes.map((node) => node.name)): Promise<void> {
    await Promise.all(names.map((name) => this.node(name).start()));
  }

  /**
   * Moves every node to `step`: a running node the recording has stopped then is stopped, every node
   * serves that step's metrics, and a node a former setStep stopped starts again when it is back.
   */
  async setStep(step: number): Promise<void> {
    const heights = recordedHeights(this.release, step);
    for (const node of this.nodes) {
      if (heights.get(node.name) === 'stopped' && node.running) {
        await node.stop();
        this.stoppedByStep.add(node);
      }
    }
    for (const node of this.nodes) node.setStep(step);
    for (const node of [...this.stoppedByStep]) {
      if (heights.get(node.name) === 'stopped') continue;
      this.stoppedByStep.delete(node);
      await node.start();
    }
    this.currentStep = step;
  }

  /** Stops every node, gives the ports back and removes the temp folder. */
  async close(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.close()));
    await rm(this.dir, { recursive: true, force: true });
  }
}
