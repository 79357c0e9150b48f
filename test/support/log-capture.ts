import { Writable } from 'node:stream';

/** A writable stream that keeps every log line, for assertions on what the service logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  private partial = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const text = this.partial + chunk.toString();
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    this.lines.push(...parts.filter((line) => line !== ''));
    callback();
  }

  /** Lines parsed as JSON (FABRIC_LOGGING_FORMAT=json). */
  records(): Array<Record<string, unknown>> {
    return this.lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  matching(pattern: RegExp): string[] {
    return this.lines.filter((line) => pattern.test(line));
  }
}
