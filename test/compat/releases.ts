import { requireFabricReleases } from '../support/real-binaries';

/**
 * The Fabric releases the live differential suite (test/real/compat/compat.test.ts) runs against and
 * records, each a folder with bin/peer, bin/orderer and sampleconfig/: $FABRIC_HOMES (space- or
 * colon-separated), else $FABRIC_HOME (one release), else the release of `peer` on the PATH
 * (test/support/real-binaries.ts). There is no default folder: without a release the live suite fails
 * with `OPT-IN SUITE CANNOT RUN: ...`, and a folder named but incomplete fails naming the missing file.
 */
export function compatReleaseHomes(env: NodeJS.ProcessEnv = process.env): string[] {
  return requireFabricReleases(env);
}

/** `2.5.12` → `2.5`: deviations name the release lines they apply to. */
export function releaseLine(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}
