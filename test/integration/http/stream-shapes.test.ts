import { spawn } from 'node:child_process';
import http from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { buildSync } from 'esbuild';

/**
 * settleStreamShapes is about what V8 does with Node's own stream and HTTP code, so each case runs
 * a server in a fresh Node process with V8's test functions (--allow-natives-syntax). This process
 * is its client: keep-alive requests until Node's functions are optimized, then every connection
 * reset (ECONNRESET on the server's side, as a load tool's end gives it). The server says which of
 * the watched functions were optimized before the resets and which still are after them.
 */
const moduleCode = buildSync({
  entryPoints: [path.join(__dirname, '../../../src/http/stream-shapes.ts')],
  bundle: false,
  format: 'cjs',
  platform: 'node',
  write: false,
}).outputFiles[0]?.text;

const serverScript = `
const loaded = { exports: {} };
(function (module, exports, require) { ${moduleCode ?? ''} })(loaded, loaded.exports, require);
if (process.argv[1] === 'settled') loaded.exports.settleStreamShapes();
const http = require('node:http');
const { OutgoingMessage } = http;
const { Readable, Writable } = require('node:stream');
const watched = {
  'Writable.cork': Writable.prototype.cork,
  'Writable.uncork': Writable.prototype.uncork,
  'Writable.write': Writable.prototype.write,
  'Readable.push': Readable.prototype.push,
  'Readable.read': Readable.prototype.read,
  'Readable.resume': Readable.prototype.resume,
  'OutgoingMessage.end': OutgoingMessage.prototype.end,
  'OutgoingMessage.setHeader': OutgoingMessage.prototype.setHeader,
};
const optimized = () => Object.keys(watched).filter((name) => (%GetOptimizationStatus(watched[name]) & 16) !== 0);
const server = http.createServer((req, res) => { res.setHeader('Content-Type', 'text/plain'); res.end('ok'); });
let before = [];
process.on('message', (message) => {
  if (message === 'loaded') { before = optimized(); process.send('marked'); return; }
  const report = () => server.getConnections((error, open) => {
    if (open > 0) { setTimeout(report, 10); return; }
    process.send({ before, after: optimized() });
    server.close();
    process.disconnect();
  });
  report();
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

interface Report {
  before: string[];
  after: string[];
}

async function serveLoadAndReset(mode: 'settled' | 'as Node starts'): Promise<Report> {
  const child = spawn(process.execPath, ['--allow-natives-syntax', '-e', serverScript, mode], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages: unknown[] = [];
  const waiters: Array<{ resolve: (message: unknown) => void; reject: (error: Error) => void }> = [];
  let exited: string | null = null;
  child.on('message', (message) => {
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(message);
    else messages.push(message);
  });
  child.on('exit', (code, signal) => {
    exited = `code ${String(code)}, signal ${String(signal)}`;
    for (const waiter of waiters.splice(0)) waiter.reject(new Error(`the server process ended (${exited}) before its next message`));
  });
  const next = (): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (messages.length > 0) resolve(messages.shift());
      else if (exited !== null) reject(new Error(`the server process ended (${exited}) before its next message`));
      else waiters.push({ resolve, reject });
    });
  try {
    const { port } = (await next()) as { port: number };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const sockets = new Set<Socket>();
    const get = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
          sockets.add(res.socket);
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
      });
    for (let round = 0; round < 400; round += 1) await Promise.all(Array.from({ length: 8 }, get));
    child.send('loaded');
    expect(await next()).toBe('marked');
    for (const socket of sockets) socket.resetAndDestroy();
    child.send('report');
    agent.destroy();
    return (await next()) as Report;
  } finally {
    child.kill();
  }
}

describe('settleStreamShapes', () => {
  it('keeps Node stream and HTTP code optimized when the first connections are reset', async () => {
    const { before, after } = await serveLoadAndReset('settled');
    expect(before.length).toBeGreaterThanOrEqual(3);
    expect(after).toEqual(before);
  });

  it('is needed: without it the first resets drop optimized code (once they do not, Node makes these fields in its constructors and it can go)', async () => {
    const { before, after } = await serveLoadAndReset('as Node starts');
    expect(before.length).toBeGreaterThanOrEqual(3);
    expect(after.length).toBeLessThan(before.length);
  });
});
