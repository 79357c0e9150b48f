/**
 * Issue 18, item 2: SIGUSR1 opened an unauthenticated V8 inspector (127.0.0.1:9229) in the
 * command's process. Through the real command, started both ways it is started (the bin, whose
 * shebang passes --disable-sigusr1, and `node dist/cli.js`): after SIGUSR1 the process listens on
 * its service port only, says nothing of a debugger, and keeps serving; an inspector opened by
 * NODE_OPTIONS is refused unless allowed on purpose.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from '../support/http';
import { listeningPorts } from '../support/listening-ports';
import { cliPath, requireBuiltCli, runCli, type CliRun } from '../support/cli';
import { delay } from '../support/wait';

beforeAll(() => requireBuiltCli());
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
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const listening = async (timeoutMs = 15_000): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = /listening on (https?:\/\/\S+)/.exec(out + err);
      if (match?.[1]) return match[1].replace(/["\\,}]+$/, '');
      if (child.exitCode !== null) throw new Error(`fabric-ops exited ${child.exitCode}: ${err}`);
      if (Date.now() > deadline) throw new Error(`fabric-ops did not log its URL within ${timeoutMs} ms: ${err}`);
      await delay(50);
    }
  };
  return track({ child, stdout: () => out, stderr: () => err, exited, listening });
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
