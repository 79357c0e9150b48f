import { mkdirSync, readFileSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, FabricOpsError, messageOf } from '../errors';
import { describeFileError } from '../file-errors';

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
    let parsed;
    try {
      parsed = FileSchema.safeParse(JSON.parse(text));
    } catch (error) {
      throw new ConfigError([`stateDirectory: ${this.file} is not JSON (${messageOf(error)}); move it away to start without its put-backs`]);
    }
    if (!parsed.success) throw new ConfigError([`stateDirectory: ${this.file} is not a put-back file: ${parsed.error.issues[0]?.message ?? 'invalid'}`]);
    return parsed.data.pending;
  }

  async save(pending: readonly PendingPutBack[]): Promise<void> {
    const temporary = `${this.file}.${process.pid}.tmp`;
    try {
      const handle = await open(temporary, 'w', 0o600);
      try {
        await handle.writeFile(`${JSON.stringify({ version: 1, pending }, null, 1)}\n`);
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
