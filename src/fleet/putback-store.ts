import { randomBytes } from 'node:crypto';
import { constants, lstatSync, mkdirSync, readlinkSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, FabricOpsError } from '../errors';
import { describeFileError } from '../file-errors';
import { parseLogSpec } from '../logging/spec';
import { systemClock, type Clock } from '../time';
import { readRegularFileSync, type FileBound } from '../tls/files';

/** A node to put back to `previous` when `dueAt` comes, if it still has one of `specs` (ours). */
export interface PendingPutBack {
  node: string;
  previous: string;
  /** Every spec this fleet set on the node since `previous` (normalised), latest last. */
  specs: string[];
  /** ms since the epoch. */
  dueAt: number;
  actor: string;
}

/**
 * The largest put-back document read or written: 8 MiB, about 45,000 put-backs of 184 bytes (a
 * node name like `peer0.org1.example.com`, a short spec and writer). A ConfigMap holds 1 MiB.
 */
const maxPutBackDocumentBytes = 8 * 1024 * 1024;

/** The most put-backs a document holds (one per node; each is a timer once loaded). */
export const maxPutBacks = 20_000;

/** The longest a Node.js timer waits (2^31-1 ms, 24.8 days): a put-back due later than that from now is not one fabric-ops wrote (a TTL is at most 7 days). */
export const maxPutBackDelayMs = 2 ** 31 - 1;

/** How the state file's limit is named in messages. */
const stateFileBound: FileBound = { maxBytes: maxPutBackDocumentBytes, kind: 'a put-back state file' };

/** Node names as the fleet file gives them (`peer0.org1`) or discovery makes them (`<object name>.<namespace>`). */
const nodeNamePattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,511}$/;

/** The document a store keeps (the file's content, the ConfigMap key's value): `{"version": 1, "pending": [...]}`. Pure. */
export function formatPutBacks(pending: readonly PendingPutBack[]): string {
  return `${JSON.stringify({ version: 1, pending }, null, 1)}\n`;
}

/** Why JSON.parse refused a text, in words that quote none of it (V8's messages quote the text's start). */
function jsonProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/end of JSON input/.test(message)) return 'is not JSON (it ends early)';
  const at = /at position (\d+)(?: \(line (\d+) column (\d+)\))?/.exec(message);
  if (at === null) return 'is not JSON';
  return `is not JSON (at character ${at[1]}${at[2] === undefined ? '' : `, line ${at[2]} column ${at[3]}`})`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isLogSpec(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    parseLogSpec(value);
    return true;
  } catch {
    return false;
  }
}

/** The problem of entry `index` (`pending.3.dueAt (node peer0): ...`), or its put-back. What the message shows of the entry was checked first. */
function checkEntry(entry: unknown, index: number, now: number): PendingPutBack | string {
  const at = `pending.${index}`;
  if (!isObject(entry)) return `${at}: expected an object`;
  const { node, previous, specs, dueAt, actor } = entry;
  if (typeof node !== 'string' || !nodeNamePattern.test(node)) return `${at}.node: expected a node name (1-512 characters of A-Z a-z 0-9 . _ : -)`;
  const named = (key: string): string => `${at}.${key} (node ${node})`;
  if (!isLogSpec(previous)) return `${named('previous')}: not a valid logging specification`;
  if (!Array.isArray(specs) || specs.length === 0) return `${named('specs')}: expected a list of at least one logging specification`;
  const bad = specs.findIndex((spec) => !isLogSpec(spec));
  if (bad !== -1) return `${at}.specs.${bad} (node ${node}): not a valid logging specification`;
  if (typeof dueAt !== 'number' || !Number.isFinite(dueAt) || dueAt < 0) return `${named('dueAt')}: expected a time in ms since the epoch`;
  if (dueAt - now > maxPutBackDelayMs) {
    return `${named('dueAt')}: ${dueAt} is ${Math.round((dueAt - now) / 86_400_000)} days from now, past the ${maxPutBackDelayMs} ms (24.8 days) a timer can wait; fabric-ops writes TTLs of at most 7 days`;
  }
  if (typeof actor !== 'string') return `${named('actor')}: expected a string`;
  return { node, previous, specs: specs as string[], dueAt, actor };
}

/**
 * Pure: the put-backs of a stored document, or why it is not one (the caller names where it came
 * from). Every entry is checked (a node name, valid logging specifications, a due time a timer
 * can reach from `now`); the problem names the entry and quotes nothing of the document.
 */
export function parsePutBacks(text: string, now: number = systemClock.now()): { ok: true; pending: PendingPutBack[] } | { ok: false; problem: string } {
  const bytes = Buffer.byteLength(text);
  if (bytes > maxPutBackDocumentBytes)
    return { ok: false, problem: `is ${bytes} bytes, more than the ${maxPutBackDocumentBytes} bytes (8 MiB) a put-back document may hold` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: jsonProblem(error) };
  }
  const invalid = (problem: string): { ok: false; problem: string } => ({ ok: false, problem: `is not a put-back document: ${problem}` });
  if (!isObject(json)) return invalid('document: expected an object {"version": 1, "pending": [...]}');
  if (json.version !== 1) return invalid('version: expected 1');
  const entries = json.pending;
  if (!Array.isArray(entries)) return invalid('pending: expected a list');
  if (entries.length > maxPutBacks) return invalid(`pending: ${entries.length} put-backs, more than the ${maxPutBacks} a document may hold`);
  const pending: PendingPutBack[] = [];
  const seen = new Map<string, number>();
  for (const [index, entry] of entries.entries()) {
    const checked = checkEntry(entry, index, now);
    if (typeof checked === 'string') return invalid(checked);
    const earlier = seen.get(checked.node);
    if (earlier !== undefined) return invalid(`pending.${index}.node (node ${checked.node}): pending.${earlier} is for the same node`);
    seen.set(checked.node, index);
    pending.push(checked);
  }
  return { ok: true, pending };
}

/** The pending put-backs could not be written: the change they protect is not made. */
export class PutBackPersistError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_PUT_BACK_PERSIST';
}

/** A store wrote its pending put-backs again after someone else removed them (the ConfigMap store's watch). */
export interface PutBackRewrite {
  /** The ConfigMap and key, for messages. */
  where: string;
  /** What someone else had done: deleted the ConfigMap, removed the key, or changed it to something fabric-ops did not write. */
  change: 'deleted' | 'key_removed' | 'changed';
  /** The nodes whose pending put-backs were written again. */
  nodes: string[];
}

/** Where pending put-backs are kept: a file, a ConfigMap, or both. */
export interface PutBackStore {
  /** For messages: the file or the ConfigMap. */
  readonly where: string;
  /** At start: the pending put-backs; throws ConfigError when the store is there but unusable. */
  load(): Promise<PendingPutBack[]>;
  /** Throws PutBackPersistError when they could not be written (the change they protect is then not made). */
  save(pending: readonly PendingPutBack[]): Promise<void>;
  /** Optional, after load (the ConfigMap store): watches where they are kept and writes them again when someone else removes them, telling `onRewritten`. */
  watch?(onRewritten: (rewrite: PutBackRewrite) => void): void;
  /** Ends what watch() started. */
  stop?(): Promise<void>;
}

/**
 * Why a state directory or file may not be trusted, or null: it must belong to this process's user
 * (effective uid) and be writable by no one else, or another user could plant put-backs that run
 * with the fleet's credentials under a writer's name.
 */
function untrusted(stats: { uid: number | bigint; mode: number | bigint }): string | null {
  const euid = process.geteuid?.();
  if (euid !== undefined && Number(stats.uid) !== euid) return `is owned by uid ${stats.uid}, not by this process's user (uid ${euid})`;
  const mode = Number(stats.mode) & 0o7777;
  const writers = [...((mode & 0o020) !== 0 ? ['its group'] : []), ...((mode & 0o002) !== 0 ? ['others'] : [])];
  return writers.length === 0 ? null : `is mode ${mode.toString(8).padStart(4, '0')} (writable by ${writers.join(' and ')})`;
}

const untrustedAdvice = 'another user could plant put-backs there, which would run with the fleet credentials';

/** O_NOFOLLOW with O_EXCL: a name planted beforehand (a symbolic link above all) is never opened, let alone followed. */
const temporaryFlags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

/**
 * Pending put-backs in `<directory>/fleet-putbacks.json`, written atomically (a new temporary file
 * of a random name, fsync, rename, fsync of the directory): a crash leaves the old file or the new,
 * never half. The directory and the file must be this user's and writable by no one else; the
 * file is read as certificates are (a regular file, not followed if a symbolic link, at most 8 MiB).
 */
export class FilePutBackStore implements PutBackStore {
  readonly file: string;
  private readonly clock: Clock;

  constructor(
    readonly directory: string,
    /** fileName: the file's name in the directory; default `fleet-putbacks.json` (companion mode: `companion-putbacks.json`). */
    options: { clock?: Clock; fileName?: string } = {},
  ) {
    this.file = path.join(directory, options.fileName ?? 'fleet-putbacks.json');
    this.clock = options.clock ?? systemClock;
  }

  get where(): string {
    return this.file;
  }

  /** At start: creates the directory; throws ConfigError when it or the file is there but unusable or untrusted. */
  async load(): Promise<PendingPutBack[]> {
    return Promise.resolve(this.loadNow());
  }

  private checkDirectory(): void {
    try {
      mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    } catch (error) {
      // EEXIST: something that is not a directory (a dangling symbolic link...): lstat says what.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new ConfigError([`stateDirectory: cannot create ${this.directory}: ${describeFileError(error)}`]);
      }
    }
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(this.directory);
    } catch (error) {
      throw new ConfigError([`stateDirectory: cannot read ${this.directory}: ${describeFileError(error)}`]);
    }
    if (stats.isSymbolicLink()) {
      let target = '';
      try {
        target = ` (to ${readlinkSync(this.directory)})`;
      } catch {
        // Named without its target.
      }
      throw new ConfigError([`stateDirectory: ${this.directory} is a symbolic link${target}; give the directory itself`]);
    }
    if (!stats.isDirectory()) throw new ConfigError([`stateDirectory: ${this.directory} is not a directory`]);
    const problem = untrusted(stats);
    if (problem !== null) {
      throw new ConfigError([
        `stateDirectory: ${this.directory} ${problem}: ${untrustedAdvice}; give a directory of this user's that only it can write (chmod go-w)`,
      ]);
    }
  }

  private loadNow(): PendingPutBack[] {
    this.checkDirectory();
    const check = (stats: { uid: bigint; mode: bigint }): string | null => {
      const problem = untrusted(stats);
      return problem === null ? null : `${problem}: ${untrustedAdvice}`;
    };
    // Judged on the open descriptor (what is read), not followed if a symbolic link, never blocking on a FIFO.
    const read = readRegularFileSync(this.file, stateFileBound, { noFollow: true, check });
    if (!read.ok) {
      if (read.code === 'ENOENT') return [];
      throw new ConfigError([`stateDirectory: cannot use ${this.file}: ${read.problem}; move it away to start without its put-backs`]);
    }
    const parsed = parsePutBacks(read.bytes.toString('utf8'), this.clock.now());
    if (!parsed.ok) throw new ConfigError([`stateDirectory: ${this.file} ${parsed.problem}; move it away to start without its put-backs`]);
    return parsed.pending;
  }

  async save(pending: readonly PendingPutBack[]): Promise<void> {
    const text = formatPutBacks(pending);
    const bytes = Buffer.byteLength(text);
    if (pending.length > maxPutBacks || bytes > maxPutBackDocumentBytes) {
      throw new PutBackPersistError(
        `cannot write the pending put-backs to ${this.file}: ${pending.length} put-backs of ${bytes} bytes, more than the ${maxPutBacks} put-backs or ${maxPutBackDocumentBytes} bytes (8 MiB) the file may hold; put back (DELETE /fleet/logspec) before setting more`,
      );
    }
    const temporary = `${this.file}.${randomBytes(12).toString('hex')}.tmp`;
    let created = false;
    try {
      const handle = await open(temporary, temporaryFlags, 0o600);
      created = true;
      try {
        await handle.writeFile(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, this.file);
      created = false;
      const directory = await open(this.directory, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      try {
        await directory.sync();
      } finally {
        await directory.close();
      }
    } catch (error) {
      // Only a file this call made is removed: a name someone else holds is left alone.
      if (created) await unlink(temporary).catch(() => undefined);
      throw new PutBackPersistError(`cannot write the pending put-backs to ${this.file}: ${describeFileError(error)}`);
    }
  }
}
