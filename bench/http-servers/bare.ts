/** Reference server for bench/http.ts: node:http(s) alone, /healthz and prom-client's /metrics. */
import http from 'node:http';
import https from 'node:https';
import { healthBody, prometheusRegistry, settingsFromEnv } from './common';

const settings = settingsFromEnv(process.env);
const registry = prometheusRegistry(settings.series);

const handler: http.RequestListener = (req, res) => {
  if (req.url === '/healthz' && req.method === 'GET') {
    const body = healthBody();
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  if (req.url === '/metrics' && req.method === 'GET') {
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      },
      () => {
        res.writeHead(500).end();
      },
    );
    return;
  }
  res.writeHead(404).end();
};

const server = settings.tls ? https.createServer(settings.tls, handler) : http.createServer(handler);
server.listen(settings.port, '127.0.0.1');
