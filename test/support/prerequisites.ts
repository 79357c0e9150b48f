import { execFileSync } from 'node:child_process';

/**
 * Integration tests need real peers (docker, containerd, prometheus, openssl...).
 * `make test` installs them (scripts/test-prereqs.sh). A missing one fails the test
 * loudly, with what to run; it never skips.
 */
export function requireCommand(command: string, installHint = 'run `make test`, which installs test prerequisites'): string {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`test prerequisite missing: '${command}' is not on PATH (${installHint})`);
  }
}
