import { clip } from '../text';
import { FabricOpsError } from '../errors';

/** Longest piece of text from outside (an API answer, a ConfigMap value) echoed in a log line or an error. */
const maxEchoLength = 300;

/** `text` cut to `max` characters, saying how long it was when cut. */
export function bounded(text: string, max = maxEchoLength): string {
  return clip(text, max);
}

/**
 * The Kubernetes API answered with an error, or did not answer. `message` is the API's own
 * Status.message when there is one (for a 403 it names the verb, the resource and the user),
 * bounded; `status` is the HTTP status (undefined when nothing was answered).
 */
export class KubernetesApiError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_KUBERNETES_API';
  constructor(
    message: string,
    readonly status?: number,
    readonly reason?: string,
  ) {
    super(bounded(message));
  }

  /** From a non-2xx answer: its Status object when the body is one, else the status line. */
  static fromAnswer(status: number, statusText: string, body: string): KubernetesApiError {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    const fields = typeof parsed === 'object' && parsed !== null ? (parsed as { kind?: unknown; message?: unknown; reason?: unknown }) : {};
    const message = fields.kind === 'Status' && typeof fields.message === 'string' && fields.message !== '' ? fields.message : statusText;
    return new KubernetesApiError(`HTTP ${status}: ${message}`, status, typeof fields.reason === 'string' ? fields.reason : undefined);
  }

  /** From an in-stream ERROR event (a Status). */
  static fromStatus(object: unknown): KubernetesApiError {
    const fields = typeof object === 'object' && object !== null ? (object as { message?: unknown; reason?: unknown; code?: unknown }) : {};
    const code = typeof fields.code === 'number' ? fields.code : undefined;
    const message = typeof fields.message === 'string' ? fields.message : 'an ERROR event without a message';
    return new KubernetesApiError(
      `${code === undefined ? 'watch' : `HTTP ${code}`}: ${message}`,
      code,
      typeof fields.reason === 'string' ? fields.reason : undefined,
    );
  }
}
