import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The opt-in suite (`test/real/`, `make test-real`) runs against real binaries that the project
 * cannot install: Fabric releases (`FABRIC_HOMES`, else `FABRIC_HOME`, else `peer` and `orderer`
 * on the PATH) and Helm (`HELM`, else `helm` on the PATH). `make test` never runs it; it prints one
 * line saying so (scripts/opt-in-status.sh). When the opt-in suite is run and a binary is missing,
 * each of its tests fails with the line below: a suite that could not run is never counted as passed.
 */

/** A folder of one Fabric release: `bin/peer`, `bin/orderer` and `sampleconfig/`. */
export interface FabricRelease {
  home: string;
}

function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[\s:]+/)
    .filter((item) => item !== '')
    .map((item) => path.resolve(item));
}

/** The command on the PATH of `env` (the environment given, not necessarily this process's). */
function onPath(command: string, env: NodeJS.ProcessEnv): string | undefined {
  const found = spawnSync('/bin/sh', ['-c', `command -v ${command}`], { encoding: 'utf8', env: { PATH: env.PATH ?? '' } });
  const where = found.stdout.trim();
  return found.status === 0 && where !== '' ? where : undefined;
}

/**
 * The Fabric release folders named for the opt-in suite, or the reason there are none. A folder named
 * but incomplete is an error naming the missing file.
 */
export function fabricReleases(env: NodeJS.ProcessEnv = process.env): { homes: string[]; missing?: string } {
  let homes = splitList(env.FABRIC_HOMES);
  if (homes.length === 0) homes = splitList(env.FABRIC_HOME);
  if (homes.length === 0) {
    const peer = onPath('peer', env);
    if (peer !== undefined) homes = [path.dirname(path.dirname(peer))];
  }
  if (homes.length === 0)
    return { homes, missing: 'no real Fabric release: set FABRIC_HOMES (release folders with bin/peer, bin/orderer, sampleconfig/) or put peer on the PATH' };
  for (const home of homes) {
    for (const required of ['bin/peer', 'bin/orderer', 'sampleconfig/core.yaml', 'sampleconfig/orderer.yaml']) {
      if (!existsSync(path.join(home, required))) {
        throw new Error(`Fabric release incomplete: ${path.join(home, required)} is missing (FABRIC_HOMES names folders with bin/ and sampleconfig/)`);
      }
    }
  }
  return { homes };
}

/** The release folders, or an error (the opt-in suite's tests fail with it). */
export function requireFabricReleases(env: NodeJS.ProcessEnv = process.env): string[] {
  const { homes, missing } = fabricReleases(env);
  if (missing !== undefined) throw new Error(`OPT-IN SUITE CANNOT RUN: ${missing}`);
  return homes;
}

/** The helm binary: $HELM, else helm on the PATH; undefined when there is none. */
export function helmBinaryOrUndefined(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = env.HELM;
  if (named !== undefined && named !== '') return named;
  return onPath('helm', env);
}

export function requireHelm(env: NodeJS.ProcessEnv = process.env): string {
  const helm = helmBinaryOrUndefined(env);
  if (helm === undefined) throw new Error('OPT-IN SUITE CANNOT RUN: no helm: set HELM=/path/to/helm or put helm on the PATH');
  return helm;
}
