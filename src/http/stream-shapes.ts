import { Readable, Writable } from 'node:stream';

/**
 * Gives Node's stream states, once per process and before any request, the shapes the first
 * connection reset would give them under load.
 *
 * Node's ReadableState and WritableState add some fields only when first needed: the error of a
 * stream destroyed with one, and a write's callback (and, when the write completes at once, what
 * runs after it). The first connection a client resets (ECONNRESET: load tools end that way, and so
 * does a client that goes away with an answer unread) thus gives a stream state a shape no state
 * of the process had before. V8 then drops the optimized code of every function that counted on
 * the old shape being the last: about 70 of Node's stream and HTTP functions, compiled again under
 * the next load on the same core as the requests (docs/performance.md, "The sixth round").
 *
 * Three streams that touch no I/O take those shapes here: a readable destroyed with an error, and
 * two writables destroyed with an error, one after a write that completed at once (a plain
 * socket's), one with its write still in flight (a TLS socket's). V8 then optimizes for them from
 * the start. Nothing else changes, and should Node make these fields in its constructors, this does
 * nothing (test/integration/http/stream-shapes.test.ts checks both).
 */
let settled = false;

export function settleStreamShapes(): void {
  if (settled) return;
  settled = true;
  const ignore = (): void => undefined;
  const reset = (): Error => new Error('fabric-ops: a stream reset at start to settle the shapes of stream states');

  const readable = new Readable({ read: ignore });
  readable.on('error', ignore);
  readable.destroy(reset());

  const writtenAtOnce = new Writable({ write: (_chunk, _encoding, done: (error?: Error | null) => void) => done() });
  writtenAtOnce.on('error', ignore);
  writtenAtOnce.write('x', ignore);
  writtenAtOnce.destroy(reset());

  const stillWriting = new Writable({ write: ignore });
  stillWriting.on('error', ignore);
  stillWriting.write('x', ignore);
  stillWriting.destroy(reset());
}
