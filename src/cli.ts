// The bin, dist/cli.js: its first lines (scripts/bundle.js, `shebang`) start node with
// --disable-sigusr1 where node has the flag: a SIGUSR1 must not open the V8 inspector
// (src/inspector-guard.ts). Run as `node dist/cli.js`, without the flag, ./ignore-sigusr1 (imported
// first: it runs before anything else here) ignores the signal all the same, and an inspector that
// a signal opened before it was in place is refused below.
//
// Checks the Node.js version before the command and its dependencies are loaded: they may use
// APIs that an older Node.js lacks, which would fail later and less clearly (an older node started
// by the bin gets here too: the bin passes the flag only to a node that has it).
import './ignore-sigusr1';
import { hash, randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, renameSync, rmSync, writeSync } from 'node:fs';
import Module, { constants as moduleConstants, createRequire, enableCompileCache, flushCompileCache, getCompileCacheDir } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { Script } from 'node:vm';
import { openInspectorRefusal } from './inspector-guard';
import { nodeVersionProblem } from './node-version';

/**
 * The command's cache file: a header, then V8's code cache (the payload). The header is this
 * magic, the SHA-256 of the bundle the cache was made from (V8 itself checks only the source's
 * length) and the SHA-256 of the payload: V8 trusts a code cache's bytes (a damaged one crashed
 * every start, issue 28), so they are checked before it sees them.
 * (Constants first: the start below uses them.)
 */
const cacheMagic = Buffer.from('FOPSCC1\n', 'latin1');
const hashLength = 32;
const cacheHeaderLength = cacheMagic.length + 2 * hashLength;
/** A bound on what is read (the cache is about 0.5 MB). */
const cacheMaxBytes = 64 * 1024 * 1024;

function requiredNodeVersion(): string | null {
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { engines?: { node?: unknown } };
    return typeof pkg.engines?.node === 'string' ? pkg.engines.node : null;
  } catch {
    return null;
  }
}

const required = requiredNodeVersion();
const problem = required === null ? null : nodeVersionProblem(process.versions.node, required);
if (problem !== null) {
  process.stderr.write(`fabric-ops: ${problem}\n`);
  process.exit(2);
}
// An inspector open now, however it was opened, before the command reads its configuration and keys.
exitIfInspectorOpen();
// The caches of compiled code (README, "Performance"): Node's compile cache and the command's own,
// in a folder of this user's only (compileCacheDirectory). Not under V8's coverage
// (NODE_V8_COVERAGE): code compiled then carries coverage counters, and a cache made of it would
// be taken by every later start, which would run slower for good (measured: a keep-alive request
// of the command cost 29-31 us of CPU against 23 us); nor does a coverage run take a cache.
const coverage = (process.env.NODE_V8_COVERAGE ?? '') !== '';
const cacheDirectory = compileCacheDirectory(coverage);
// The command; in the built command, its bundle (scripts/bundle.js).
const commandFile = require.resolve('./command');
// With --enable-source-maps, Node's own loader (which applies the bundle's map to stack traces).
const written = cacheDirectory === undefined || process.sourceMapsEnabled ? null : runWithCodeCache(commandFile, cacheDirectory);
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only after the version check, which must run on any Node
if (written === null) require('./command');
// Once the start is over (and its first requests answered): an inspector is looked for once more
// (the command looks when the service has started, src/command.ts; one a SIGUSR1 opened is opened
// a little after the signal), then the caches are written: Node's at a normal exit too, the
// command's only here (a run that ends within a second, such as --help, leaves no cache of its own
// path for the service's starts to take).
setTimeout(() => {
  exitIfInspectorOpen();
  flushCompileCache();
  written?.();
}, 1000).unref();

function exitIfInspectorOpen(): void {
  const refusal = openInspectorRefusal();
  if (refusal === null) return;
  process.stderr.write(`fabric-ops: ${refusal}\n`);
  process.exit(2);
}

function warn(line: string): void {
  process.stderr.write(`fabric-ops: ${line}\n`);
}

/**
 * The directory of the caches of compiled code, in which Node's compile cache is on; undefined
 * for none. Compiled code from a cache runs as whoever starts the command, so the cache must be
 * in a folder that no other user can write (issue 28: a folder another local user made first in
 * the shared temporary directory had cache entries planted in it, which then ran as root). By
 * default `$XDG_CACHE_HOME/fabric-ops`, or `~/.cache/fabric-ops`, made 0700; NODE_COMPILE_CACHE,
 * which Node.js itself reads (and switches its cache on with) before this file runs, is checked
 * the same way. A folder that cannot be made gives no cache without a word (a read-only root
 * filesystem, a HOME of `/`); one that is there but unsafe gives no cache and one line saying why.
 * NODE_DISABLE_COMPILE_CACHE (any value) turns both caches off.
 */
function compileCacheDirectory(underCoverage: boolean): string | undefined {
  const euid = process.geteuid?.();
  // NODE_COMPILE_CACHE: Node's cache is on already, in a directory per Node.js version and user.
  const enabledByNode = getCompileCacheDir();
  if (enabledByNode !== undefined) {
    const trouble = euid === undefined ? null : directoryProblem(enabledByNode, euid);
    if (trouble === null) return underCoverage ? undefined : enabledByNode;
    warn(
      `compile cache: NODE_COMPILE_CACHE names an unsafe folder (${trouble}): the command keeps no code cache of its own there, ` +
        `but Node.js uses it all the same (it read the variable before the command started); point NODE_COMPILE_CACHE at a folder only this user can write, or unset it`,
    );
    return undefined;
  }
  // A NODE_COMPILE_CACHE that Node.js could not use (a read-only folder, say) is the operator's choice all the same: no cache.
  if (underCoverage || process.env.NODE_DISABLE_COMPILE_CACHE !== undefined || (process.env.NODE_COMPILE_CACHE ?? '') !== '' || euid === undefined)
    return undefined;
  const root = defaultCacheRoot();
  if (root === null) return undefined;
  if (!makeFolder(root, 0)) return undefined;
  const trouble = directoryProblem(root, euid);
  if (trouble !== null) {
    warn(`compile cache: not using ${root} (${trouble}); starting without a cache of compiled code`);
    return undefined;
  }
  // The real path (no symbolic link left to swap), and Node's per-version directory in it made
  // without group or other permissions.
  const previousUmask = process.umask(0o077);
  let result: ReturnType<typeof enableCompileCache>;
  try {
    result = enableCompileCache(realpathSync.native(root));
  } finally {
    process.umask(previousUmask);
  }
  if (result.status !== moduleConstants.compileCacheStatus.ENABLED) return undefined;
  const directory = getCompileCacheDir();
  if (directory === undefined) return undefined;
  const inner = directoryProblem(directory, euid);
  if (inner !== null) {
    warn(`compile cache: the command keeps no code cache of its own in ${directory} (${inner})`);
    return undefined;
  }
  return directory;
}

/**
 * Makes `dir` and the folders above it that are missing, each 0700; false when it cannot. Not
 * mkdirSync's `recursive`, which never returns where a parent exists and the child cannot be made
 * (a HOME on /proc); `depth` bounds the walk up.
 */
function makeFolder(dir: string, depth: number): boolean {
  const make = (): string | undefined => {
    try {
      mkdirSync(dir, { mode: 0o700 });
      return undefined;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code ?? 'unknown';
    }
  };
  const first = make();
  if (first === undefined || first === 'EEXIST') return true;
  const parent = dirname(dir);
  if (first !== 'ENOENT' || parent === dir || depth >= 64 || !makeFolder(parent, depth + 1)) return false;
  const second = make();
  return second === undefined || second === 'EEXIST';
}

/** `$XDG_CACHE_HOME/fabric-ops` when that is an absolute path (the XDG rule), else `~/.cache/fabric-ops`; null without a home. */
function defaultCacheRoot(): string | null {
  const xdg = process.env.XDG_CACHE_HOME ?? '';
  if (isAbsolute(xdg)) return join(xdg, 'fabric-ops');
  let home: string;
  try {
    home = homedir();
  } catch {
    return null;
  }
  return isAbsolute(home) ? join(home, '.cache', 'fabric-ops') : null;
}

/**
 * Why `dir` must not hold a cache, or null when it may: every folder of its real path is checked
 * (lstat): `dir` itself must be a directory of the user `euid` that neither its group nor others
 * can write; each folder above it must be root's or that user's, and not writable by its group or
 * others unless it is sticky (/tmp: nobody else can rename or remove what is in it).
 */
function directoryProblem(dir: string, euid: number): string | null {
  let real: string;
  try {
    real = realpathSync.native(dir);
  } catch (error) {
    return `${dir}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
  const parts = real.split('/').filter((part) => part !== '');
  const folders = ['/', ...parts.map((_, index) => `/${parts.slice(0, index + 1).join('/')}`)];
  for (const [index, folder] of folders.entries()) {
    const own = index === folders.length - 1;
    let stats;
    try {
      stats = lstatSync(folder);
    } catch (error) {
      return `${folder}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
    }
    if (!stats.isDirectory()) return `${folder} is not a directory`;
    if (stats.uid !== euid && (own || stats.uid !== 0)) return `${folder} belongs to uid ${stats.uid}, and the command runs as uid ${euid}`;
    const mode = stats.mode & 0o7777;
    if ((mode & 0o022) !== 0 && (own || (mode & 0o1000) === 0)) {
      return `${folder} is writable by ${(mode & 0o002) !== 0 ? 'other users' : 'its group'} (mode ${mode.toString(8).padStart(4, '0')})`;
    }
  }
  return null;
}

/**
 * Runs the command's bundle as Node runs a CommonJS module, with a V8 code cache of its own.
 * Node's compile cache holds what V8 compiles when the file is loaded, which is the top-level
 * code: every function the start calls is compiled again at every start (about 12 ms of the
 * start's CPU time; issue 20, README "Performance"). This cache is made once the start is over, so
 * it holds the functions the start ran. It lives beside Node's (`fabric-ops/` in its directory,
 * which is per Node.js version and user), one file per installed bundle and kind of run (service
 * or `fabric-ops fleet`). Returns what writes the cache after the start when it is missing, stale,
 * damaged or was refused by V8, else a no-op; null when the bundle cannot be read (the caller
 * then requires it) or the cache folder is unsafe.
 */
function runWithCodeCache(file: string, directory: string): (() => void) | null {
  const euid = process.geteuid?.() ?? 0;
  const cacheDir = join(directory, 'fabric-ops');
  const kind = process.argv[2] === 'fleet' ? 'fleet' : 'service';
  const cacheFile = join(cacheDir, `${hash('sha256', file).slice(0, 16)}-${kind}`);
  // Made, or checked when it is there, before anything in it is read.
  try {
    mkdirSync(cacheDir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return null;
  }
  const trouble = directoryProblem(cacheDir, euid);
  if (trouble !== null) {
    warn(`compile cache: not using ${cacheDir} (${trouble}); the command runs without a code cache of its own`);
    return null;
  }
  // Node's CommonJS wrapper, on a line of its own so that lines and columns in stack traces (and
  // in the source map) are the file's.
  const wrapped = readWholeFile(file, '(function (exports, require, module, __filename, __dirname) {\n', '\n})');
  if (wrapped === null) return null;
  const { text, sourceHash } = wrapped;
  const cache = readCodeCache(cacheFile, sourceHash, euid);
  const script = new Script(text, {
    filename: file,
    lineOffset: -1,
    cachedData: cache?.subarray(cacheHeaderLength),
  });
  if (cache !== null) release(cache);
  const commandModule = new Module(file, module);
  commandModule.filename = file;
  require.cache[file] = commandModule;
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(commandModule.exports, commandModule.exports, createRequire(file), commandModule, file, dirname(file));
  commandModule.loaded = true;
  if (cache !== null && !script.cachedDataRejected) return () => undefined;
  return () => writeCodeCache(cacheFile, sourceHash, script.createCachedData());
}

/**
 * Writes the cache through a new file of a random name beside it, created exclusively and
 * without following a symbolic link (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600), then renamed over
 * it (a link at the cache's own name is replaced, not followed). A cache that cannot be written
 * is no cache: the next start compiles again.
 */
function writeCodeCache(cacheFile: string, sourceHash: Buffer, payload: Buffer): void {
  const temporary = join(dirname(cacheFile), `.tmp-${randomBytes(12).toString('hex')}`);
  let fd: number;
  try {
    fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch {
    return;
  }
  try {
    const bytes = Buffer.concat([cacheMagic, sourceHash, Buffer.from(hash('sha256', payload), 'hex'), payload]);
    for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
    closeSync(fd);
    renameSync(temporary, cacheFile);
  } catch {
    try {
      closeSync(fd);
    } catch {
      // Closed already.
    }
    rmSync(temporary, { force: true });
  }
}

/**
 * The file's text between `prefix` and `suffix`, and the SHA-256 of its bytes; null when it cannot
 * be read. Read into one buffer that is released at once, so that the process does not hold a
 * second copy of the 0.8 MB bundle (nor the bytes) until a later garbage collection.
 */
function readWholeFile(file: string, prefix: string, suffix: string): { text: string; sourceHash: Buffer } | null {
  return withOpenFile(file, 0, (fd) => {
    const size = fstatSync(fd).size;
    const bytes = Buffer.allocUnsafeSlow(prefix.length + size + suffix.length);
    bytes.write(prefix, 0, 'latin1');
    if (readInto(fd, bytes, prefix.length, size) !== size) {
      release(bytes);
      return null;
    }
    bytes.write(suffix, prefix.length + size, 'latin1');
    const sourceHash = Buffer.from(hash('sha256', bytes.subarray(prefix.length, prefix.length + size)), 'hex');
    const text = bytes.toString('utf8');
    release(bytes);
    return { text, sourceHash };
  });
}

/**
 * The cache in `file` (header and payload) if it is a regular file of this user's that nobody
 * else can write, made from the bundle of `sourceHash`, with a payload whose SHA-256 is the one in
 * its header; else null. A file that fails the owner, type or payload checks is removed (it is
 * written again after the start); one of another build is replaced then.
 */
function readCodeCache(file: string, sourceHash: Buffer, euid: number): Buffer | null {
  let damaged = false;
  const data = withOpenFile(
    file,
    constants.O_NOFOLLOW,
    (fd) => {
      const stats = fstatSync(fd);
      if (!stats.isFile() || stats.uid !== euid || (stats.mode & 0o022) !== 0 || stats.size <= cacheHeaderLength || stats.size > cacheMaxBytes) {
        damaged = true;
        return null;
      }
      const bytes = Buffer.allocUnsafeSlow(stats.size);
      const ok =
        readInto(fd, bytes, 0, stats.size) === stats.size &&
        bytes.subarray(0, cacheMagic.length).equals(cacheMagic) &&
        bytes.subarray(cacheMagic.length, cacheMagic.length + hashLength).equals(sourceHash);
      if (ok && hash('sha256', bytes.subarray(cacheHeaderLength)) === bytes.subarray(cacheMagic.length + hashLength, cacheHeaderLength).toString('hex'))
        return bytes;
      // Of this build, yet not the bytes it was written with.
      damaged = ok;
      release(bytes);
      return null;
    },
    (code) => (damaged = code === 'ELOOP'),
  );
  if (damaged) rmSync(file, { force: true });
  return data;
}

/**
 * `read` on the file opened for reading (with `flags` added), which is closed after; null when it
 * cannot be opened (`onOpenError` gets the error's code) or `read` throws.
 */
function withOpenFile<T>(file: string, flags: number, read: (fd: number) => T | null, onOpenError?: (code: string | undefined) => void): T | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | flags);
  } catch (error) {
    onOpenError?.((error as NodeJS.ErrnoException).code);
    return null;
  }
  try {
    return read(fd);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Reads up to `length` bytes from the start of the file into `into` at `offset`; the number read. */
function readInto(fd: number, into: Buffer, offset: number, length: number): number {
  let done = 0;
  while (done < length) {
    const read = readSync(fd, into, offset + done, length - done, done);
    if (read === 0) break;
    done += read;
  }
  return done;
}

/**
 * Frees a buffer's memory now (it is detached: empty from then on) rather than at a later garbage
 * collection: at start, that may be seconds later, and idle memory is one of issue 20's figures.
 */
function release(bytes: Buffer): void {
  (bytes.buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer }).transfer(0);
}
