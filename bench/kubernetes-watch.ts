/**
 * Benchmark (not a test): how long a ConfigMap change takes to become the active logging spec,
 * for the command (dist/cli.js) against the fake API server (test/support/fake-apiserver.ts,
 * which sends nothing on an idle watch, as kube-apiserver does), with the real timeouts (the
 * watch's 30 s inactivity cut included):
 *  1. after the service has been idle for --idle-seconds (default 330), --changes changes
 *     (default 30) spaced 2.1 s apart, so they land all over the 30 s watch cycle;
 *  2. --restarts times (default 8): the API server is stopped for 5 s, started again on the same
 *     port (every watch dropped, every resourceVersion expired), and a change is made as soon
 *     as it listens.
 * Latency is from the write in the fake to the first GET /logspec (polled every 5 ms) that
 * answers the new value. Warning lines of the command are counted.
 *
 *   make build && node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build \
 *     && $(scripts/node24.sh) .tmp/bench-build/bench/kubernetes-watch.js [--idle-seconds 330] [--changes 30] [--restarts 8]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FakeApiServer, kubeconfigFor } from '../test/support/fake-apiserver';
import { request } from '../test/support/http';
import { createTestPki } from '../test/support/pki';
import { terminate } from '../test/support/processes';

/** The command under measure: FABRIC_OPS_DIST (default ./dist)/cli.js, started as test/support/cli.ts starts it. */
function runCommand(env: NodeJS.ProcessEnv): { child: ChildProcess; exited: Promise<unknown>; output: () => string; listening: () => Promise<string> } {
  const cli = path.resolve(process.env.FABRIC_OPS_DIST ?? 'dist', 'cli.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  const child = spawn(process.execPath, [cli], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const listening = async (): Promise<string> => {
    for (let i = 0; i < 600; i += 1) {
      const match = /listening on (https?:\/\/[0-9.:]+)/.exec(text);
      if (match?.[1]) return match[1];
      await sleep(50);
    }
    throw new Error(`no listening line: ${text}`);
  };
  return { child, exited, output: () => text, listening };
}

const namespace = 'fabric';
const configMapName = 'peer0-logspec';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function summary(name: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (value: number): string => `${value.toFixed(0)} ms`;
  return `${name}: n=${sorted.length} p50 ${f(percentile(sorted, 50))}, p90 ${f(percentile(sorted, 90))}, p99 ${f(percentile(sorted, 99))}, max ${f(sorted.at(-1) ?? NaN)}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'idle-seconds': { type: 'string' }, changes: { type: 'string' }, restarts: { type: 'string' } } });
  const idleSeconds = Number(values['idle-seconds'] ?? '330');
  const changes = Number(values.changes ?? '30');
  const restarts = Number(values.restarts ?? '8');
  const pki = await createTestPki();
  const dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-bench-k8s-'));
  const api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-bench');
  await api.start();
  api.setConfigMap(namespace, configMapName, { logspec: 'info' });
  await writeFile(path.join(dir, 'kubeconfig'), kubeconfigFor(api, pki.serverCA.certPem));
  const cli = runCommand({
    KUBECONFIG: path.join(dir, 'kubeconfig'),
    POD_NAME: 'peer0-ops',
    POD_NAMESPACE: namespace,
    CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
    CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'true',
    CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME: configMapName,
  });
  let sequence = 0;
  try {
    const url = await cli.listening();
    const logspec = async (): Promise<string> => ((await request(`${url}/logspec`, { timeoutMs: 2000 })).json as { spec: string }).spec;
    /** Writes a new value and answers the ms until GET /logspec shows it. */
    const change = async (): Promise<number> => {
      sequence += 1;
      const value = `gossip=${sequence % 2 === 0 ? 'debug' : 'warn'}:peer${sequence}=debug:info`;
      const started = performance.now();
      api.setConfigMap(namespace, configMapName, { logspec: value });
      const expected = value.split(':').slice(0, 2).sort().concat('info').join(':');
      for (;;) {
        if ((await logspec()) === expected) return performance.now() - started;
        if (performance.now() - started > 120_000) throw new Error(`${value} not active after 120 s`);
        await sleep(5);
      }
    };
    const warnings = (): number =>
      cli
        .output()
        .split('\n')
        .filter((line) => / WARN /.test(line)).length;

    process.stdout.write(`idle for ${idleSeconds} s...\n`);
    await sleep(idleSeconds * 1000);
    const watchesWhileIdle = api.watchRequests().length;
    const idle: number[] = [];
    for (let i = 0; i < changes; i += 1) {
      idle.push(await change());
      await sleep(2100);
    }
    const idleWarnings = warnings();
    process.stdout.write(`${summary(`change after ${idleSeconds} s idle`, idle)}\n`);
    process.stdout.write(`watch requests while idle: ${watchesWhileIdle}; warning lines so far: ${idleWarnings}\n`);

    const afterRestart: number[] = [];
    for (let i = 0; i < restarts; i += 1) {
      const apiPort = api.port;
      await api.stop();
      await sleep(5000);
      await api.start(apiPort);
      afterRestart.push(await change());
      await sleep(3000);
    }
    process.stdout.write(`${summary('change made as soon as a restarted API server (down 5 s) listens', afterRestart)}\n`);
    process.stdout.write(`warning lines: ${warnings() - idleWarnings} during ${restarts} restarts (one per outage expected)\n`);
  } finally {
    await terminate(cli.child, cli.exited, 5000);
    await api.close();
    await pki.cleanup();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
