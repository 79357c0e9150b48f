/**
 * Issue 18, item 2: SIGUSR1 opened an unauthenticated V8 inspector (127.0.0.1:9229) in the
 * command's process. Through the real command, started both ways it is started (the bin, whose
 * shebang passes --disable-sigusr1, and `node dist/cli.js`): after SIGUSR1 the process listens on
 * its service port only, says nothing of a debugger, and keeps serving; an inspector opened by
 * NODE_OPTIONS is refused unless allowed on purpose. Issue 28, item 3: a SIGUSR1 that comes while
 * Node.js itself starts, before the command's listener is in place, opens an inspector all the
 * same; the command looks for one after its listener and once started, and refuses to go on.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from '../../support/http';
import { listeningPorts } from '../../support/listening-ports';
import { cliPath, cliRunOf, requireBuiltCli, runCli, type CliRun } from '../../support/cli';
import { delay, waitFor } from '../../support/wait';

let tmp: string;
beforeAll(async () => {
  requireBuiltCli();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-sigusr1-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});
// Every process a test starts is gone after it, whatever failed.
const started: CliRun[] = [];
afterEach(() => {
  for (const run of started.splice(0)) run.child.kill('SIGKILL');
});
function track(run: CliRun): CliRun {
  started.push(run);
  return run;
}

const env = {
  CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
  CORE_METRICS_PROVIDER: 'prometheus',
  CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
};

/** Starts the bin itself (the kernel reads its shebang), with this Node first on the PATH. */
function runBin(): CliRun {
  const child = spawn(cliPath, [], {
    env: { PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return track(cliRunOf(child));
}

/** The run's exit code, or a sentence saying it is still running after `ms` (it is killed after the test). */
async function exitCodeWithin(run: CliRun, ms: number): Promise<number | null | string> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    run.exited,
    new Promise<{ code: string }>((done) => (timer = setTimeout(done, ms, { code: `still running after ${ms} ms` }))),
  ]);
  clearTimeout(timer);
  return outcome.code;
}

async function signalAndCheck(run: CliRun): Promise<string> {
  const url = await run.listening();
  const port = Number(new URL(url).port);
  const pid = run.child.pid ?? 0;
  expect(await listeningPorts(pid)).toEqual([port]);
  for (let i = 0; i < 3; i++) {
    run.child.kill('SIGUSR1');
    await delay(300);
  }
  // An inspector would be listening by now (it binds within a few ms of the signal).
  expect(await listeningPorts(pid)).toEqual([port]);
  expect(run.stderr() + run.stdout()).not.toMatch(/Debugger listening|Starting inspector/);
  const health = await request(`${url}/healthz`);
  expect(health.status).toBe(200);
  run.child.kill('SIGTERM');
  expect(await run.exited).toEqual({ code: 0, signal: null });
  return run.stderr();
}

describe('SIGUSR1 does not open the V8 inspector', () => {
  it('the bin: its shebang passes --disable-sigusr1', async () => {
    const run = runBin();
    await run.listening();
    const cmdline = (await readFile(`/proc/${run.child.pid}/cmdline`, 'utf8')).split('\0');
    expect(cmdline).toContain('--disable-sigusr1');
    await signalAndCheck(run);
  });

  it('`node dist/cli.js` without the flag: the command ignores the signal itself and says so once', async () => {
    const stderr = await signalAndCheck(track(runCli([], env)));
    expect(stderr.match(/SIGUSR1 ignored/g)).toHaveLength(1);
  });
});

describe('an inspector opened at start, by NODE_OPTIONS or on the command line', () => {
  it('is refused with exit status 2, naming NODE_OPTIONS and the way to allow it', async () => {
    const run = track(runCli([], { ...env, NODE_OPTIONS: '--inspect=127.0.0.1:0' }));
    expect(await exitCodeWithin(run, 10_000)).toBe(2);
    expect(run.stderr()).toMatch(
      /fabric-ops: a V8 inspector is listening at ws:\/\/127\.0\.0\.1:\d+\/\S+ \(NODE_OPTIONS contains --inspect\).*FABRIC_OPS_ALLOW_INSPECTOR=1/,
    );
  });

  it('on the command line (`node --inspect dist/cli.js`) is refused the same way', async () => {
    const run = track(runCli([], env, ['--inspect=127.0.0.1:0']));
    expect(await exitCodeWithin(run, 10_000)).toBe(2);
    expect(run.stderr()).toMatch(/fabric-ops: a V8 inspector is listening at ws:\/\/127\.0\.0\.1:\d+\/\S+: anyone who can reach it runs code/);
  });

  it('runs with FABRIC_OPS_ALLOW_INSPECTOR=1 (the README way to debug), the inspector on the port asked for', async () => {
    const run = track(runCli([], { ...env, NODE_OPTIONS: '--inspect=127.0.0.1:0', FABRIC_OPS_ALLOW_INSPECTOR: '1' }));
    const url = await run.listening();
    const inspector = /Debugger listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(run.stderr());
    expect(inspector).not.toBeNull();
    expect(await listeningPorts(run.child.pid ?? 0)).toEqual([Number(inspector?.[1]), Number(new URL(url).port)].sort((a, b) => a - b));
    expect((await request(`${url}/healthz`)).status).toBe(200);
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(0);
  });
});

/** Whether the process catches SIGUSR1 (/proc/<pid>/status, SigCgt): from then on the signal no longer kills it. */
async function catchesSigusr1(pid: number): Promise<boolean> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  if (mask === undefined) throw new Error(`/proc/${pid}/status has no SigCgt line`);
  return (BigInt(`0x${mask}`) & (1n << 9n)) !== 0n;
}

/** The run's end, or what it printed when it has not ended within `ms` (it is killed after the test). */
async function endWithin(run: CliRun, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | string> {
  const code = await exitCodeWithin(run, ms);
  return typeof code === 'string' ? `${code}: ${run.stderr()}` : run.exited;
}

const earlyRefusal =
  /fabric-ops: a V8 inspector is listening at ws:\/\/127\.0\.0\.1:\d+\/\S+ \(no --inspect option opened it: a SIGUSR1 that came before the command could ignore it, or code the process preloaded\): anyone who can reach it runs code in this process\. Start the command with node --disable-sigusr1/;

describe('an inspector opened before the command could ignore SIGUSR1 (issue 28)', () => {
  it('`node dist/cli.js` sent SIGUSR1 every millisecond for its first 100 ms: an inspector a signal opened is refused (exit 2), and it never serves with one', async () => {
    // Node.js opens the inspector on a SIGUSR1 from the moment it installs its own handler (the
    // signal killed the process before that) until the command's listener replaces it, some tens
    // of ms: the signals start when the process first catches SIGUSR1. Whether one lands in that
    // window is timing; the runs go on (at most 5) until one did, and every run is checked.
    let opened = 0;
    for (let attempt = 0; attempt < 5 && opened === 0; attempt += 1) {
      const run = track(runCli([], env));
      const pid = run.child.pid ?? 0;
      const spawned = Date.now();
      await waitFor(`process ${pid} catching SIGUSR1`, () => catchesSigusr1(pid), {
        everyMs: 1,
        timeoutMs: 10_000,
        giveUpIf: () => (run.child.exitCode !== null ? `it exited: ${run.stderr()}` : undefined),
      });
      for (let sent = 0; sent < 200 && (sent === 0 || Date.now() - spawned < 100) && run.child.exitCode === null; sent += 1) {
        run.child.kill('SIGUSR1');
        await delay(1);
      }
      const inspector = /Debugger listening on (ws:\/\/\S+)/;
      // Either the refusal (an inspector was opened) or the service (none was): whichever comes first, then its end.
      await waitFor(`process ${pid} serving or refusing`, () => /listening on http/.test(run.stderr()) || run.child.exitCode !== null, { timeoutMs: 15_000 });
      if (inspector.test(run.stderr())) {
        opened += 1;
        expect(await endWithin(run, 10_000)).toEqual({ code: 2, signal: null });
        expect(run.stderr()).toMatch(earlyRefusal);
        expect(run.stderr()).toContain(`listening at ${inspector.exec(run.stderr())?.[1] ?? ''}`);
      } else {
        const url = await run.listening();
        expect(await listeningPorts(pid)).toEqual([Number(new URL(url).port)]);
        expect((await request(`${url}/healthz`)).status).toBe(200);
        // The command's listener took them all.
        expect(run.stderr()).toMatch(/SIGUSR1 ignored/);
        run.child.kill('SIGTERM');
        expect(await run.exited).toEqual({ code: 0, signal: null });
      }
    }
    // A run in which no signal came early enough checks nothing about the window.
    expect(opened).toBe(1);
  });

  it('a SIGUSR1 the process sends itself before dist/cli.js runs (preloaded code: the early signal, made certain) opens an inspector, and the command refuses it with exit 2', async () => {
    const preload = path.join(tmp, 'signal-self.js');
    await writeFile(preload, "process.kill(process.pid, 'SIGUSR1');\n");
    const run = track(runCli([], { ...env, NODE_OPTIONS: `--require ${preload}` }));
    expect(await endWithin(run, 10_000)).toEqual({ code: 2, signal: null });
    expect(run.stderr()).toMatch(/Debugger listening on ws:\/\/127\.0\.0\.1:9229\//);
    expect(run.stderr()).toMatch(earlyRefusal);
  });

  it('an inspector opened after the first look, on the first turn of the event loop (by preloaded code), is found by a later look (once started, or 1 s after the start): exit 2', async () => {
    const preload = path.join(tmp, 'open-later.js');
    await writeFile(preload, "setImmediate(() => require('node:inspector').open(0, '127.0.0.1'));\n");
    const run = track(runCli([], { ...env, NODE_OPTIONS: `--require ${preload}` }));
    expect(await endWithin(run, 10_000)).toEqual({ code: 2, signal: null });
    expect(run.stderr()).toMatch(/Debugger listening on ws:\/\/127\.0\.0\.1:\d+\//);
    expect(run.stderr()).toMatch(earlyRefusal);
  });

  it('with FABRIC_OPS_ALLOW_INSPECTOR=1 such an inspector is allowed: the command serves', async () => {
    const preload = path.join(tmp, 'open-allowed.js');
    await writeFile(preload, "require('node:inspector').open(0, '127.0.0.1');\n");
    const run = track(runCli([], { ...env, NODE_OPTIONS: `--require ${preload}`, FABRIC_OPS_ALLOW_INSPECTOR: '1' }));
    const url = await run.listening();
    expect((await request(`${url}/healthz`)).status).toBe(200);
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(0);
  });
});
