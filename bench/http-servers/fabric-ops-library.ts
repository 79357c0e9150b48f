/**
 * fabric-ops for the /metrics figure of bench/http.ts: the compiled library (FABRIC_OPS_DIST,
 * default ./dist) started from the CORE_* environment as the command does, plus the extra series
 * (the command has no way to add them).
 */
import { join, resolve } from 'node:path';
import { seriesLabels, seriesMetric } from './common';

type Library = typeof import('../../src/index');

async function main(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const library = require(join(resolve(process.env.FABRIC_OPS_DIST ?? 'dist'), 'index.js')) as Library;
  const system = await library.startOperationsSystem({ env: process.env });
  const counter = system.metrics.newCounter({ ...seriesMetric, labelNames: [...seriesMetric.labelNames] });
  const series = Number(process.env.BENCH_SERIES ?? 0);
  for (let i = 0; i < series; i += 1) counter.with(seriesLabels(i)).add(1);
  const stop = (): void => {
    void system.stop(0).then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
