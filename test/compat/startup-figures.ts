/**
 * Prints start-to-first-200 (GET /healthz) and idle RSS of the real Fabric peer, the real
 * orderer and fabric-ops (the compiled command, peer and orderer dialect), started side by side
 * on the same configuration files. A figure, not a test: it asserts nothing.
 *
 *   npm run build && node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/compat-build \
 *     && $(scripts/node24.sh) .tmp/compat-build/test/compat/startup-figures.js
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import {
  fabricHome,
  listenAddressVariable,
  makeFabricWorkDir,
  repositoryRoot,
  residentKiB,
  uniquePort,
  writeNodeConfig,
  type NodeConfig,
} from '../support/fabric-reference';
import { createTestPki } from '../support/pki';
import { delay, waitFor } from '../support/wait';

/** A GET /healthz on `port` answered 200 (false for any other answer, or none). */
function healthzOk(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
  });
}

async function measure(label: string, config: NodeConfig, command: string, args: string[]): Promise<{ label: string; ms: number; child: ChildProcess }> {
  // Probed, not port 0: the Fabric nodes never report their bound port, and every process is
  // timed the same way, to its first 200 on this port.
  const port = await uniquePort();
  const started = process.hrtime.bigint();
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH, ...config.env, [listenAddressVariable(config.kind)]: `127.0.0.1:${port}`, FABRIC_LOGGING_SPEC: 'info' },
    stdio: 'ignore',
  });
  // Tried every 5 ms: the figure is start to first 200.
  await waitFor(`a 200 from port ${port}`, () => healthzOk(port), { timeoutMs: 30_000, everyMs: 5 });
  return { label, ms: Number(process.hrtime.bigint() - started) / 1e6, child };
}

async function main(): Promise<void> {
  const pki = await createTestPki();
  const work = await makeFabricWorkDir();
  const children: ChildProcess[] = [];
  try {
    const common = { generalTls: { cert: pki.serverByOrgCA.cert, key: pki.serverByOrgCA.key, rootCA: pki.orgCA.cert } };
    const peer = await writeNodeConfig(work.dir, { kind: 'peer', ...common });
    const orderer = await writeNodeConfig(work.dir, { kind: 'orderer', ...common });
    const cli = path.join(repositoryRoot(), 'dist/cli.js');
    const bin = (name: string): string => path.join(fabricHome(), 'bin', name);
    // One after another for the start times (2 shared cores), all running together for RSS.
    const runs = [];
    for (const [label, config, command, args] of [
      ['Fabric peer', peer, bin('peer'), ['node', 'start']],
      ['Fabric orderer', orderer, bin('orderer'), []],
      ['fabric-ops (peer core.yaml)', peer, process.execPath, [cli, '--config', peer.file]],
      ['fabric-ops (orderer orderer.yaml)', orderer, process.execPath, [cli, '--config', orderer.file]],
    ] as const) {
      const run = await measure(label, config, command, [...args]);
      children.push(run.child);
      runs.push(run);
    }
    // Idle for 5 s before the RSS is read: a figure at a set time, not a condition.
    await delay(5000);
    console.log('| process | start to first 200 on /healthz | idle RSS (5 s after start) |');
    console.log('|---|---|---|');
    for (const run of runs) console.log(`| ${run.label} | ${run.ms.toFixed(0)} ms | ${(residentKiB(run.child.pid ?? 0) / 1024).toFixed(1)} MiB |`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await work.cleanup();
    await pki.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
