/**
 * A feature's heavy packages load only when it is configured (issue 10: start time and idle
 * memory). The built command is the esbuild bundle (issue 20, scripts/bundle.js): what it needs at
 * every start is inside it, and the packages a feature needs stay outside, loaded from node_modules
 * only when configured. It runs with a preload that writes, on exit, every package whose files were
 * loaded, and with V8's coverage (NODE_V8_COVERAGE), which tells which bundled packages' code ran:
 * esbuild keeps each bundled CommonJS file in a function named by its path, which runs on the
 * file's first require(). The service answers as usual meanwhile.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from '../../support/http';
import { cliPath, requireBuiltCli, runCli } from '../../support/cli';

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

interface StartRecord {
  /** Packages read from node_modules, the command's chunks as dist/<file>, and node:inspector when loaded. */
  loaded: string[];
  /** Packages inside the command's bundle whose code ran. */
  evaluated: string[];
}

/**
 * Starts the command with these CORE_* variables, checks /healthz answers, stops it; what it loaded
 * and ran. Under coverage src/cli.ts requires the bundle instead of running it from its code cache
 * (a cache of covered code would slow later starts): the same code, through Node's loader.
 */
async function startRecord(name: string, env: NodeJS.ProcessEnv): Promise<StartRecord> {
  const out = path.join(tmp, `${name}.json`);
  const coverage = path.join(tmp, `${name}-coverage`);
  const run = runCli([], {
    NODE_OPTIONS: `--require ${preload}`,
    NODE_V8_COVERAGE: coverage,
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
  return { loaded: JSON.parse(await readFile(out, 'utf8')) as string[], evaluated: await bundledPackagesRun(coverage) };
}

interface Coverage {
  result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
}

/** The bundled packages with a file whose module function ran (count > 0) in dist/cli-command.js, from V8's coverage files. */
async function bundledPackagesRun(directory: string): Promise<string[]> {
  const ran = new Set<string>();
  let scripts = 0;
  for (const file of await readdir(directory)) {
    const coverage = JSON.parse(await readFile(path.join(directory, file), 'utf8')) as Coverage;
    for (const script of coverage.result) {
      if (!script.url.endsWith('/dist/cli-command.js')) continue;
      scripts += 1;
      for (const fn of script.functions) {
        const match = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(fn.functionName);
        if (match?.[1] !== undefined && (fn.ranges[0]?.count ?? 0) > 0) ran.add(match[1]);
      }
    }
  }
  expect(scripts).toBe(1);
  return [...ran].sort();
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
    expect(external).toEqual(expect.arrayContaining(['@grpc/grpc-js', '@grpc/proto-loader', './kubernetes-client.mjs', 'hot-shots', 'zod']));
    expect(external).not.toContain('yaml');
    // What express loads for features the command does not use: stand-ins that load them on first call.
    expect(external).toEqual(expect.arrayContaining(['body-parser', 'qs', 'yargs-parser']));
    expect(inputs.filter((input) => /^node_modules\/(body-parser|qs|iconv-lite|raw-body|yargs-parser)\//.test(input))).toEqual([]);
    expect(inputs.filter((input) => /^node_modules\/(zod|hot-shots|@grpc|@kubernetes)\//.test(input))).toEqual([]);
    // The YAML parser is inside (a start with a file, the usual one, takes it from the code cache), evaluated only with a file (below).
    expect(inputs.some((input) => input.startsWith('node_modules/yaml/'))).toBe(true);
    // prom-client (with @opentelemetry/api) is inside, evaluated only with provider prometheus (below).
    expect(inputs).toEqual(expect.arrayContaining(['node_modules/prom-client/index.js', 'node_modules/@opentelemetry/api/dist/index.cjs']));
    // The Kubernetes client is a bundle of its own, imported only when the integration is on.
    expect(Object.keys(meta.outputs['dist/kubernetes-client.mjs']?.inputs ?? {})).toContain('node_modules/@kubernetes/client-node/dist/index.js');
    // ASCII only: V8 keeps a source with any other character as a two-byte string. (Control
    // characters are ASCII: the YAML parser's token markers are such characters in string literals.)
    // eslint-disable-next-line no-control-regex -- the whole ASCII range, control characters included
    for (const file of [cliPath, path.join(path.dirname(cliPath), 'cli-command.js')]) expect(/[^\x00-\x7f]/.test(readFileSync(file, 'utf8'))).toBe(false);
    for (const bundled of ['express', 'bunyan', 'convict']) expect(external).not.toContain(bundled);
    // The bin's shell lines (scripts/bundle.js, issue 30 item 14): node with --disable-sigusr1 where it has the flag.
    expect(readFileSync(cliPath, 'utf8').split('\n', 2)).toEqual([
      '#!/bin/sh',
      `':' //; node --disable-sigusr1 --version >/dev/null 2>&1 && exec node --disable-sigusr1 "$0" "$@"; exec node "$0" "$@"`,
    ]);
  });

  it("dist/cli.js installs its SIGUSR1 listener before anything else it runs: before its first require() (issue 28: Node's own handler opens the inspector until then)", () => {
    const entry = readFileSync(cliPath, 'utf8');
    const listener = entry.indexOf('process.on("SIGUSR1"');
    expect(listener).toBeGreaterThan(0);
    // Before it only esbuild's helpers (definitions) and the listener's flag.
    expect(entry.indexOf('require(')).toBeGreaterThan(listener);
  });
});

describe('packages loaded at start', () => {
  it('prometheus without a runtime checker or a config file: all from the bundle (prom-client and express run there), no gRPC, hot-shots, Kubernetes client, zod or YAML parser', async () => {
    const { loaded, evaluated } = await startRecord('prometheus', {
      CORE_METRICS_PROVIDER: 'prometheus',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    });
    expect(evaluated).toEqual(expect.arrayContaining(['prom-client', '@opentelemetry/api', 'express', 'bunyan', 'convict']));
    expect(loaded).not.toContain('prom-client');
    // Bundled, but evaluated only on first use: mime-db (the JSON answers name their charset) and debug (DEBUG unset).
    expect(evaluated).not.toContain('mime-db');
    expect(evaluated).not.toContain('debug');
    // No file: the YAML parser in the bundle is not evaluated.
    expect(evaluated).not.toContain('yaml');
    // Nothing the bundle holds is loaded a second time from node_modules.
    const meta = JSON.parse(readFileSync(path.join(path.dirname(cliPath), 'cli.meta.json'), 'utf8')) as Metafile;
    const bundled = new Set(
      Object.keys(meta.outputs['dist/cli-command.js']?.inputs ?? {}).map((input) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1]),
    );
    expect(loaded.filter((name) => bundled.has(name))).toEqual([]);
    expect(loaded).not.toContain('express');
    // Asked at every start whether an inspector is open, however it was opened (src/inspector-guard.ts, issue 28).
    expect(loaded).toContain('node:inspector');
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
    const { loaded, evaluated } = await startRecord('statsd', {
      CORE_METRICS_PROVIDER: 'statsd',
      CORE_METRICS_STATSD_ADDRESS: '127.0.0.1:9',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    });
    expect(loaded).toContain('hot-shots');
    expect(loaded).not.toContain('prom-client');
    expect(evaluated).toContain('express');
    expect(evaluated).not.toContain('prom-client');
    expect(evaluated).not.toContain('@opentelemetry/api');
  });

  it('metrics disabled: neither metrics package', async () => {
    const { loaded, evaluated } = await startRecord('disabled', {
      CORE_METRICS_PROVIDER: 'disabled',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    });
    for (const unused of ['prom-client', 'hot-shots', '@grpc/grpc-js']) expect(loaded).not.toContain(unused);
    expect(evaluated).toContain('express');
    expect(evaluated).not.toContain('prom-client');
  });

  it('a core.yaml: the YAML parser runs from the bundle, nothing of it from node_modules', async () => {
    const configDir = await mkdtemp(path.join(tmp, 'cfg-'));
    await writeFile(path.join(configDir, 'core.yaml'), 'operations:\n  listenAddress: 127.0.0.1:0\nmetrics:\n  provider: disabled\n');
    const { loaded, evaluated } = await startRecord('yaml-file', {
      FABRIC_CFG_PATH: configDir,
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    });
    expect(evaluated).toContain('yaml');
    expect(loaded).not.toContain('yaml');
  });

  it('the cri runtime checker loads gRPC', async () => {
    const { loaded } = await startRecord('cri', {
      CORE_METRICS_PROVIDER: 'disabled',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'cri',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_ENDPOINT: `unix://${path.join(os.tmpdir(), 'fabric-ops-no-such-cri.sock')}`,
    });
    expect(loaded).toEqual(expect.arrayContaining(['@grpc/grpc-js', '@grpc/proto-loader']));
  });
});
