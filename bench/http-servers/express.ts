/** Reference server for bench/http.ts: a minimal express 5 app, /healthz and prom-client's /metrics. */
import http from 'node:http';
import https from 'node:https';
import express from 'express';
import { prometheusRegistry, settingsFromEnv } from './common';

const settings = settingsFromEnv(process.env);
const registry = prometheusRegistry(settings.series);

const app = express();
app.get('/healthz', (_req, res) => {
  res.json({ status: 'OK', time: new Date().toISOString() });
});
app.get('/metrics', async (_req, res) => {
  res.type(registry.contentType).send(await registry.metrics());
});

const server = settings.tls ? https.createServer(settings.tls, app) : http.createServer(app);
server.listen(settings.port, '127.0.0.1');
