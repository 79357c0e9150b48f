import path from 'node:path';

/**
 * Which copy of fabric-shim the chaincode runs, and whether another one is loaded beside it.
 *
 * fabric-ops hooks fabric-shim's `server()`; a hook on another copy than the one that makes the
 * chaincode server sees nothing (issue 30 item 11: the example installed with
 * `"fabric-ops": "file:../.."` made fabric-ops resolve the repository's own fabric-shim, while
 * `fabric-chaincode-node server` ran the example's, and /healthz said no server was created while
 * it listened). So the copy is taken from the chaincode's side, not from where fabric-ops is
 * installed. Pure except for the `resolve` function the caller passes.
 */

/** The folder of the fabric-shim package that `file` is a module of (`<root>/index.js`, `<root>/cli.js`, `<root>/lib/...`), or null. */
export function shimPackageRoot(file: string): string | null {
  if (!file.includes('fabric-shim')) return null;
  const parts = file.split(/[\\/]/);
  const index = parts.lastIndexOf('fabric-shim');
  if (index <= 0) return null;
  const rest = parts.slice(index + 1);
  const own = rest[0] === 'lib' ? rest.length > 1 : rest.length === 1 && (rest[0] === 'index.js' || rest[0] === 'cli.js');
  return own ? parts.slice(0, index + 1).join(path.sep) : null;
}

/** The fabric-shim package folders with a module in `cache` (Node's `require.cache`), in load order. */
export function loadedShimRoots(cache: Readonly<Record<string, unknown>>): string[] {
  const roots = new Set<string>();
  for (const file of Object.keys(cache)) {
    const root = shimPackageRoot(file);
    if (root !== null) roots.add(root);
  }
  return [...roots];
}

/** True when `file` is inside the folder `root`. */
function inside(root: string, file: string): boolean {
  return file.startsWith(root + path.sep);
}

export interface ShimChoice {
  /** The fabric-shim package folder to hook. */
  root: string;
  /** How it was found, for the debug log. */
  how: 'loaded' | 'main module' | 'fabric-ops';
}

export interface ShimLocator {
  /** fabric-shim folders already loaded in the process (loadedShimRoots(require.cache)). */
  loaded: readonly string[];
  /** The process's main module: `require.main.filename`, else `process.argv[1]`. */
  mainFile: string | undefined;
  /** The folder fabric-ops/chaincode is in. */
  ownDir: string;
  /** The fabric-shim folder that node resolves from `dir`, or null when it finds none. */
  resolve(dir: string): string | null;
}

/**
 * The fabric-shim the chaincode runs: the copy already loaded (`fabric-chaincode-node server`
 * loads its own before the chaincode's module; among several, the one running as the main module,
 * else the one the main module resolves), else the one the main module resolves (an application
 * that calls `shim.server()` itself, after enabling fabric-ops), else the one beside fabric-ops.
 * Null when there is none.
 */
export function chooseShim(locator: ShimLocator): ShimChoice | null {
  const { loaded, mainFile } = locator;
  const fromMain = mainFile === undefined ? null : locator.resolve(path.dirname(mainFile));
  const running = mainFile === undefined ? undefined : loaded.find((root) => inside(root, mainFile));
  const chosen = running ?? loaded.find((root) => root === fromMain) ?? loaded[0];
  if (chosen !== undefined) return { root: chosen, how: 'loaded' };
  if (fromMain !== null) return { root: fromMain, how: 'main module' };
  const own = locator.resolve(locator.ownDir);
  return own === null ? null : { root: own, how: 'fabric-ops' };
}

/** The warning for a copy of fabric-shim other than the one hooked. */
export function duplicateShimWarning(hooked: string, others: readonly string[]): string {
  const list = others.join(', ');
  return (
    `fabric-shim is loaded ${others.length + 1} times in this process: ${hooked} (the copy fabric-ops hooks) and ${list}; ` +
    `a chaincode server made by ${others.length === 1 ? 'the other copy' : 'another copy'} is not seen (/healthz says none was created) and its loggers do not follow FABRIC_LOGGING_SPEC: ` +
    'keep one copy of fabric-shim in the chaincode (`npm ls fabric-shim` lists them)'
  );
}

/** What the health check adds to "no chaincode server was created" while other copies are loaded. */
export function duplicateShimNote(hooked: string, others: readonly string[]): string {
  return (
    `fabric-ops hooks the fabric-shim at ${hooked}, and another copy is loaded (${others.join(', ')}): a server made by that copy is not seen; ` +
    'keep one copy of fabric-shim in the chaincode (`npm ls fabric-shim` lists them)'
  );
}
