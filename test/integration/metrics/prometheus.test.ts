/**
 * Provider prometheus end to end: `/metrics` over mutual TLS, linted by promtool, and
 * scraped by a real Prometheus server with a client certificate from the client CA.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { startOperationsSystem, type OperationsSystem } from '../../../src';
import { testConfig } from '../../support/config';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, type TestPki } from '../../support/pki';
import { requireCommand } from '../../support/prerequisites';
import { spawnPrometheus } from '../../support/prometheus-server';
import { waitFor, type WaitOptions } from '../../support/wait';

let pki: TestPki;
let system: OperationsSystem;

beforeAll(async () => {
  pki = await createTestPki();
  system = await startOperationsSystem({
    config: testConfig({
      operations: {
        tls: {
          enabled: true,
          certFile: pki.server.cert,
          keyFile: pki.server.key,
          clientAuthRequired: true,
          clientRootCAFiles: [pki.clientCA.cert],
        },
      },
      metrics: { provider: 'prometheus' },
    }),
    logStream: new PassThrough().resume(),
  });
  system.registerChecker('ledger', { check: async () => ({ ok: false, reason: 'ledger is rebuilding' }) });
  system.registerChecker('gossip', { check: async () => ({ ok: true }) });
});

afterAll(async () => {
  await system?.stop();
  await pki?.cleanup();
});

function getMetrics(accept?: string): Promise<HttpAnswer> {
  return request(`${system.url}/metrics`, {
    ca: pki.serverCA.certPem,
    client: pki.client,
    headers: accept ? { accept } : {},
  });
}

function promtool(body: string): Promise<{ code: number | null; output: string }> {
  requireCommand('promtool');
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(body);
  });
}

describe('/metrics over mutual TLS', () => {
  beforeAll(async () => {
    expect((await request(`${system.url}/healthz`, { ca: pki.serverCA.certPem, client: pki.client })).status).toBe(503);
    system.setLogSpec('info:gossip=debug');
  });

  test('the classic text format passes `promtool check metrics`', async () => {
    const answer = await getMetrics();
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(answer.body).toContain(`fabric_version{version="${system.version.Version}"} 1\n`);
    expect(answer.body).toContain('health_check_status{component="ledger"} 0\n');
    expect(answer.body).toContain('health_check_status{component="gossip"} 1\n');
    expect(answer.body).toMatch(/\nhealth_check_duration_seconds_count\{component="ledger"\} 1\n/);
    expect(answer.body).toContain('operations_requests_total{route="/healthz",code="503"} 1\n');
    expect(answer.body).toContain('logging_spec_changes_total 1\n');
    expect(answer.body).toMatch(/\nlogging_entries_checked_total\{level="info"\} \d+/);
    expect(answer.body).toMatch(/\nprocess_resident_memory_bytes \d+/);

    const lint = await promtool(answer.body);
    expect(lint).toEqual({ code: 0, output: '' });
  });

  test('OpenMetrics when asked for it', async () => {
    const answer = await getMetrics('application/openmetrics-text; version=1.0.0');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(answer.body).toContain('# TYPE operations_requests counter\n');
    expect(answer.body.endsWith('\n# EOF\n')).toBe(true);
  });
});

describe('a real Prometheus server scraping /metrics with a client certificate', () => {
  let prometheus: ChildProcess | null = null;
  let dir: string;
  let api: string;
  let output = '';

  beforeAll(async () => {
    requireCommand('prometheus');
    dir = await mkdtemp(join(tmpdir(), 'fabric-ops-prometheus-'));
    const { port } = new URL(system.url);
    await writeFile(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  scrape_timeout: 1s',
        'scrape_configs:',
        '  - job_name: fabric-ops',
        '    scheme: https',
        '    tls_config:',
        `      ca_file: ${pki.serverCA.cert}`,
        `      cert_file: ${pki.client.cert}`,
        `      key_file: ${pki.client.key}`,
        '      server_name: localhost',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${port}']`,
        '',
      ].join('\n'),
    );
    const run = spawnPrometheus([`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`], (chunk) => {
      output = (output + chunk).slice(-8192);
    });
    prometheus = run.child;
    api = await run.api;
  });

  afterAll(async () => {
    const child = prometheus;
    if (child && child.exitCode === null) {
      await new Promise<void>((done) => {
        child.once('exit', () => done());
        child.kill('SIGTERM');
      });
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function apiGet(path: string): Promise<unknown> {
    const answer = await request(`${api}${path}`);
    if (answer.status !== 200) throw new Error(`Prometheus ${path}: ${answer.status} ${answer.body}`);
    return (answer.json as { data: unknown }).data;
  }

  interface Target {
    health: string;
    lastError: string;
    scrapeUrl: string;
  }
  interface VectorSample {
    metric: Record<string, string>;
    value: [number, string];
  }

  /** For waitFor: up to 45 s, given up at once (with its output) when Prometheus has exited. */
  const whilePrometheusRuns: WaitOptions = {
    timeoutMs: 45_000,
    everyMs: 250,
    giveUpIf: () => (prometheus?.exitCode !== null ? `prometheus exited (${String(prometheus?.exitCode)}): ${output}` : undefined),
  };

  async function query(expression: string): Promise<VectorSample[]> {
    const data = (await apiGet(`/api/v1/query?query=${encodeURIComponent(expression)}`)) as { result: VectorSample[] };
    return data.result;
  }

  test('the target is up, fabric_version is 1, and the service metrics are stored', async () => {
    const target = await waitFor(
      'a successful scrape',
      async () => {
        const data = (await apiGet('/api/v1/targets')) as { activeTargets: Target[] };
        const found = data.activeTargets[0];
        if (found?.health === 'down') throw new Error(`scrape failed: ${found.lastError}`);
        return found?.health === 'up' ? found : undefined;
      },
      whilePrometheusRuns,
    );
    expect(target.scrapeUrl).toBe(`${system.url}/metrics`);

    const up = await waitFor(
      'up{job="fabric-ops"}',
      async () => {
        const result = await query('up{job="fabric-ops"}');
        return result.length > 0 ? result : undefined;
      },
      whilePrometheusRuns,
    );
    expect(up.map((sample) => sample.value[1])).toEqual(['1']);

    const version = await waitFor(
      'fabric_version',
      async () => {
        const result = await query('fabric_version');
        return result.length > 0 ? result : undefined;
      },
      whilePrometheusRuns,
    );
    expect(version).toHaveLength(1);
    expect(version[0]?.metric).toMatchObject({ __name__: 'fabric_version', job: 'fabric-ops', version: system.version.Version });
    expect(version[0]?.value[1]).toBe('1');

    const ledger = await query('health_check_status{component="ledger"}');
    expect(ledger.map((sample) => sample.value[1])).toEqual(['0']);
    const requests = await query('operations_requests_total{route="/metrics",code="200"}');
    expect(Number(requests[0]?.value[1])).toBeGreaterThan(0);
  });
});

// Last: its 20,000 series stay in the registry, and the Prometheus server above has stopped.
describe('a large /metrics body (sent in pieces as it is rendered)', () => {
  test('Content-Length is the length of the body, and HEAD gives it without the body', async () => {
    const series = system.metrics.newGauge({ namespace: 'large', name: 'series', help: 'Series enough for a body of many pieces.', labelNames: ['index'] });
    for (let i = 0; i < 20_000; i += 1) series.with({ index: String(i) }).set(i);
    const answer = await getMetrics();
    expect(answer.status).toBe(200);
    expect(answer.headers['transfer-encoding']).toBeUndefined();
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
    expect(Buffer.byteLength(answer.body)).toBeGreaterThan(500_000);
    expect(answer.body).toContain('\nlarge_series{index="19999"} 19999\n');
    expect(answer.body.endsWith('\n')).toBe(true);

    const head = await request(`${system.url}/metrics`, { method: 'HEAD', ca: pki.serverCA.certPem, client: pki.client });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(Math.abs(Number(head.headers['content-length']) - Buffer.byteLength(answer.body))).toBeLessThan(2000);
    expect(head.body).toBe('');
  });
});
