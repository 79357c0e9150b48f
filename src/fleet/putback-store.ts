import { mkdirSync, readFileSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, FabricOpsError, messageOf } from '../errors';
import { describeFileError } from '../file-errors';
import { clip } from '../text';

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

const FileSchema = z.object({
  version: z.literal(1),
  pending: z.array(z.object({ node: z.string(), previous: z.string(), specs: z.array(z.string()).min(1), dueAt: z.number(), actor: z.string() })),
});

/** The document a store keeps (the file's content, the ConfigMap key's value): `{"version": 1, "pending": [...]}`. Pure. */
export function formatPutBacks(pending: readonly PendingPutBack[]): string {
  return `${JSON.stringify({ version: 1, pending }, null, 1)}\n`;
}

/** Pure: the put-backs of a stored document, or why it is not one (the caller names where it came from). */
export function parsePutBacks(text: string): { ok: true; pending: PendingPutBack[] } | { ok: false; problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `is not JSON (${clip(messageOf(error), 200)})` };
  }
  const parsed = FileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: `is not a put-back document: ${issue ? `${issue.path.join('.') || 'document'}: ${issue.message}` : 'invalid'}` };
  }
  return { ok: true, pending: parsed.data.pending };
}

/** The pending put-backs could not be written: the change they protect is not made. */
export class PutBackPersistError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_PUT_BACK_PERSIST';
}

/** Where pending put-backs are kept: a file, a ConfigMap, or both. */
export interface PutBackStore {
  /** For messages: the file or the ConfigMap. */
  readonly where: string;
  /** At start: the pending put-backs; throws ConfigError when the store is there but unusable. */
  load(): Promise<PendingPutBack[]>;
  /** Throws PutBackPersistError when they could not be written (the change they protect is then not made). */
  save(pending: readonly PendingPutBack[]): Promise<void>;
}

/**
 * Pending put-backs in `<directory>/fleet-putbacks.json`, written atomically (temporary file,
 * fsync, rename, fsync of the directory): a crash leaves the old file or the new, never half.
 */
export class FilePutBackStore implements PutBackStore {
  readonly file: string;

  constructor(readonly directory: string) {
    this.file = path.join(directory, 'fleet-putbacks.json');
  }

  get where(): string {
    return this.file;
  }

  /** At start: creates the directory; throws ConfigError when the file is there but unusable. */
  async load(): Promise<PendingPutBack[]> {
    return Promise.resolve(this.loadNow());
  }

  private loadNow(): PendingPutBack[] {
    try {
      mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new ConfigError([`stateDirectory: cannot create ${this.directory}: ${describeFileError(error)}`]);
    }
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new ConfigError([`stateDirectory: cannot read ${this.file}: ${describeFileError(error)}`]);
    }
    const parsed = parsePutBacks(text);
    if (!parsed.ok) throw new ConfigError([`stateDirectory: ${this.file} ${parsed.problem}; move it away to start without its put-backs`]);
    return parsed.pending;
  }

  async save(pending: readonly PendingPutBack[]): Promise<void> {
    const temporary = `${this.file}.${process.pid}.tmp`;
    try {
      const handle = await open(temporary, 'w', 0o600);
      try {
        await handle.writeFile(formatPutBacks(pending));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, this.file);
      const directory = await open(this.directory, 'r');
      try {
        await directory.sync();
      } finally {
        await directory.close();
      }
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw new PutBackPersistError(`cannot write the pending put-backs to ${this.file}: ${describeFileError(error)}`);
    }
  }
}
