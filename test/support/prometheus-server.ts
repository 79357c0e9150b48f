import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from './wait';

export interface PrometheusRun {
  child: ChildProcess;
  /** The HTTP API's base URL, from the port Prometheus logs it bound. */
  api: Promise<string>;
}

/**
 * A real Prometheus server whose web listener binds 127.0.0.1 port 0: the port is read back from
 * its `msg="Listening on" address=127.0.0.1:N` line (logged by Prometheus 2.x and 3.x with the
 * bound address, where "Start listening for connections" repeats the flag), so no other process
 * can take the port between a probe and the bind. `flags` are the other command-line flags;
 * `onOutput` sees every chunk of stdout and stderr.
 */
export function spawnPrometheus(flags: string[], onOutput: (chunk: string) => void, timeoutMs = 30_000): PrometheusRun {
  const child = spawn('prometheus', [...flags, '--web.listen-address=127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  // The start of the output, where the line is; the callers keep only a tail.
  let head = '';
  const keep = (chunk: Buffer): void => {
    const text = chunk.toString();
    if (head.length < 65_536) head += text;
    onOutput(text);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const api = waitFor(
    'Prometheus logging the address it listens on',
    () => {
      const port = /msg="?Listening on"? address=127\.0\.0\.1:(\d+)/.exec(head)?.[1];
      return port === undefined ? undefined : `http://127.0.0.1:${port}`;
    },
    {
      timeoutMs,
      everyMs: 50,
      giveUpIf: () =>
        child.exitCode !== null || child.signalCode !== null ? `prometheus exited (${String(child.exitCode ?? child.signalCode)}): ${head}` : undefined,
    },
  );
  // A caller that never awaits `api` (its setup failed first) must not get an unhandled rejection.
  api.catch(() => undefined);
  return { child, api };
}
