/**
 * A failed TLS connection said in an operator's words: what happened (the peer's certificate is
 * not trusted, the peer refused ours, it does not speak TLS) and which file to look at, instead of
 * OpenSSL's string (a source path, a line break, `SSL alert number 42`) or Node's advice to use
 * `--use-system-ca`, which is wrong for a private CA. Used by the fleet's node client (a group's
 * files) and by `fabric-ops fleet` (its --cert and --cacert). Pure.
 */
import { oneLine } from '../text';

export type TlsProblemKind =
  /** The peer's certificate does not chain to a CA we trust. */
  | 'peer-untrusted'
  /** The peer's certificate has expired or is not valid yet. */
  | 'peer-validity'
  /** The peer's certificate does not name the host we asked for. */
  | 'peer-name'
  /** The peer refused our client certificate with a TLS alert (or asked for one we did not give). */
  | 'client-refused'
  /** The peer closed the connection after a complete handshake without answering: it refused our certificate after the handshake (TLS 1.3, or a server that checks it then). */
  | 'closed-after-handshake'
  /** The peer cut the handshake without an alert. */
  | 'handshake-cut'
  /** The peer does not speak TLS on that port. */
  | 'not-tls'
  /** Another TLS failure (versions, ciphers). */
  | 'other';

export interface TlsProblem {
  kind: TlsProblemKind;
  /** What the TLS stack said, in a few words and on one line (`self-signed certificate in certificate chain`, `bad certificate`). */
  detail: string;
}

/** Node's verification codes for a server certificate that does not chain to a trusted CA. */
const untrustedCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_CHAIN_TOO_LONG',
]);
const validityCodes = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const nameCodes = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH']);

/** TLS alerts a server sends about the client's certificate (RFC 8446 6.2), as OpenSSL names them. */
const certificateAlerts =
  /alert (bad certificate|unsupported certificate|certificate revoked|certificate expired|certificate unknown|unknown ca|access denied|certificate required)/;

/** OpenSSL's reason in `...:error:0A000412:SSL routines:ssl3_read_bytes:ssl/tls alert bad certificate:../deps/...:918:SSL alert number 42`. */
function openSslReason(message: string): string | null {
  const match = /error:[0-9A-Fa-f]+:[^:]*:[^:]*:([^:\n]+)/.exec(message);
  return match?.[1]?.trim() ?? null;
}

/** Node's message without its advice to use the system's CA store (wrong for a private CA). */
function withoutNodeAdvice(message: string): string {
  return message.replace(/;\s*if the root CA is installed locally, try running Node\.js with --use-system-ca/i, '');
}

/**
 * The TLS problem behind a failed request, or null when it is not one (a refused connection, a
 * time-out). `handshakeDone`: the TLS handshake had completed (`secureConnect`) before the error;
 * `answered`: a response had begun.
 */
export function tlsProblemOf(error: { code?: string; message: string; reason?: string }, handshakeDone: boolean, answered = false): TlsProblem | null {
  const code = error.code ?? '';
  const reason = error.reason ?? openSslReason(error.message) ?? '';
  const short = (text: string): string => oneLine(text, 120);
  if (untrustedCodes.has(code)) return { kind: 'peer-untrusted', detail: short(withoutNodeAdvice(error.message)) };
  if (validityCodes.has(code)) return { kind: 'peer-validity', detail: short(error.message) };
  if (nameCodes.has(code)) return { kind: 'peer-name', detail: short(error.message) };
  const alert = certificateAlerts.exec(reason);
  if (alert) return { kind: 'client-refused', detail: `TLS alert "${alert[1] ?? ''}"` };
  if (/alert handshake failure/.test(reason)) return { kind: 'client-refused', detail: 'TLS alert "handshake failure"' };
  if (/wrong version number|packet length too long|http request/.test(reason)) return { kind: 'not-tls', detail: short(reason) };
  if (code === 'ECONNRESET' && handshakeDone && !answered) return { kind: 'closed-after-handshake', detail: 'the connection was closed before any answer' };
  if (code === 'ECONNRESET' && /before secure TLS connection was established/.test(error.message))
    return { kind: 'handshake-cut', detail: 'the handshake was cut' };
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO') return { kind: 'other', detail: short(reason || error.message) };
  return null;
}

/** What to name in the message: who the peer is, and where our CA and client certificate come from. */
export interface TlsParties {
  /** `the node`, `the fleet server`. */
  peer: string;
  /** Where the CAs trusted for the peer's certificate come from: `groups.org1.tls.caFiles (/etc/org1/ca.crt)`, `--cacert ca.crt`. */
  caSource: string;
  /** Where our client certificate comes from, or null when none is given: `groups.org1.tls.certFile (/etc/org1/client.crt)`, `--cert me.crt`. */
  certSource: string | null;
  /** The host (and port) the peer was asked at, or the TLS server name checked. */
  host: string;
}

/**
 * One line: what happened first, in a few words (a table cut at 80 columns keeps them), then
 * which file to look at and what it must hold.
 */
export function describeTlsProblem(problem: TlsProblem, parties: TlsParties): string {
  const { peer, caSource, certSource, host } = parties;
  const roots = `one of ${peer}'s operations.tls.clientRootCAs`;
  switch (problem.kind) {
    case 'peer-untrusted':
      return `untrusted server certificate (${problem.detail}): ${peer}'s certificate is not issued by a CA of ${caSource}`;
    case 'peer-validity':
      return `server certificate out of its validity (${problem.detail}): ${peer}'s certificate must be renewed (checked with ${caSource})`;
    case 'peer-name':
      return `server certificate for another name: ${peer}'s certificate does not name ${host}, the host it was asked at (${problem.detail})`;
    case 'client-refused':
      return certSource === null
        ? `client certificate required (${problem.detail}): ${peer} wants one and none is given`
        : `client certificate refused (${problem.detail}): ${certSource} must be issued by ${roots}`;
    case 'closed-after-handshake':
      return certSource === null
        ? `closed after the TLS handshake, no answer: ${peer} may want a client certificate, and none is given`
        : `client certificate refused after the TLS handshake (${peer} closed the connection without answering): ${certSource} must be issued by ${roots}`;
    case 'handshake-cut':
      return `TLS handshake cut by ${peer}: it may have refused ${certSource ?? 'the missing client certificate'}`;
    case 'not-tls':
      return `not TLS: ${peer} does not speak TLS at ${host} (${problem.detail}); is it http://?`;
    default:
      return `TLS handshake failed: ${problem.detail}`;
  }
}
