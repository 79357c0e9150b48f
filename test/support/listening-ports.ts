import { readFile, readdir, readlink } from 'node:fs/promises';

/** The TCP ports this process listens on (its socket inodes matched against its namespace's tables). */
export async function listeningPorts(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match?.[1]) inodes.add(match[1]);
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const rows = (await readFile(`/proc/${pid}/net/${table}`, 'utf8')).trim().split('\n').slice(1);
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      const [, local, , state, , , , , , inode] = fields;
      if (state === '0A' && inode !== undefined && inodes.has(inode)) ports.push(parseInt(local?.split(':')[1] ?? '', 16));
    }
  }
  return ports.sort((a, b) => a - b);
}
