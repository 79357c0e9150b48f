#!/usr/bin/env node
// Measures the resident memory of the fabric-ops command (dist/cli.js, `npm run build` first)
// as the chart runs it: TLS with client certificates, provider prometheus, runtime check none,
// JSON logs. Load: `CONCURRENCY` clients looping on /healthz (no client certificate, as kubelet)
// and /metrics (client certificate, as Prometheus) for `SECONDS_OF_LOAD` seconds. Prints RSS at idle,
// during the load (sampled every 250 ms from /proc) and the peak (VmHWM): the chart's resource
// requests are based on these figures. Asserts nothing.
//
//   node scripts/chart-rss.js            (NODE=<node binary> to run the service on another node)
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');

const seconds = Number(process.env.SECONDS_OF_LOAD ?? 30);
const concurrency = Number(process.env.CONCURRENCY ?? 20);
// PAUSE_MS between one client's requests: 0 is a stress test; 1000 with 4 clients is ~ probes plus a busy scraper.
const pauseMs = Number(process.env.PAUSE_MS ?? 0);
const nodeBinary = process.env.NODE ?? process.execPath;
const root = path.join(__dirname, '..');
const cli = path.join(root, 'dist', 'cli.js');

function openssl(args, cwd) {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makePki(dir) {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-subj',
      '/CN=rss CA',
      '-days',
      '2',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  for (const [name, ext] of [
    ['server', 'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1'],
    ['client', 'extendedKeyUsage=clientAuth'],
  ]) {
    fs.writeFileSync(path.join(dir, `${name}.ext`), `basicConstraints=critical,CA:FALSE\n${ext}\n`);
    openssl(['req', '-new', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`], dir);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.crt`,
      ],
      dir,
    );
  }
}

function rssKiB(pid, field) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) : NaN;
}

function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;

async function main() {
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run npm run build`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fabric-ops-rss-'));
  makePki(dir);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(nodeBinary, [cli, '--dialect', 'peer'], {
    env: {
      PATH: process.env.PATH,
      ...(process.env.SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS } : {}),
      FABRIC_LOGGING_FORMAT: 'json',
      CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${port}`,
      CORE_OPERATIONS_TLS_ENABLED: 'true',
      CORE_OPERATIONS_TLS_CERT_FILE: path.join(dir, 'server.crt'),
      CORE_OPERATIONS_TLS_KEY_FILE: path.join(dir, 'server.key'),
      CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: path.join(dir, 'ca.crt'),
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
      CORE_METRICS_PROVIDER: 'prometheus',
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const ca = fs.readFileSync(path.join(dir, 'ca.crt'));
  const cert = fs.readFileSync(path.join(dir, 'client.crt'));
  const key = fs.readFileSync(path.join(dir, 'client.key'));
  const agent = new https.Agent({ keepAlive: false, ca });
  const get = (pathname, withCert) =>
    new Promise((resolve, reject) => {
      const request = https.get({ host: '127.0.0.1', port, path: pathname, servername: 'localhost', agent, ...(withCert ? { cert, key } : {}) }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      });
      request.on('error', reject);
    });
  for (let i = 0; ; i += 1) {
    try {
      if ((await get('/healthz', false)) === 200) break;
    } catch (error) {
      if (i > 100) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idle = rssKiB(child.pid, 'VmRSS');
  const cpuBefore = cpuSeconds(child.pid);
  const samples = [];
  const sampler = setInterval(() => samples.push(rssKiB(child.pid, 'VmRSS')), 250);
  const deadline = Date.now() + seconds * 1000;
  let requests = 0;
  let failures = 0;
  const worker = async (n) => {
    while (Date.now() < deadline) {
      const status = await get(n % 2 === 0 ? '/healthz' : '/metrics', n % 2 !== 0).catch(() => 0);
      requests += 1;
      if (status !== 200) failures += 1;
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, n) => worker(n)));
  clearInterval(sampler);
  const peak = rssKiB(child.pid, 'VmHWM');
  const cpu = (cpuSeconds(child.pid) - cpuBefore) / seconds;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.on('exit', resolve));
  fs.rmSync(dir, { recursive: true, force: true });
  samples.sort((a, b) => a - b);
  const median = samples[Math.floor(samples.length / 2)];
  console.log(`fabric-ops RSS on ${execFileSync(nodeBinary, ['--version']).toString().trim()}, TLS + client certificates, provider prometheus`);
  console.log(`  idle after start:                    ${mib(idle)}`);
  console.log(
    `  under load (${concurrency} clients, ${seconds} s, ${requests} requests, ${(requests / seconds).toFixed(0)}/s, ${failures} not 200): median ${mib(median)}, max sampled ${mib(samples[samples.length - 1])}`,
  );
  console.log(`  peak (VmHWM):                        ${mib(peak)}`);
  console.log(`  CPU under load:                      ${(cpu * 1000).toFixed(0)}m (${((cpu * 1000) / (requests / seconds)).toFixed(2)}m per request/s)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
