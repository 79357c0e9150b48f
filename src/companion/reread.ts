import { messageOf } from '../errors';
import type { Logger } from '../logging/types';

/**
 * A read of the node's files that never overlaps itself: a call while one runs is answered by
 * that run, which then reads once more (what changed during the read is not missed). A failed
 * read is logged (`what`), never thrown. Shared by the certificate and disk monitors.
 */
export class Reread {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly read: () => Promise<void>,
    private readonly logger: Logger,
    private readonly what: string,
    private readonly stopped: () => boolean,
  ) {}

  /** Never rejects. */
  run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.read();
        } catch (error) {
          this.logger.error(`${this.what} failed: ${messageOf(error)}`);
        }
      } while (this.again && !this.stopped());
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
