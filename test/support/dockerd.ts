import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { requireCommand } from './prerequisites';
import { logTail, terminate } from './processes';
import { waitFor } from './wait';

/**
 * A private Docker engine for one test file: its own socket, data root, exec root and pid
 * file under a temp dir, no bridge and no iptables. It starts its own managed containerd
 * (under the exec root), so it shares nothing with the machine's engine at /var/run/docker.sock,
 * which other tests use and which must never be stopped. The daemon can be stopped and
 * started again on the same directories (the outage tests).
 */
/** Also listen on 127.0.0.1:port with TLS, verifying client certificates against caFile. */
export interface DockerdTlsListener {
  port: number;
  caFile: string;
  certFile: string;
  keyFile: string;
}

export class PrivateDockerd {
  readonly dir: string;
  readonly tls: DockerdTlsListener | null;
  readonly socketPath: string;
  readonly logFile: string;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  private constructor(dir: string, tls: DockerdTlsListener | null) {
    this.dir = dir;
    this.tls = tls;
    // Short paths: a unix socket path may not exceed about 100 characters, and the managed
    // containerd puts its socket at <exec-root>/containerd/containerd.sock.
    this.socketPath = path.join(dir, 'docker.sock');
    this.logFile = path.join(dir, 'dockerd.log');
  }

  get endpoint(): string {
    return `unix://${this.socketPath}`;
  }

  /** Creates the directories and starts the daemon; resolves once `GET /_ping` answers. */
  static async start(options: { tls?: DockerdTlsListener } = {}): Promise<PrivateDockerd> {
    requireCommand('dockerd', 'run scripts/test-prereqs.sh (Debian: apt-get install docker.io)');
    const dockerd = new PrivateDockerd(await mkdtemp(path.join(os.tmpdir(), 'dk-')), options.tls ?? null);
    try {
      await dockerd.start();
    } catch (error) {
      await dockerd.dispose();
      throw error;
    }
    return dockerd;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('the private dockerd is already running');
    const log = openSync(this.logFile, 'a');
    const child = spawn(
      'dockerd',
      [
        '--bridge=none',
        '--iptables=false',
        '--ip-forward=false',
        '-H',
        `unix://${this.socketPath}`,
        '--data-root',
        path.join(this.dir, 'data'),
        '--exec-root',
        path.join(this.dir, 'x'),
        '--pidfile',
        path.join(this.dir, 'docker.pid'),
        ...(this.tls
          ? [
              '-H',
              `tcp://127.0.0.1:${this.tls.port}`,
              '--tlsverify',
              '--tlscacert',
              this.tls.caFile,
              '--tlscert',
              this.tls.certFile,
              '--tlskey',
              this.tls.keyFile,
            ]
          : []),
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    try {
      await waitFor('private dockerd to answer /_ping', () => this.answersPing(), {
        timeoutMs: 30_000,
        everyMs: 100,
        giveUpIf: () => (this.child !== child ? 'it exited during start' : undefined),
      });
    } catch (error) {
      throw new Error(`${(error as Error).message}; see ${this.logFile}:\n${this.logTail()}`, { cause: error });
    }
  }

  /** SIGTERM, then waits until the daemon (and the containerd it manages) has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    await terminate(child, this.exited, 30_000);
    await this.stopManagedContainerd();
  }

  /** Stops the daemon and removes its directories. */
  async dispose(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  answersPing(): Promise<boolean> {
    return new Promise((resolve) => {
      if (!existsSync(this.socketPath)) {
        resolve(false);
        return;
      }
      const req = http.get({ socketPath: this.socketPath, path: '/_ping', agent: false, timeout: 2000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
    });
  }

  /** After a clean stop dockerd has already stopped it; after SIGKILL it may still run. */
  private async stopManagedContainerd(): Promise<void> {
    const pidFile = path.join(this.dir, 'x', 'containerd', 'containerd.pid');
    if (!existsSync(pidFile)) return;
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 1 || !isAlive(pid) || !isOurContainerd(pid, this.dir)) return;
    process.kill(pid, 'SIGTERM');
    // Up to 10 s; past that it is left running: this is cleanup, not a check.
    await waitFor(`containerd ${pid} to exit`, () => !isAlive(pid), { timeoutMs: 10_000, everyMs: 100 }).catch(() => undefined);
  }

  logTail(lines = 20): string {
    return logTail(this.logFile, lines);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Only a containerd whose command line names our own directory. */
function isOurContainerd(pid: number, dir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
  } catch {
    return false;
  }
}
