import http from 'node:http';
import https from 'node:https';
import type { SecureVersion } from 'node:tls';
import type { KeyPair } from './pki';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Trust this CA PEM for the server (https). */
  ca?: string;
  /** Present this client certificate (https). */
  client?: KeyPair;
  maxVersion?: SecureVersion;
  minVersion?: SecureVersion;
  timeoutMs?: number;
}

/** One request on a fresh connection; resolves with status, headers and body. */
export function request(url: string, options: RequestOptions = {}): Promise<HttpAnswer> {
  const target = new URL(url);
  const isHttps = target.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const common = {
      method: options.method ?? 'GET',
      headers: options.headers,
      agent: false as const,
      timeout: options.timeoutMs ?? 10_000,
    };
    const onResponse = (res: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
      });
    };
    const req = isHttps
      ? https.request(
          target,
          {
            ...common,
            ca: options.ca,
            cert: options.client?.certPem,
            key: options.client?.keyPem,
            servername: 'localhost',
            maxVersion: options.maxVersion,
            minVersion: options.minVersion,
          },
          onResponse,
        )
      : http.request(target, common, onResponse);
    req.on('timeout', () => req.destroy(new Error(`request to ${url} timed out`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
