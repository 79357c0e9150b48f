/**
 * The floor for bench/companion.ts: node:https (or node:http) alone answering /healthz, no other
 * module loaded. What any Node.js process that serves HTTPS weighs on this machine before a line of
 * fabric-ops runs. Takes BENCH_PORT and the BENCH_TLS_* files, as the other reference servers.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const port = Number(process.env.BENCH_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error(`BENCH_PORT: not a port: ${String(process.env.BENCH_PORT)}`);

const handler: http.RequestListener = (req, res) => {
  if (req.url === '/healthz' && req.method === 'GET') {
    const body = JSON.stringify({ status: 'OK', time: new Date().toISOString() });
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  res.writeHead(404).end();
};

const cert = process.env.BENCH_TLS_CERT;
const server =
  cert === undefined || cert === ''
    ? http.createServer(handler)
    : https.createServer(
        {
          cert: readFileSync(cert),
          key: readFileSync(String(process.env.BENCH_TLS_KEY)),
          ca: readFileSync(String(process.env.BENCH_TLS_CA)),
          requestCert: true,
          rejectUnauthorized: false,
        },
        handler,
      );
server.listen(port, '127.0.0.1');
