/**
 * Bounds of fleet mode's own HTTP: /fleet request bodies take the server's httpLimits.maxBodyBytes
 * (as PUT /logspec does), and `fabric-ops fleet` reads at most maxAnswerBytes of an answer.
 */
import https from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fleetConfigFrom, fleetExtension } from '../../../src/fleet';
import { maxAnswerBytes } from '../../../src/fleet/cli';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { createTestPki, serverTls, type TestPki } from '../../support/pki';
import { fleetCommandInProcess } from './harness';

jest.setTimeout(60_000);

let pki: TestPki;
let dir: string;
const systems: OperationsSystem[] = [];

const quiet = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });

async function fleetServer(maxBodyBytes: number): Promise<OperationsSystem> {
  const config = fleetConfigFrom(
    {
      stateDirectory: path.join(dir, `state-${maxBodyBytes}`),
      pollInterval: '0s',
      writers: ['O=fabric-ops tests,CN=operator'],
      groups: { ops: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } } },
      nodes: [{ name: 'ops0', url: 'https://127.0.0.1:1', group: 'ops' }],
    },
    path.join(dir, 'fleet.yaml'),
  );
  const system = await startOperationsSystem({
    config: testConfig({ operations: { tls: serverTls(pki) } }),
    logStream: quiet(),
    httpLimits: { maxBodyBytes },
    extensions: [fleetExtension(config)],
  });
  systems.push(system);
  return system;
}

/** A body of `bytes` bytes: a request naming a node the fleet does not have (400, nothing touched), padded with blanks. */
function paddedBody(bytes: number, request: object): string {
  const text = JSON.stringify(request);
  return text + ' '.repeat(bytes - Buffer.byteLength(text));
}

function send(system: OperationsSystem, method: string, pathName: string, body: string) {
  return request(`${system.url}${pathName}`, {
    method,
    body,
    // Node sends a DELETE body unframed unless told its length (its default is chunked only for PUT and POST).
    headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
    ca: pki.serverCA.certPem,
    client: pki.client,
  });
}

beforeAll(async () => {
  pki = await createTestPki();
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-limits-'));
});

afterAll(async () => {
  await Promise.all(systems.map((system) => system.stop(0)));
  await rm(dir, { recursive: true, force: true });
  await pki?.cleanup();
});

describe("/fleet request bodies: the server's httpLimits.maxBodyBytes, as PUT /logspec", () => {
  test('a smaller limit: PUT and DELETE /fleet/logspec refuse a body past it with 413, as PUT /logspec does', async () => {
    const system = await fleetServer(1024);
    const put = paddedBody(2000, { spec: 'debug', selector: { names: ['nope'] } });
    for (const [method, pathName, body] of [
      ['PUT', '/fleet/logspec', put],
      ['DELETE', '/fleet/logspec', paddedBody(2000, { selector: { names: ['nope'] } })],
      ['PUT', '/logspec', paddedBody(2000, { spec: 'debug' })],
    ] as const) {
      const answer = await send(system, method, pathName, body);
      expect([method, pathName, answer.status, answer.json]).toEqual([method, pathName, 413, { error: 'request body is larger than 1024 bytes' }]);
    }
    // Within the limit: read and answered (the name is unknown: 400, no node touched).
    const within = await send(system, 'PUT', '/fleet/logspec', paddedBody(1000, { spec: 'debug', selector: { names: ['nope'] } }));
    expect(within.status).toBe(400);
    expect(within.json).toEqual({ error: 'selector.names: no node named "nope" in the fleet' });
  });

  test('a larger limit: a body past the default 16 KiB is read', async () => {
    const system = await fleetServer(64 * 1024);
    const answer = await send(system, 'PUT', '/fleet/logspec', paddedBody(40 * 1024, { spec: 'debug', selector: { names: ['nope'] } }));
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'selector.names: no node named "nope" in the fleet' });
    const past = await send(system, 'PUT', '/fleet/logspec', paddedBody(65 * 1024, { spec: 'debug', selector: { names: ['nope'] } }));
    expect(past.status).toBe(413);
  });
});

describe('fabric-ops fleet: the answer is read up to maxAnswerBytes', () => {
  /** An endpoint answering 200 with an endless JSON-looking body (bounded: 3x the cap), or a huge Content-Length. */
  async function endlessEndpoint(mode: 'chunked' | 'content-length'): Promise<{ url: string; sent: () => number; close(): Promise<void> }> {
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, ' ');
    const server = https.createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (_req, res) => {
      if (mode === 'content-length') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(4 * maxAnswerBytes) });
        res.write('{"nodes": [');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"nodes": [');
      const pump = (): void => {
        while (sent < 3 * maxAnswerBytes && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end(']}');
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      sent: () => sent,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  function fleetCommand(url: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return fleetCommandInProcess(['logspec', 'get'], {
      FABRIC_OPS_FLEET_URL: url,
      FABRIC_OPS_FLEET_CERT: pki.client.cert,
      FABRIC_OPS_FLEET_KEY: pki.client.key,
      FABRIC_OPS_FLEET_CACERT: pki.serverCA.cert,
    });
  }

  test('an endless answer: exit 1 naming the cap, and the command stops reading', async () => {
    const endpoint = await endlessEndpoint('chunked');
    try {
      const run = await fleetCommand(endpoint.url);
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: `fabric-ops fleet: ${endpoint.url}/fleet/logspec: the answer is larger than ${maxAnswerBytes} bytes (status 200); not read further\n`,
      });
      // What the server could write before the client went away: the cap and what the socket buffers hold, not all of it.
      expect(endpoint.sent()).toBeLessThan(maxAnswerBytes + 8 * 1024 * 1024);
    } finally {
      await endpoint.close();
    }
  });

  test('a Content-Length past the cap is refused before the body is read', async () => {
    const endpoint = await endlessEndpoint('content-length');
    try {
      const run = await fleetCommand(endpoint.url);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `fabric-ops fleet: ${endpoint.url}/fleet/logspec: the answer is larger than ${maxAnswerBytes} bytes (status 200); not read further\n`,
      );
    } finally {
      await endpoint.close();
    }
  });
});
