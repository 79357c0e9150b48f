import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** True when `promise` settled within `ms`; the timer does not outlive it. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

/** SIGTERM, then SIGKILL when the process has not exited within graceMs. */
export async function terminate(child: ChildProcess, exited: Promise<unknown>, graceMs: number): Promise<void> {
  child.kill('SIGTERM');
  if (!(await settlesWithin(exited, graceMs))) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** The last lines of a daemon's log file, for failure messages. */
export function logTail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
