import { type BigIntStats, close, closeSync, constants, fstat, fstatSync, open, openSync, read, readSync, realpathSync, stat } from 'node:fs';
import { describeFileError } from '../file-errors';

/**
 * Reading certificate, key and CA files safely: never blocking on something that is not a
 * regular file, never reading more than a PEM file can sensibly hold.
 *
 * A FIFO opened for reading blocks until a writer comes, and a character device can be read
 * forever; `readFileSync` on either froze the event loop (issue 18, item 9). The file is
 * opened with O_NONBLOCK (which a regular file ignores and which makes opening a FIFO return
 * at once), then judged by `fstat` on the open descriptor, so what is judged is what is read,
 * even if the path is swapped in between. `stat`/`fstat` follow symlinks: a Kubernetes Secret
 * mount, a chain of symlinks to a regular file, is a regular file.
 */

/**
 * The largest PEM file read: 8 MiB. Mozilla's whole CA bundle (about 140 roots) is about
 * 220 KB and a certificate, its chain or a key a few KB; Fabric reads a CA file with the same
 * CA thousands of times (about 1.8 MB for 2,500 copies of an EC CA, 5 MB of an RSA-4096 one)
 * and serves (its pool drops the copies), so this one must too.
 */
export const maxPemFileBytes = 8 * 1024 * 1024;

/**
 * How much one kind of file may hold, and how messages name it: `the 8388608 bytes (8 MiB) a PEM
 * file may hold`. The same reader serves PEM files, the fleet configuration and its state file.
 */
export interface FileBound {
  readonly maxBytes: number;
  /** `a PEM file`: completes "the N bytes (M MiB) ... may hold". */
  readonly kind: string;
}

const pemFileBound: FileBound = { maxBytes: maxPemFileBytes, kind: 'a PEM file' };

export interface ReadOptions {
  /** O_NOFOLLOW: a symbolic link at the path (its last component) is refused, not followed. */
  readonly noFollow?: boolean;
  /** Why the open file (its fstat) is not read, or null: owner and mode rules, judged on what is read. */
  readonly check?: (stats: BigIntStats) => string | null;
}

export type FileRead =
  | { readonly ok: true; readonly bytes: Buffer }
  /** `problem` completes "cannot read <path>: ..."; `code` is the errno code of a failed open or read (`ENOENT`). */
  | { readonly ok: false; readonly problem: string; readonly code?: string };

function limitOf(bound: FileBound): string {
  const mib = bound.maxBytes / (1024 * 1024);
  return `the ${bound.maxBytes} bytes (${Number.isInteger(mib) ? `${mib} MiB` : `${Math.round(bound.maxBytes / 1024)} KiB`}) ${bound.kind} may hold`;
}

function kindOf(stats: BigIntStats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'an unknown kind of file';
}

function resolved(path: string): string {
  try {
    const real = realpathSync(path);
    return real === path ? '' : ` (${real})`;
  } catch {
    return '';
  }
}

/** Why the file described by `stats` is not read, or null when it may be. */
function refusal(path: string, stats: BigIntStats, bound: FileBound, options: ReadOptions): string | null {
  // "is a directory", as describeFileError says for EISDIR.
  if (stats.isDirectory()) return `is a directory${resolved(path)}`;
  if (!stats.isFile()) return `is ${kindOf(stats)}${resolved(path)}, not a regular file`;
  if (stats.size > BigInt(bound.maxBytes)) return `is ${stats.size} bytes, more than ${limitOf(bound)}`;
  return options.check?.(stats) ?? null;
}

function grew(bound: FileBound): string {
  return `grew past ${limitOf(bound)} while it was read`;
}

/**
 * The bytes read so far, in a buffer sized from fstat plus one byte (to see EOF in one read),
 * grown if the file grows, up to one byte more than `maxBytes`: room() is 0 once that byte
 * is read, which means the file is too large.
 */
class Contents {
  buffer: Buffer;
  length = 0;

  constructor(
    size: bigint,
    private readonly maxBytes: number,
  ) {
    this.buffer = Buffer.allocUnsafe(Number(size) + 1);
  }

  room(): number {
    return this.buffer.length - this.length;
  }

  grow(): void {
    if (this.room() > 0 || this.buffer.length > this.maxBytes) return;
    const bigger = Buffer.allocUnsafe(Math.min(this.buffer.length * 2, this.maxBytes + 1));
    this.buffer.copy(bigger, 0, 0, this.length);
    this.buffer = bigger;
  }

  done(): FileRead {
    return { ok: true, bytes: this.buffer.subarray(0, this.length) };
  }
}

function failed(problem: string): FileRead {
  return { ok: false, problem };
}

function errorRead(error: unknown, options: ReadOptions): FileRead {
  const code = (error as NodeJS.ErrnoException).code;
  // Linux's open(2) answers ELOOP when O_NOFOLLOW meets a symbolic link.
  const problem = options.noFollow === true && code === 'ELOOP' ? 'is a symbolic link, not followed here' : describeFileError(error);
  return code === undefined ? { ok: false, problem } : { ok: false, problem, code };
}

/** O_NONBLOCK so that opening a FIFO never waits for a writer (the flag is ignored for regular files). */
const openFlags = constants.O_RDONLY | constants.O_NONBLOCK;

function flagsFor(options: ReadOptions): number {
  return options.noFollow === true ? openFlags | constants.O_NOFOLLOW : openFlags;
}

/**
 * Reads one file, refusing what is not a regular file, is over `bound.maxBytes`, or fails
 * `options.check` (judged on the open descriptor). Never throws, never blocks on a FIFO.
 */
export function readRegularFileSync(path: string, bound: FileBound, options: ReadOptions = {}): FileRead {
  let fd: number;
  try {
    fd = openSync(path, flagsFor(options));
  } catch (error) {
    return errorRead(error, options);
  }
  try {
    const stats = fstatSync(fd, { bigint: true });
    const refused = refusal(path, stats, bound, options);
    if (refused !== null) return failed(refused);
    const contents = new Contents(stats.size, bound.maxBytes);
    while (contents.room() > 0) {
      const n = readSync(fd, contents.buffer, contents.length, contents.room(), null);
      if (n === 0) return contents.done();
      contents.length += n;
      contents.grow();
    }
    return failed(grew(bound));
  } catch (error) {
    return errorRead(error, options);
  } finally {
    closeSync(fd);
  }
}

/** Reads one PEM file, refusing what is not a regular file or is over maxPemFileBytes. Never throws. */
export function readPemFileSync(path: string): FileRead {
  return readRegularFileSync(path, pemFileBound);
}

// node:fs's callback functions as promises: node:fs/promises would load, at every start, Node's
// readline, REPL-history and directory modules that its FileHandle needs (about 1 ms; issue 20).
function openAsync(path: string, flags: number): Promise<number> {
  return new Promise((resolve, reject) => open(path, flags, (error, fd) => (error ? reject(error) : resolve(fd))));
}
function fstatAsync(fd: number): Promise<BigIntStats> {
  return new Promise((resolve, reject) => fstat(fd, { bigint: true }, (error, stats) => (error ? reject(error) : resolve(stats))));
}
function readAsync(fd: number, buffer: Buffer, offset: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, offset, length, null, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))));
}
function closeAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => close(fd, (error) => (error ? reject(error) : resolve())));
}
function statAsync(path: string): Promise<BigIntStats> {
  return new Promise((resolve, reject) => stat(path, { bigint: true }, (error, stats) => (error ? reject(error) : resolve(stats))));
}

/** readPemFileSync without blocking the event loop. Never rejects. */
export async function readPemFile(path: string): Promise<FileRead> {
  let fd: number;
  try {
    fd = await openAsync(path, openFlags);
  } catch (error) {
    return failed(describeFileError(error));
  }
  try {
    const stats = await fstatAsync(fd);
    const refused = refusal(path, stats, pemFileBound, {});
    if (refused !== null) return failed(refused);
    const contents = new Contents(stats.size, maxPemFileBytes);
    while (contents.room() > 0) {
      const bytesRead = await readAsync(fd, contents.buffer, contents.length, contents.room());
      if (bytesRead === 0) return contents.done();
      contents.length += bytesRead;
      contents.grow();
    }
    return failed(grew(pemFileBound));
  } catch (error) {
    return failed(describeFileError(error));
  } finally {
    await closeAsync(fd).catch(() => undefined);
  }
}

/**
 * What identifies one version of the file at `path` (through symlinks): device, inode, size,
 * modification and change times in nanoseconds. A Kubernetes Secret update points the path at a
 * new inode; a rewrite in place changes the times.
 */
export async function fileIdentity(path: string): Promise<string> {
  try {
    const s = await statAsync(path);
    return `${s.dev}:${s.ino}:${s.mode}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch (error) {
    return `error:${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
}
