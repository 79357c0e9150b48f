import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

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
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const listening = (timeoutMs = 15_000): Promise<string> =>
    new Promise((resolve, reject) => {
      const started = Date.now();
      const poll = (): void => {
        const match = /listening on (https?:\/\/\S+)/.exec(out + err);
        if (match?.[1]) return resolve(match[1].replace(/["\\,}]+$/, ''));
        if (child.exitCode !== null) return reject(new Error(`fabric-ops exited ${child.exitCode}: ${err}`));
        if (Date.now() - started > timeoutMs) return reject(new Error(`fabric-ops did not log its URL within ${timeoutMs} ms: ${err}`));
        setTimeout(poll, 50);
      };
      poll();
    });
  return { child, stdout: () => out, stderr: () => err, exited, listening };
}

/** Runs `node dist/cli.js ...args` to its end (a one-shot command) with exactly the environment given (plus PATH): its exit code and whole output. */
export function runCliToEnd(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = runCli(args, env);
  // 'close', not 'exit': the output pipes are read to their end first.
  return new Promise((resolve) => run.child.on('close', (code) => resolve({ code, stdout: run.stdout(), stderr: run.stderr() })));
}
