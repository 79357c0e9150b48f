import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { requireCommand } from './prerequisites';
import { logTail, terminate } from './processes';
import { waitFor } from './wait';

/**
 * A containerd of its own for one test file: own socket, root, state and config under a temp
 * dir, its CRI plugin on, and an empty CNI config dir (so `NetworkReady` is false with
 * `NetworkPluginNotReady`, whatever the machine has in /etc/cni/net.d). Snapshotters and
 * services the CRI checks do not need are disabled; debug and metrics listeners are off.
 */
export class TestContainerd {
  readonly dir: string;
  readonly socketPath: string;
  readonly logFile: string;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  private constructor(dir: string) {
    this.dir = dir;
    this.socketPath = path.join(dir, 'c.sock');
    this.logFile = path.join(dir, 'containerd.log');
  }

  get endpoint(): string {
    return `unix://${this.socketPath}`;
  }

  static async start(): Promise<TestContainerd> {
    requireCommand('containerd', 'run scripts/test-prereqs.sh (Debian: apt-get install containerd)');
    const containerd = new TestContainerd(await mkdtemp(path.join(os.tmpdir(), 'ctd-')));
    try {
      await containerd.writeConfig();
      await containerd.restart();
    } catch (error) {
      await containerd.dispose();
      throw error;
    }
    return containerd;
  }

  private async writeConfig(): Promise<void> {
    const dir = this.dir;
    for (const sub of ['cni-conf', 'cni-bin', 'opt']) mkdirSync(path.join(dir, sub));
    const config = `version = 2
root = "${dir}/root"
state = "${dir}/state"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "${this.socketPath}"

[ttrpc]
  address = "${this.socketPath}.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    conf_dir = "${dir}/cni-conf"
    bin_dir = "${dir}/cni-bin"

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/opt"
`;
    await writeFile(path.join(dir, 'config.toml'), config);
  }

  /** Starts containerd (again, after stop()) on the same directories; resolves once its socket accepts. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('containerd is already running');
    const log = openSync(this.logFile, 'a');
    const child = spawn('containerd', ['--config', path.join(this.dir, 'config.toml')], { stdio: ['ignore', log, log] });
    closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    try {
      await waitFor(`containerd to listen on ${this.socketPath}`, () => this.accepts(), {
        timeoutMs: 20_000,
        giveUpIf: () => (this.child !== child ? 'it exited during start' : undefined),
      });
    } catch (error) {
      throw new Error(`${(error as Error).message}; see ${this.logFile}:\n${this.logTail()}`, { cause: error });
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    await terminate(child, this.exited, 15_000);
  }

  async dispose(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  private accepts(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect(this.socketPath);
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  }

  logTail(lines = 20): string {
    return logTail(this.logFile, lines);
  }
}
