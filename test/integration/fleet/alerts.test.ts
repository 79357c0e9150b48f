/**
 * deploy/prometheus/fleet-alert-rules.yaml: valid for promtool, its unit tests pass (every alert
 * firing and not firing), and every fleet metric its expressions use is one a real fleet exposes.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { fleetConfigFrom, fleetExtension } from '../../../src/fleet';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { createTestPki, type TestPki, serverTls } from '../../support/pki';
import { requireCommand } from '../../support/prerequisites';

const rulesDir = path.resolve(__dirname, '..', '..', '..', 'deploy', 'prometheus');
const rulesFile = path.join(rulesDir, 'fleet-alert-rules.yaml');
const rules = parse(readFileSync(rulesFile, 'utf8')) as {
  groups: Array<{ rules: Array<{ alert: string; expr: string; for: string; labels: { severity: string } }> }>;
};
const alerts = rules.groups.flatMap((group) => group.rules);
const execFileAsync = promisify(execFile);

async function promtool(args: string[]): Promise<{ code: number; output: string }> {
  requireCommand('promtool');
  try {
    const { stdout, stderr } = await execFileAsync('promtool', args, { cwd: rulesDir });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: code ?? 1, output: stdout + stderr };
  }
}

test('promtool accepts the rules and their unit tests pass', async () => {
  const check = await promtool(['check', 'rules', 'fleet-alert-rules.yaml']);
  expect(check.output).toContain(`SUCCESS: ${alerts.length} rules found`);
  const unit = await promtool(['test', 'rules', 'fleet-alert-rules.test.yaml']);
  expect(unit.output).toContain('SUCCESS');
  expect(unit.code).toBe(0);
});

test('every alert is unit-tested firing and not firing', () => {
  const unitTests = parse(readFileSync(path.join(rulesDir, 'fleet-alert-rules.test.yaml'), 'utf8')) as {
    tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
  };
  const cases = unitTests.tests.flatMap((t) => t.alert_rule_test);
  for (const rule of alerts) {
    const mine = cases.filter((c) => c.alertname === rule.alert);
    expect([rule.alert, mine.some((c) => c.exp_alerts.length > 0), mine.some((c) => c.exp_alerts.length === 0)]).toEqual([rule.alert, true, true]);
  }
});

describe('against a running fleet', () => {
  let pki: TestPki;
  let node: OperationsSystem;
  let fleet: OperationsSystem;
  let stateDir: string;
  const quiet = (): NodeJS.WritableStream => new Writable({ write: (_c, _e, done) => done() });

  beforeAll(async () => {
    pki = await createTestPki();
    const tls = serverTls(pki);
    node = await startOperationsSystem({ config: testConfig({ operations: { tls } }), logStream: quiet() });
    stateDir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-alerts-'));
    const config = fleetConfigFrom(
      {
        stateDirectory: stateDir,
        pollInterval: '0s',
        writers: ['O=fabric-ops tests,CN=operator'],
        groups: { ops: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } } },
        nodes: [{ name: 'ops0', url: node.url, group: 'ops' }],
      },
      path.join(stateDir, 'fleet.yaml'),
    );
    fleet = await startOperationsSystem({
      config: testConfig({ operations: { tls }, metrics: { provider: 'prometheus' } }),
      logStream: quiet(),
      extensions: [fleetExtension(config)],
    });
  });

  afterAll(async () => {
    await fleet?.stop(0);
    await node?.stop(0);
    await rm(stateDir, { recursive: true, force: true });
    await pki?.cleanup();
  });

  test('every fleet metric the rules use is on /metrics', async () => {
    const call = (pathName: string, method = 'GET', body?: unknown) =>
      request(`${fleet.url}${pathName}`, { method, ca: pki.serverCA.certPem, client: pki.client, ...(body ? { body: JSON.stringify(body) } : {}) });
    await call('/fleet/healthz');
    await call('/fleet/version');
    expect((await call('/fleet/logspec', 'PUT', { spec: 'debug', selector: {}, ttl: '1h' })).status).toBe(200);
    expect((await call('/fleet/logspec', 'DELETE')).status).toBe(200);
    const exposition = (await call('/metrics')).body;
    const used = new Set(alerts.flatMap((rule) => rule.expr.match(/fleet_[a-z_]+/g) ?? []));
    expect(used.size).toBeGreaterThanOrEqual(5);
    for (const name of used) expect([name, new RegExp(`^${name}\\{`, 'm').test(exposition)]).toEqual([name, true]);
  });
});
