import type { NodeKind } from '../support/fabric-reference';

/** Which client certificate a request presents. */
export type ClientCert = 'none' | 'trusted' | 'untrusted' | 'expired';

export const methods = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'PATCH'] as const;
export type Method = (typeof methods)[number];

/** One request sent alike to Fabric and to fabric-ops. */
export interface HttpCase {
  /** Stable and unique: the report's key. */
  id: string;
  /** Report section. */
  group: string;
  node: NodeKind;
  method: Method;
  path: string;
  client: ClientCert;
  body?: string;
  headers?: Record<string, string>;
  /** `plain-to-tls`: an HTTP/1.1 request in clear text to the TLS port. */
  transport: 'native' | 'plain-to-tls';
  /** Read GET /logspec afterwards and compare it too. */
  checkState: boolean;
  /** Compare the whole Content-Type header, parameters included (otherwise the media type only). */
  fullContentType?: boolean;
  /** Generated PUT /logspec body: its category (see logspec-generator.ts). */
  category?: string;
}

/** What came back, reduced to what the comparison looks at. */
export type Answer =
  | {
      kind: 'http';
      status: number;
      /** Media type, or the whole header when the case asks for it; null when absent. */
      contentType: string | null;
      /** `empty`, a JSON shape (`{error:string}`, values of `spec`/`status` shown), or `text "<body>"`. */
      body: string;
      /** absent | echoed | uuid | other */
      requestId: string;
      /** GET /logspec afterwards (spec value), when the case checks state. */
      state?: string;
      /** The body as received when short (see client.ts rawBody): kept in recordings for the reader, never compared. */
      raw?: string;
    }
  | { kind: 'tls-refused'; detail: string }
  | { kind: 'no-answer'; detail: string }
  /** A compared fact that is not one HTTP answer (metrics families, StatsD buckets, start-up outcome). */
  | { kind: 'value'; value: string };

/** A comparison of facts other than one HTTP answer. */
export interface FactCase {
  id: string;
  group: string;
  node: NodeKind;
  topic: 'metrics' | 'statsd' | 'config';
}

export type AnyCase = HttpCase | FactCase;

export type HttpAnswer = Extract<Answer, { kind: 'http' }>;

export function isHttpCase(c: AnyCase): c is HttpCase {
  return 'method' in c;
}

/** One line for the report and for the comparison (detail of tls-refused / no-answer excluded). */
export function describeAnswer(answer: Answer, withDetail = true): string {
  switch (answer.kind) {
    case 'http': {
      const parts = [String(answer.status), answer.contentType ?? 'no Content-Type', answer.body, `X-Request-Id ${answer.requestId}`];
      if (answer.state !== undefined) parts.push(`then spec ${JSON.stringify(answer.state)}`);
      return parts.join(' · ');
    }
    case 'tls-refused':
      return withDetail ? `TLS handshake refused (${answer.detail})` : 'TLS handshake refused';
    case 'no-answer':
      return withDetail ? `no HTTP answer (${answer.detail})` : 'no HTTP answer';
    case 'value':
      return answer.value;
  }
}

export function sameAnswer(a: Answer, b: Answer): boolean {
  return describeAnswer(a, false) === describeAnswer(b, false);
}

export type Verdict = { kind: 'identical' } | { kind: 'deviation'; id: string } | { kind: 'failure' };

export interface CaseResult {
  case: AnyCase;
  fabric: Answer;
  ours: Answer;
  verdict: Verdict;
}
