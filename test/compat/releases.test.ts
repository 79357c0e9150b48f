import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compatReleaseHomes, releaseLine } from './releases';

/**
 * Which releases the live differential suite (test/real/compat/compat.test.ts) runs against: no
 * binary is needed here. The release folders are real folders made in a temp dir, with the files
 * test/support/real-binaries.ts requires (bin/peer, bin/orderer, sampleconfig/core.yaml, orderer.yaml).
 */

let tmp: string;

async function release(name: string, files = ['bin/peer', 'bin/orderer', 'sampleconfig/core.yaml', 'sampleconfig/orderer.yaml']): Promise<string> {
  const home = path.join(tmp, name);
  for (const file of files) {
    await mkdir(path.dirname(path.join(home, file)), { recursive: true });
    await writeFile(path.join(home, file), file.startsWith('bin/') ? '#!/bin/sh\nexit 0\n' : '{}\n');
    if (file.startsWith('bin/')) await chmod(path.join(home, file), 0o755);
  }
  return home;
}

/** A PATH of empty folders and the given ones: `peer` is found on it only where a test puts it. */
async function pathOf(dirs: string[]): Promise<string> {
  return [await mkdtemp(path.join(tmp, 'path-')), ...dirs].join(':');
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'compat-releases-'));
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('compat releases', () => {
  it('FABRIC_HOMES names the releases in its order, separated by spaces or colons; relative folders are resolved', async () => {
    const [a, b, c] = [await release('fabric-2.5.12'), await release('fabric-3.0.0'), await release('fabric-3.1.5')];
    expect(compatReleaseHomes({ FABRIC_HOMES: `${b}:${a}` })).toEqual([b, a]);
    expect(compatReleaseHomes({ FABRIC_HOMES: ` ${a}  ${c}\n${b} ` })).toEqual([a, c, b]);
    expect(compatReleaseHomes({ FABRIC_HOMES: path.relative(process.cwd(), c) })).toEqual([c]);
  });

  it('FABRIC_HOMES wins over FABRIC_HOME; FABRIC_HOME names one release', async () => {
    const [a, b] = [await release('one-2.5'), await release('one-3.0')];
    expect(compatReleaseHomes({ FABRIC_HOME: b })).toEqual([b]);
    expect(compatReleaseHomes({ FABRIC_HOMES: a, FABRIC_HOME: b })).toEqual([a]);
  });

  it('a release folder named but incomplete fails, naming the missing file', async () => {
    const good = await release('good');
    const partial = await release('partial', ['bin/peer', 'sampleconfig/core.yaml', 'sampleconfig/orderer.yaml']);
    expect(() => compatReleaseHomes({ FABRIC_HOMES: `${good} ${partial}` })).toThrow(
      `Fabric release incomplete: ${path.join(partial, 'bin/orderer')} is missing`,
    );
    expect(() => compatReleaseHomes({ FABRIC_HOMES: path.join(tmp, 'fabric-9.9.9') })).toThrow(`${path.join(tmp, 'fabric-9.9.9', 'bin/peer')} is missing`);
  });

  it('no release at all: the opt-in suite cannot run, and says what to set', async () => {
    const PATH = await pathOf(['/usr/bin', '/bin']);
    expect(() => compatReleaseHomes({ PATH })).toThrow(
      'OPT-IN SUITE CANNOT RUN: no real Fabric release: set FABRIC_HOMES (release folders with bin/peer, bin/orderer, sampleconfig/) or put peer on the PATH',
    );
    expect(() => compatReleaseHomes({ PATH, FABRIC_HOMES: ' ', FABRIC_HOME: '' })).toThrow(/^OPT-IN SUITE CANNOT RUN: no real Fabric release/);
  });

  it('without FABRIC_HOMES and FABRIC_HOME, the release of peer on the PATH', async () => {
    const home = await release('on-path');
    expect(compatReleaseHomes({ PATH: await pathOf([path.join(home, 'bin'), '/usr/bin', '/bin']) })).toEqual([home]);
    const broken = await release('on-path-no-orderer', ['bin/peer', 'sampleconfig/core.yaml', 'sampleconfig/orderer.yaml']);
    const brokenPath = await pathOf([path.join(broken, 'bin')]);
    expect(() => compatReleaseHomes({ PATH: brokenPath })).toThrow(`${path.join(broken, 'bin/orderer')} is missing`);
  });

  it('deviations name release lines', () => {
    expect(releaseLine('2.5.12')).toBe('2.5');
    expect(releaseLine('3.0.0')).toBe('3.0');
    expect(releaseLine('3.1.5')).toBe('3.1');
  });
});
