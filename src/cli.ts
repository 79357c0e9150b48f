#!/usr/bin/env -S node --disable-sigusr1
// --disable-sigusr1: a SIGUSR1 must not open the V8 inspector (src/inspector-guard.ts). Run as
// `node dist/cli.js`, without the flag, the listener below ignores the signal all the same.
//
// Checks the Node.js version before the command and its dependencies are loaded: they may use
// APIs that an older Node.js lacks, which would fail later and less clearly.
import { hash } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire, enableCompileCache, flushCompileCache, getCompileCacheDir } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { inspectorMayBeOpen, inspectorRefusal } from './inspector-guard';
import { nodeVersionProblem } from './node-version';

// A JavaScript listener replaces Node's own SIGUSR1 handler (the one that starts the inspector).
// One line for the first signal; later ones are ignored without a word (no log flood).
let sigusr1Logged = false;
process.on('SIGUSR1', () => {
  if (sigusr1Logged) return;
  sigusr1Logged = true;
  process.stderr.write('fabric-ops: SIGUSR1 ignored: the V8 inspector is disabled (README, "The command": how to debug)\n');
});

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
const inspectorProblem = inspectorMayBeOpen(process.execArgv, process.env)
  ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when an option may have opened an inspector
    inspectorRefusal((require('node:inspector') as typeof import('node:inspector')).url(), process.env)
  : null;
if (inspectorProblem !== null) {
  process.stderr.write(`fabric-ops: ${inspectorProblem}\n`);
  process.exit(2);
}
// Node's on-disk cache of compiled code (in the OS temp directory, or NODE_COMPILE_CACHE;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off): later starts do not compile the modules again.
// Where the directory cannot be written it does nothing. Not under V8's coverage
// (NODE_V8_COVERAGE): code compiled then carries coverage counters, and a cache made of it would
// be taken by every later start, which would run slower for good (measured: a keep-alive request
// of the command cost 29-31 us of CPU against 23 us); nor does a coverage run take a cache.
const coverage = (process.env.NODE_V8_COVERAGE ?? '') !== '';
if (!coverage) enableCompileCache();
const cacheDirectory = coverage ? undefined : getCompileCacheDir();
// The command; in the built command, its bundle (scripts/bundle.js).
const commandFile = require.resolve('./command');
// With --enable-source-maps, Node's own loader (which applies the bundle's map to stack traces).
const written = cacheDirectory === undefined || process.sourceMapsEnabled ? null : runWithCodeCache(commandFile, cacheDirectory);
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only after the version check, which must run on any Node
if (written === null) require('./command');
// Once the start is over (and its first requests answered), the caches are written: Node's at a
// normal exit too, the command's only here (a run that ends within a second, such as --help,
// leaves no cache of its own path for the service's starts to take).
setTimeout(() => {
  flushCompileCache();
  written?.();
}, 1000).unref();

/**
 * Runs the command's bundle as Node runs a CommonJS module, with a V8 code cache of its own.
 * Node's compile cache holds what V8 compiles when the file is loaded, which is the top-level
 * code: every function the start calls is compiled again at every start (about 12 ms of the
 * start's CPU time; issue 20, README "Performance"). This cache is made once the start is over, so it
 * holds the functions the start ran. It lives beside Node's (`fabric-ops/` in its directory,
 * which is per Node.js version and user), one file per installed bundle and kind of run (service
 * or `fabric-ops fleet`), and starts with the SHA-1 of the source it was made from: a cache of
 * another build is not used (V8 itself checks only the source's length, and refuses a cache of
 * another V8 or other flags). Returns what writes the cache after the start when it is missing or
 * was refused, else a no-op; null when the file cannot be read (the caller then requires it).
 */
function runWithCodeCache(file: string, directory: string): (() => void) | null {
  const uid = process.getuid?.() ?? 0;
  const cacheDir = join(directory, 'fabric-ops');
  const kind = process.argv[2] === 'fleet' ? 'fleet' : 'service';
  const cacheFile = join(cacheDir, `${hash('sha1', file).slice(0, 16)}-${kind}`);
  // Node's CommonJS wrapper, on a line of its own so that lines and columns in stack traces (and
  // in the source map) are the file's.
  const wrapped = readWholeFile(file, '(function (exports, require, module, __filename, __dirname) {\n', '\n})');
  if (wrapped === null) return null;
  const { text, sourceHash } = wrapped;
  const cache = readCodeCache(cacheFile, sourceHash, uid);
  const script = new Script(text, {
    filename: file,
    lineOffset: -1,
    cachedData: cache?.subarray(sourceHash.length),
  });
  if (cache !== null) release(cache);
  const commandModule = new Module(file, module);
  commandModule.filename = file;
  require.cache[file] = commandModule;
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(commandModule.exports, commandModule.exports, createRequire(file), commandModule, file, dirname(file));
  commandModule.loaded = true;
  if (cache !== null && !script.cachedDataRejected) return () => undefined;
  return () => {
    const temporary = `${cacheFile}.${process.pid}`;
    try {
      mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
      writeFileSync(temporary, Buffer.concat([sourceHash, script.createCachedData()]), { mode: 0o600 });
      renameSync(temporary, cacheFile);
    } catch {
      // A cache that cannot be written is no cache: the next start compiles again.
      rmSync(temporary, { force: true });
    }
  };
}

/**
 * The file's text between `prefix` and `suffix`, and the SHA-1 of its bytes; null when it cannot
 * be read. Read into one buffer that is released at once, so that the process does not hold a
 * second copy of the 0.7 MB bundle (nor the bytes) until a later garbage collection.
 */
function readWholeFile(file: string, prefix: string, suffix: string): { text: string; sourceHash: Buffer } | null {
  return withOpenFile(file, (fd) => {
    const size = fstatSync(fd).size;
    const bytes = Buffer.allocUnsafeSlow(prefix.length + size + suffix.length);
    bytes.write(prefix, 0, 'latin1');
    if (readInto(fd, bytes, prefix.length, size) !== size) {
      release(bytes);
      return null;
    }
    bytes.write(suffix, prefix.length + size, 'latin1');
    const sourceHash = Buffer.from(hash('sha1', bytes.subarray(prefix.length, prefix.length + size)), 'hex');
    const text = bytes.toString('utf8');
    release(bytes);
    return { text, sourceHash };
  });
}

/** The V8 code cache in `file`, headed by the SHA-1 of its source, if that is `sourceHash` and the file is this user's; else null. */
function readCodeCache(file: string, sourceHash: Buffer, uid: number): Buffer | null {
  return withOpenFile(file, (fd) => {
    const { uid: owner, size } = fstatSync(fd);
    if (owner !== uid || size <= sourceHash.length) return null;
    const data = Buffer.allocUnsafeSlow(size);
    if (readInto(fd, data, 0, size) === size && data.subarray(0, sourceHash.length).equals(sourceHash)) return data;
    release(data);
    return null;
  });
}

/** `read` on the file opened for reading, which is closed after; null when it cannot be opened or `read` throws. */
function withOpenFile<T>(file: string, read: (fd: number) => T | null): T | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
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
