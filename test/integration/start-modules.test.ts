/**
 * A feature's heavy packages load only when it is configured (issue 10: start time and idle
 * memory). The built command is the esbuild bundle (issue 20, scripts/bundle.js): what it needs at
 * every start is inside it, and the packages a feature needs stay outside, loaded from node_modules
 * only when configured. It runs with a preload that writes, on exit, every package whose files were
 * loaded; the service answers as usual meanwhile.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from '../support/http';
import { cliPath, requireBuiltCli, runCli } from '../support/cli';

let tmp: string;
let preload: string;
beforeAll(async () => {
  requireBuiltCli();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-modules-'));
  preload = path.join(tmp, 'record-modules.js');
  await writeFile(
    preload,
    `process.on('exit', () => {
  const packages = new Set();
  for (const file of Object.keys(require.cache)) {
    const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file);
    if (match) packages.add(match[1]);
    // The command's own chunks (scripts/bundle.js), recorded as dist/<file>.
    const chunk = /\\/dist\\/([^/]+\\.js)$/.exec(file);
    if (chunk && !file.includes('node_modules')) packages.add('dist/' + chunk[1]);
  }
  // Node's own modules that the start should not load, recorded as node:<name>.
  for (const entry of process.moduleLoadList) if (entry === 'NativeModule inspector') packages.add('node:inspector');
  require('node:fs').writeFileSync(process.env.RECORD_MODULES_TO, JSON.stringify([...packages].sort()));
});
`,
  );
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Starts the command with these CORE_* variables, checks /healthz answers, stops it; the packages it loaded. */
async function packagesLoaded(name: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const out = path.join(tmp, `${name}.json`);
  const run = runCli([], {
    NODE_OPTIONS: `--require ${preload}`,
    RECORD_MODULES_TO: out,
    CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
    CORE_OPERATIONS_HEALTHCHECK_TIMEOUT: '200ms',
    ...env,
  });
  try {
    const url = await run.listening();
    const health = await request(`${url}/healthz`);
    expect([200, 503]).toContain(health.status);
    expect(JSON.parse(health.body)).toHaveProperty('status');
  } finally {
    run.child.kill('SIGTERM');
  }
  expect((await run.exited).code).toBe(0);
  return JSON.parse(await readFile(out, 'utf8')) as string[];
}

interface Metafile {
  outputs: Record<string, { inputs: Record<string, unknown>; imports: { path: string; external?: boolean }[] }>;
}

describe('the bundle', () => {
  it('dist/cli.js (the version check) requires one esbuild bundle holding the command and express, with the feature packages outside it', () => {
    const meta = JSON.parse(readFileSync(path.join(path.dirname(cliPath), 'cli.meta.json'), 'utf8')) as Metafile;
    // The entry is src/cli.ts alone; it runs the command's bundle (with its code cache, or required).
    expect(Object.keys(meta.outputs['dist/cli.js']?.inputs ?? {})).toEqual(expect.arrayContaining(['src/cli.ts', 'src/node-version.ts']));
    expect(Object.keys(meta.outputs['dist/cli.js']?.inputs ?? {})).not.toContain('src/command.ts');
    expect(
      new Set(meta.outputs['dist/cli.js']?.imports.filter((entry) => entry.external === true && !entry.path.startsWith('node:')).map((entry) => entry.path)),
    ).toEqual(new Set(['./cli-command.js']));
    const output = meta.outputs['dist/cli-command.js'];
    expect(output).toBeDefined();
    const inputs = Object.keys(output?.inputs ?? {});
    expect(inputs).toEqual(expect.arrayContaining(['src/command.ts', 'src/system.ts']));
    for (const bundled of ['express', 'bunyan', 'convict']) expect(inputs.some((input) => input.startsWith(`node_modules/${bundled}/`))).toBe(true);
    const external = (output?.imports ?? []).filter((entry) => entry.external === true && !entry.path.startsWith('node:')).map((entry) => entry.path);
    expect(external).toEqual(
      expect.arrayContaining(['@grpc/grpc-js', '@grpc/proto-loader', './kubernetes-client.mjs', './prom-client.js', 'hot-shots', 'yaml', 'zod']),
    );
    // What express loads for features the command does not use: stand-ins that load them on first call.
    expect(external).toEqual(expect.arrayContaining(['body-parser', 'qs', 'yargs-parser']));
    expect(inputs.filter((input) => /^node_modules\/(body-parser|qs|iconv-lite|raw-body|yargs-parser)\//.test(input))).toEqual([]);
    expect(inputs.filter((input) => /^node_modules\/(zod|yaml|prom-client|hot-shots|@grpc|@kubernetes)\//.test(input))).toEqual([]);
    // The Kubernetes client is a bundle of its own, imported only when the integration is on.
    expect(Object.keys(meta.outputs['dist/kubernetes-client.mjs']?.inputs ?? {})).toContain('node_modules/@kubernetes/client-node/dist/index.js');
    // So is prom-client (with @opentelemetry/api), required only with provider prometheus.
    expect(Object.keys(meta.outputs['dist/prom-client.js']?.inputs ?? {})).toEqual(
      expect.arrayContaining(['node_modules/prom-client/index.js', 'node_modules/@opentelemetry/api/dist/index.cjs']),
    );
    // ASCII only: V8 keeps a source with any other character as a two-byte string.
    for (const file of [cliPath, path.join(path.dirname(cliPath), 'cli-command.js'), path.join(path.dirname(cliPath), 'prom-client.js')])
      expect(/[^\t\n\r\x20-\x7e]/.test(readFileSync(file, 'utf8'))).toBe(false);
    for (const bundled of ['express', 'bunyan', 'convict']) expect(external).not.toContain(bundled);
    expect(readFileSync(cliPath, 'utf8').split('\n', 1)[0]).toBe('#!/usr/bin/env -S node --disable-sigusr1');
  });
});

describe('packages loaded at start', () => {
  it('prometheus without a runtime checker or a config file: prom-client only, from its chunk (express is in the bundle), no gRPC, hot-shots, Kubernetes client, zod or YAML parser', async () => {
    const loaded = await packagesLoaded('prometheus', { CORE_METRICS_PROVIDER: 'prometheus', CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none' });
    expect(loaded).toContain('dist/prom-client.js');
    expect(loaded).not.toContain('prom-client');
    // Nothing the bundle holds is loaded a second time from node_modules.
    const meta = JSON.parse(readFileSync(path.join(path.dirname(cliPath), 'cli.meta.json'), 'utf8')) as Metafile;
    const bundled = new Set(
      Object.keys(meta.outputs['dist/cli-command.js']?.inputs ?? {}).map((input) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1]),
    );
    expect(loaded.filter((name) => bundled.has(name))).toEqual([]);
    expect(loaded).not.toContain('express');
    // Loaded only when an --inspect option may have opened an inspector (src/inspector-guard.ts).
    expect(loaded).not.toContain('node:inspector');
    for (const unused of [
      '@grpc/grpc-js',
      '@grpc/proto-loader',
      'protobufjs',
      'hot-shots',
      '@kubernetes/client-node',
      'zod',
      'yaml',
      'body-parser',
      'qs',
      'iconv-lite',
      'yargs-parser',
    ])
      expect(loaded).not.toContain(unused);
  });

  it('statsd: hot-shots, and no prom-client', async () => {
    const loaded = await packagesLoaded('statsd', {
      CORE_METRICS_PROVIDER: 'statsd',
      CORE_METRICS_STATSD_ADDRESS: '127.0.0.1:9',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    });
    expect(loaded).toContain('hot-shots');
    expect(loaded).not.toContain('prom-client');
    expect(loaded).not.toContain('dist/prom-client.js');
  });

  it('metrics disabled: neither metrics package', async () => {
    const loaded = await packagesLoaded('disabled', { CORE_METRICS_PROVIDER: 'disabled', CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none' });
    for (const unused of ['prom-client', 'dist/prom-client.js', 'hot-shots', '@grpc/grpc-js']) expect(loaded).not.toContain(unused);
  });

  it('the cri runtime checker loads gRPC', async () => {
    const loaded = await packagesLoaded('cri', {
      CORE_METRICS_PROVIDER: 'disabled',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'cri',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_ENDPOINT: `unix://${path.join(os.tmpdir(), 'fabric-ops-no-such-cri.sock')}`,
    });
    expect(loaded).toEqual(expect.arrayContaining(['@grpc/grpc-js', '@grpc/proto-loader']));
  });
});
