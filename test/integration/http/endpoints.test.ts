import packageJson from '../../../package.json';
import { LogSpecError } from '../../../src/errors';
import type { OperationsEvent } from '../../../src/events';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import type { HealthChecker } from '../../../src/health/types';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';

const jsonEnv = { FABRIC_LOGGING_FORMAT: 'json' };

describe('operations endpoints over plain HTTP (TLS off)', () => {
  let system: OperationsSystem;
  let logs: LogCapture;
  let url: string;

  beforeAll(async () => {
    logs = new LogCapture();
    system = await startOperationsSystem({ config: testConfig({ metrics: { provider: 'prometheus' } }), env: jsonEnv, logStream: logs });
    url = system.url;
  });
  afterAll(async () => system.stop());

  describe('/logspec', () => {
    afterEach(() => system.setLogSpec('info'));

    it('GET answers 200 with the normalised spec', async () => {
      const answer = await request(`${url}/logspec`);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.json).toEqual({ spec: 'info' });
    });

    it('PUT answers 204 with no body and GET then shows the normalised spec', async () => {
      const put = await request(`${url}/logspec`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ spec: 'debug:b=warning:a=info' }),
      });
      expect(put.status).toBe(204);
      expect(put.body).toBe('');
      const get = await request(`${url}/logspec`);
      expect(get.json).toEqual({ spec: 'a=info:b=warn:debug' });
    });

    it('parses the body as JSON whatever the Content-Type (curl -d sends form-urlencoded)', async () => {
      const put = await request(`${url}/logspec`, {
        method: 'PUT',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: '{"spec":"warn"}',
      });
      expect(put.status).toBe(204);
      expect((await request(`${url}/logspec`)).json).toEqual({ spec: 'warn' });
    });

    it('round-trips whatever GET returns, payload included', async () => {
      system.setLogSpec('a.b=payload:c.=critical:NOTICE');
      const got = (await request(`${url}/logspec`)).json as { spec: string };
      expect(got.spec).toBe('a.b=payload:c.=error:info');
      const put = await request(`${url}/logspec`, { method: 'PUT', body: JSON.stringify(got) });
      expect(put.status).toBe(204);
      expect((await request(`${url}/logspec`)).json).toEqual(got);
    });

    it('a loggers created before and after a PUT are both governed by it', async () => {
      const before = system.getLogger('peer.gossip');
      expect(before.isEnabled('debug')).toBe(false);
      await request(`${url}/logspec`, { method: 'PUT', body: '{"spec":"peer=debug"}' });
      const after = system.getLogger('peer.ledger');
      expect(before.isEnabled('debug')).toBe(true);
      expect(after.isEnabled('debug')).toBe(true);
      expect(system.getLogger('orderer').isEnabled('debug')).toBe(false);
    });

    it("an invalid spec answers 400 with Fabric's message and changes nothing", async () => {
      system.setLogSpec('warn');
      const put = await request(`${url}/logspec`, { method: 'PUT', body: '{"spec":"a*=info:debug"}' });
      expect(put.status).toBe(400);
      expect(put.json).toEqual({ error: "invalid logging specification 'a*=info:debug': bad logger name 'a*'" });
      expect((await request(`${url}/logspec`)).json).toEqual({ spec: 'warn' });
    });

    it.each([
      ['malformed JSON', '{"spec": "debug"', /not valid JSON/],
      ['an empty body', '', /empty/],
      ['no spec property', '{}', /no "spec" property/],
      ['a non-string spec', '{"spec": 5}', /"spec" must be a string; got 5/],
      ['an extra property', '{"spec": "debug", "level": "x"}', /unknown property "level"/],
      ['an array', '["debug"]', /must be a JSON object.*an array/],
      ['a bare string', '"debug"', /must be a JSON object.*a string/],
      ['null', 'null', /must be a JSON object.*null/],
    ])('%s answers 400 with a message saying which', async (_name, body, message) => {
      const put = await request(`${url}/logspec`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
      expect(put.status).toBe(400);
      expect((put.json as { error: string }).error).toMatch(message);
      expect((await request(`${url}/logspec`)).json).toEqual({ spec: 'info' });
    });

    it('a body over 16 KiB answers 413 with an error', async () => {
      const body = JSON.stringify({ spec: `${'a,'.repeat(9000)}b=debug` });
      const put = await request(`${url}/logspec`, { method: 'PUT', body });
      expect(put.status).toBe(413);
      expect((put.json as { error: string }).error).toMatch(/larger than 16384 bytes/);
    });

    it('a change through ops.logging.setSpec is audited as setLogSpec is (log line, metric, logspec.changed), both naming the actor local', async () => {
      const changes = async (): Promise<number> => {
        const line = (await request(`${url}/metrics`)).body.split('\n').find((l) => /^logging_spec_changes(_total)?(\{\})? /.test(l));
        if (line === undefined) throw new Error('no logging_spec_changes sample in /metrics');
        return Number(line.split(' ').at(-1));
      };
      const events: OperationsEvent[] = [];
      const unsubscribe = system.onEvent((event) => events.push(event));
      const before = await changes();
      system.logging.setSpec('debug');
      system.setLogSpec('warning');
      expect(() => system.logging.setSpec('a*=info')).toThrow(LogSpecError);
      unsubscribe();
      expect(await changes()).toBe(before + 2);
      expect(events).toEqual([
        { type: 'logspec.changed', previous: 'info', current: 'debug', actor: 'local' },
        { type: 'logspec.changed', previous: 'debug', current: 'warn', actor: 'local' },
        { type: 'logspec.refused', spec: 'a*=info', reason: "invalid logging specification 'a*=info': bad logger name 'a*'", actor: 'local', active: 'warn' },
      ]);
      const logged = logs.records().filter((r) => typeof r.msg === 'string' && r.msg.startsWith('logging specification changed from'));
      expect(logged.slice(-2)).toEqual([
        expect.objectContaining({ previous: 'info', current: 'debug', caller: 'local' }),
        expect.objectContaining({ previous: 'debug', current: 'warn', caller: 'local' }),
      ]);
    });

    it('logs every change at info with the old and the new spec', async () => {
      await request(`${url}/logspec`, { method: 'PUT', body: '{"spec":"error"}' });
      const record = logs.records().find((r) => r.msg === "logging specification changed from 'info' to 'error'");
      expect(record).toMatchObject({ previous: 'info', current: 'error', name: 'operations' });
    });
  });

  describe('/healthz', () => {
    it('answers 200 OK with an RFC 3339 UTC time when every checker passes', async () => {
      const answer = await request(`${url}/healthz`);
      expect(answer.status).toBe(200);
      const report = answer.json as { status: string; time: string; failed_checks?: unknown };
      expect(report.status).toBe('OK');
      expect(report.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(report.failed_checks).toBeUndefined();
    });

    it('answers 503 with one failed_checks entry per failing checker', async () => {
      const failing: HealthChecker = { check: async () => ({ ok: false, reason: 'disk on fire' }) };
      system.registerChecker('disk', failing);
      try {
        const answer = await request(`${url}/healthz`);
        expect(answer.status).toBe(503);
        expect(answer.json).toMatchObject({
          status: 'Service Unavailable',
          failed_checks: [{ component: 'disk', reason: 'disk on fire' }],
        });
      } finally {
        system.health.unregister('disk');
      }
    });

    it('HEAD answers like GET without a body', async () => {
      const answer = await request(`${url}/healthz`, { method: 'HEAD' });
      expect(answer.status).toBe(200);
      expect(answer.body).toBe('');
    });
  });

  it('GET /version answers the package version and the build commit', async () => {
    const answer = await request(`${url}/version`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ CommitSHA: expect.any(String), Version: packageJson.version });
  });

  it('GET /metrics serves the Prometheus exposition when the provider is prometheus', async () => {
    const answer = await request(`${url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/plain/);
    expect(answer.body).toMatch(/^fabric_version\{version="[^"]+"\} 1$/m);
    // The start-up line was written at info: the logging observer feeds Fabric's logging metrics.
    expect(answer.body).toMatch(/^logging_entries_written_total\{level="info"\} [1-9]\d*$/m);
    expect(answer.body).toMatch(/^logging_entries_checked_total\{level="debug"\} \d+$/m);
  });

  it.each([['/nope'], ['/logspec/'], ['/LOGSPEC'], ['/healthz/extra']])('unknown path %s answers 404 with an error', async (path) => {
    const answer = await request(`${url}${path}`);
    expect(answer.status).toBe(404);
    expect((answer.json as { error: string }).error).toContain(path);
  });

  it.each([
    ['DELETE', '/logspec', 'GET, HEAD, PUT'],
    ['POST', '/logspec', 'GET, HEAD, PUT'],
    ['PUT', '/healthz', 'GET, HEAD'],
    ['POST', '/version', 'GET, HEAD'],
    ['DELETE', '/metrics', 'GET, HEAD'],
  ])('%s %s answers 405 with Allow', async (method, path, allow) => {
    const answer = await request(`${url}${path}`, { method });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe(`${allow}, OPTIONS`);
    expect((answer.json as { error: string }).error).toMatch(new RegExp(`^method ${method} not allowed`));
  });

  it('matches the path without its query, and counts the answer under the route', async () => {
    const answer = await request(`${url}/version?pretty=1&x=%2F`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ CommitSHA: expect.any(String), Version: packageJson.version });
    const metrics = await request(`${url}/metrics`);
    expect(metrics.body).toMatch(/^operations_requests_total\{route="\/version",code="200"\} [1-9]\d*$/m);
  });

  it.each([
    ['/logspec', 'GET, HEAD, PUT, OPTIONS'],
    ['/healthz', 'GET, HEAD, OPTIONS'],
  ])('OPTIONS %s answers 204 with Allow and no body', async (path, allow) => {
    const answer = await request(`${url}${path}`, { method: 'OPTIONS' });
    expect(answer.status).toBe(204);
    expect(answer.headers.allow).toBe(allow);
    expect(answer.body).toBe('');
  });

  it("sets X-Request-Id on every response: echoes the client's, else a new UUID v4", async () => {
    const echoed = await request(`${url}/version`, { headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers['x-request-id']).toBe('trace-123');
    const fresh = await request(`${url}/nope`);
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('/metrics when the provider is not prometheus', () => {
  it('answers 404', async () => {
    const system = await startOperationsSystem({ config: testConfig(), env: {}, logStream: new LogCapture() });
    try {
      expect((await request(`${system.url}/metrics`)).status).toBe(404);
    } finally {
      await system.stop();
    }
  });
});
