import { Router } from 'express';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { LogCapture } from '../../support/log-capture';
import { rawExchange } from '../../support/raw-http';

/** A version 4 UUID as RFC 9562 writes it, lower case. */
const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Every answer carries one X-Request-Id: the client's own, echoed, else a new UUID. The id goes
 * into the head as it is written (src/http/request-ids.ts), whichever way the head is written:
 * a header list to writeHead, setHeader then end, write, an express mount, a bare answer.
 */
describe('X-Request-Id on every kind of answer', () => {
  let system: OperationsSystem;

  beforeAll(async () => {
    const router = Router();
    // What a mount's handler reads as its answer's id, before the head is written.
    router.get('/seen', (_req, res) => {
      res.json({ seen: res.getHeader('X-Request-Id') });
    });
    router.get('/own', (_req, res) => {
      res.setHeader('X-Request-Id', 'set-by-the-extension');
      res.status(202).end();
    });
    router.get('/stuck', () => undefined);
    system = await startOperationsSystem({
      config: testConfig({ metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: new LogCapture(),
      httpLimits: { responseTimeoutMs: 300 },
      extensions: [() => ({ path: '/ext', handler: router, stop: () => Promise.resolve() })],
    });
  });
  afterAll(async () => system.stop());

  /** One request on its own connection: the answer's status, its X-Request-Id lines, and its JSON body. */
  async function exchange(head: string, body = ''): Promise<{ status: number; ids: string[]; json: unknown }> {
    const { received, responses } = await rawExchange(system.address.port, { send: `${head}\r\nConnection: close\r\n\r\n${body}`, giveUpMs: 5000 });
    const ids = [...received.matchAll(/^x-request-id: *(.*?)\r$/gim)].map((match) => match[1] ?? '');
    return { status: responses[0]?.status ?? 0, ids, json: responses[0]?.json };
  }

  const cases: Array<[string, string, string, number]> = [
    ['a JSON answer (writeHead with a header list)', 'GET /healthz HTTP/1.1\r\nHost: localhost', '', 200],
    ['HEAD', 'HEAD /version HTTP/1.1\r\nHost: localhost', '', 200],
    ['PUT /logspec, 204 (end alone)', 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 15', '{"spec":"info"}', 204],
    ['OPTIONS, 204 with Allow (setHeader, then end)', 'OPTIONS /logspec HTTP/1.1\r\nHost: localhost', '', 204],
    ['405 with Allow (setHeader, then a header list)', 'DELETE /logspec HTTP/1.1\r\nHost: localhost', '', 405],
    ['/metrics (setHeader, then write)', 'GET /metrics HTTP/1.1\r\nHost: localhost', '', 200],
    ['404', 'GET /nope HTTP/1.1\r\nHost: localhost', '', 404],
    ['an express mount', 'GET /ext/seen HTTP/1.1\r\nHost: localhost', '', 200],
    ['a mount that does not answer: on to the 404', 'GET /ext/nope HTTP/1.1\r\nHost: localhost', '', 404],
    ['the response-time limit, 503', 'GET /ext/stuck HTTP/1.1\r\nHost: localhost', '', 503],
    ['a bare answer: no Host, 400', 'GET /healthz HTTP/1.1', '', 400],
  ];

  it.each(cases)('%s: one new UUID', async (_name, head, body, status) => {
    const answer = await exchange(head, body);
    expect(answer.status).toBe(status);
    expect(answer.ids).toHaveLength(1);
    expect(answer.ids[0]).toMatch(uuidV4);
  });

  it.each(cases)("%s: the client's own, echoed", async (_name, head, body, status) => {
    const answer = await exchange(`${head}\r\nX-Request-Id: trace-7`, body);
    expect({ status: answer.status, ids: answer.ids }).toEqual({ status, ids: ['trace-7'] });
  });

  it("a mount's handler sees the id its answer carries", async () => {
    const fresh = await exchange('GET /ext/seen HTTP/1.1\r\nHost: localhost');
    expect(fresh.json).toEqual({ seen: fresh.ids[0] });
    const echoed = await exchange('GET /ext/seen HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: trace-8');
    expect(echoed.json).toEqual({ seen: 'trace-8' });
  });

  it('an id the handler sets itself is the one sent', async () => {
    const answer = await exchange('GET /ext/own HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: trace-9');
    expect({ status: answer.status, ids: answer.ids }).toEqual({ status: 202, ids: ['set-by-the-extension'] });
  });

  it('a new id on every answer', async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, async () => (await exchange('GET /healthz HTTP/1.1\r\nHost: localhost')).ids[0]));
    expect(new Set(ids).size).toBe(20);
  });
});
