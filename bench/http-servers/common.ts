/**
 * What the reference servers of bench/http.ts share: settings from the environment the
 * benchmark passes, the /healthz answer, and prom-client's registry with the extra series.
 */
import { readFileSync } from 'node:fs';
import type { ServerOptions } from 'node:https';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

export interface ReferenceSettings {
  port: number;
  /** The same TLS settings fabric-ops uses with clientAuthRequired false. */
  tls: ServerOptions | null;
  series: number;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv): ReferenceSettings {
  const port = Number(env.BENCH_PORT);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`BENCH_PORT: not a port: ${String(env.BENCH_PORT)}`);
  const tls: ServerOptions | null = env.BENCH_TLS_CERT
    ? {
        cert: readFileSync(env.BENCH_TLS_CERT),
        key: readFileSync(String(env.BENCH_TLS_KEY)),
        ca: readFileSync(String(env.BENCH_TLS_CA)),
        requestCert: true,
        rejectUnauthorized: false,
      }
    : null;
  return { port, tls, series: Number(env.BENCH_SERIES ?? 0) };
}

/** The series every contender adds for the /metrics figure: `bench_series_total{component,index}`. */
export const seriesMetric = { namespace: 'bench', name: 'series', help: 'Series that make /metrics large.', labelNames: ['component', 'index'] } as const;

export function seriesLabels(i: number): { component: string; index: string } {
  return { component: `component${Math.floor(i / 100)}`, index: String(i % 100) };
}

export function healthBody(): string {
  return JSON.stringify({ status: 'OK', time: new Date().toISOString() });
}

export function prometheusRegistry(series: number): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counter = new Counter({ name: 'bench_series_total', help: seriesMetric.help, labelNames: [...seriesMetric.labelNames], registers: [registry] });
  for (let i = 0; i < series; i += 1) counter.inc(seriesLabels(i));
  return registry;
}
