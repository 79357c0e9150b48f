import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from './wait';

export const cliPath = path.resolve(__dirname, '../../dist/cli.js');

export function requireBuiltCli(): void {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run \`npm run build\` (make test does) before the CLI tests`);
}

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the URL of the "listening on" log line. */
  listening: (timeoutMs?: number) => Promise<string>;
}

/** Runs `node ...nodeOptions dist/cli.js ...args` with exactly the environment given (plus PATH). */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, nodeOptions: string[] = []): CliRun {
  const child = spawn(process.execPath, [...nodeOptions, cliPath, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return cliRunOf(child);
}

/**
 * The commands started and not yet exited. A test that fails before it stops its command (an
 * expectation that throws first) would leave it running after the run, holding its port; they are
 * killed once the test file is done (this module is loaded once per test file).
 */
const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** A started command (spawned with stdout and stderr piped) as a CliRun: its output gathered, its exit, its URL. */
export function cliRunOf(child: ChildProcess): CliRun {
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const listening = (timeoutMs?: number): Promise<string> =>
    loggedUrl(
      child,
      () => out + err,
      () => err,
      timeoutMs,
    );
  return { child, stdout: () => out, stderr: () => err, exited, listening };
}

/**
 * The URL of a started command's "listening on" line in `output`: waitFor that line, given up at
 * once when the command has exited without it; a failure carries its stderr.
 */
export async function loggedUrl(child: ChildProcess, output: () => string, stderr: () => string, timeoutMs = 15_000): Promise<string> {
  const url = (): string | undefined => /listening on (https?:\/\/\S+)/.exec(output())?.[1]?.replace(/["\\,}]+$/, '') || undefined;
  try {
    return await waitFor('fabric-ops to log its URL', url, {
      timeoutMs,
      giveUpIf: () => (child.exitCode !== null && url() === undefined ? `fabric-ops exited ${child.exitCode}` : undefined),
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}: ${stderr()}`, { cause: error });
  }
}

/** Runs `node dist/cli.js ...args` to its end (a one-shot command) with exactly the environment given (plus PATH): its exit code and whole output. */
export function runCliToEnd(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = runCli(args, env);
  // 'close', not 'exit': the output pipes are read to their end first.
  return new Promise((resolve) => run.child.on('close', (code) => resolve({ code, stdout: run.stdout(), stderr: run.stderr() })));
}
