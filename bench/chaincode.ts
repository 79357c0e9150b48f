/**
 * Benchmark (not a test): what embedding fabric-ops costs a Node.js chaincode served with
 * fabric-shim's server mode (examples/chaincode-as-a-service).
 *
 * 1. Start time (spawn to the chaincode port accepting connections; with fabric-ops the
 *    operations port too) and resident memory after start, with and without fabric-ops,
 *    the median of --starts runs each.
 * 2. On a real Fabric 2.5 network on loopback, the same contract deployed twice as `ccaas`
 *    chaincode (`kvplain` without fabric-ops, `kvops` with it, Prometheus metrics on): --evaluates
 *    evaluates of each through the Fabric Gateway, interleaved one by one in the same run so both
 *    see the same machine load; median and p90 latency, and each chaincode's RSS after.
 *
 * Run (needs openssl and the Fabric binaries, see test/support/fabric-network.ts):
 *
 *   cd /work/main && node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build \
 *     && $(scripts/node24.sh) .tmp/bench-build/bench/chaincode.js [--starts 5] [--evaluates 1000]
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  buildChaincodeProject,
  channelName,
  startChaincodeServer,
  startFabricNetwork,
  loggedOperationsUrl,
  waitForPort,
  type ChaincodeProject,
  type Daemon,
} from '../test/support/fabric-network';
import { freeTcpPort } from '../test/support/ports';

const plainMain = `// The example's contract served without fabric-ops.
const { KvContract } = require('./kv-contract');
exports.contracts = [KvContract];
`;

function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
  return kib / 1024;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

const median = (values: number[]): number => quantile(values, 0.5);
const fmt = (value: number, digits = 1): string => value.toFixed(digits);

interface Variant {
  label: string;
  moduleDir: string;
  ops: boolean;
}

async function measureStart(project: ChaincodeProject, variant: Variant, dir: string, run: number): Promise<{ ms: number; rss: number }> {
  // The chaincode port is probed: the chaincode server logs the address it was given, not the
  // one bound, and a peer must be told it. The operations server binds port 0 and logs where.
  const port = await freeTcpPort();
  const started = performance.now();
  const daemon = startChaincodeServer({
    project,
    moduleDir: variant.moduleDir,
    name: `${variant.label}-start-${run}`,
    port,
    packageId: 'kv_1.0:0000',
    logFile: path.join(dir, `${variant.label}-start-${run}.log`),
    env: { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' },
  });
  try {
    await waitForPort(port, daemon, 60_000);
    if (variant.ops) await waitForPort(Number(new URL(await loggedOperationsUrl(daemon, 60_000)).port), daemon, 60_000);
    const ms = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return { ms, rss: rssMiB(daemon.child.pid) };
  } finally {
    await daemon.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { starts: { type: 'string', default: '5' }, evaluates: { type: 'string', default: '1000' } } });
  const starts = Number(values.starts);
  const evaluates = Number(values.evaluates);
  console.log(`node ${process.version}; ${starts} starts per variant, ${evaluates} evaluates per chaincode`);

  const project = await buildChaincodeProject();
  const variants: Variant[] = [
    { label: 'without fabric-ops', moduleDir: await project.variant('plain', plainMain), ops: false },
    { label: 'with fabric-ops', moduleDir: project.projectDir, ops: true },
  ];

  console.log('\nStart (spawn to listening) and RSS after start, median of runs:');
  for (const variant of variants) {
    const runs: Array<{ ms: number; rss: number }> = [];
    for (let run = 0; run < starts; run++) runs.push(await measureStart(project, variant, project.dir, run));
    console.log(
      `  ${variant.label.padEnd(20)} start ${fmt(median(runs.map((r) => r.ms)), 0)} ms (min ${fmt(Math.min(...runs.map((r) => r.ms)), 0)})   RSS ${fmt(median(runs.map((r) => r.rss)))} MiB`,
    );
  }

  const network = await startFabricNetwork();
  const daemons: Daemon[] = [];
  try {
    const deployed: Array<{ variant: Variant; name: string; daemon: Daemon }> = [];
    for (const [variant, name] of [
      [variants[0], 'kvplain'],
      [variants[1], 'kvops'],
    ] as const) {
      if (variant === undefined) continue;
      // Probed: the peer dials this address (see measureStart). The operations port is not read.
      const port = await freeTcpPort();
      await network.deployCcaas({
        name,
        port,
        tls: false,
        start: async (packageId) => {
          const daemon = startChaincodeServer({
            project,
            moduleDir: variant.moduleDir,
            name,
            port,
            packageId,
            logFile: path.join(network.dir, `${name}.log`),
            env: { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' },
          });
          daemons.push(daemon);
          deployed.push({ variant, name, daemon });
          await waitForPort(port, daemon);
        },
      });
    }
    const gateway = await network.gateway();
    const contracts = deployed.map(({ name }) => gateway.getNetwork(channelName).getContract(name));
    for (const contract of contracts) await contract.submitTransaction('put', 'bench', 'value');
    // Warm-up: connections, JIT, the peer's chaincode handles.
    for (let i = 0; i < 50; i++) for (const contract of contracts) await contract.evaluateTransaction('get', 'bench');

    const latencies: number[][] = contracts.map(() => []);
    for (let i = 0; i < evaluates; i++) {
      for (let c = 0; c < contracts.length; c++) {
        const order = i % 2 === 0 ? c : contracts.length - 1 - c;
        const contract = contracts[order];
        if (contract === undefined) continue;
        const t0 = performance.now();
        await contract.evaluateTransaction('get', 'bench');
        latencies[order]?.push(performance.now() - t0);
      }
    }
    console.log(`\n${evaluates} evaluates each through the Gateway, interleaved (client-side latency):`);
    const medians: number[] = [];
    deployed.forEach(({ variant, daemon }, index) => {
      const values = latencies[index] ?? [];
      medians.push(median(values));
      console.log(
        `  ${variant.label.padEnd(20)} median ${fmt(median(values), 3)} ms   p90 ${fmt(quantile(values, 0.9), 3)} ms   RSS after ${fmt(rssMiB(daemon.child.pid))} MiB`,
      );
    });
    console.log(`  overhead per evaluate (median difference): ${fmt(((medians[1] ?? NaN) - (medians[0] ?? NaN)) * 1000, 0)} µs`);
  } finally {
    for (const daemon of daemons) await daemon.stop();
    await network.stop();
    await rm(network.dir, { recursive: true, force: true });
    await project.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
