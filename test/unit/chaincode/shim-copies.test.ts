import { chooseShim, loadedShimRoots, shimPackageRoot, type ShimLocator } from '../../../src/chaincode/shim-copies';

/** Issue 30 item 11: which fabric-shim fabric-ops hooks, and which other copies are loaded. */

const example = '/srv/kv/node_modules/fabric-shim';
const checkout = '/src/fabric-ops/node_modules/fabric-shim';

describe('shimPackageRoot', () => {
  test.each([
    [`${example}/lib/chaincode.js`, example],
    [`${example}/lib/contract-spi/bootstrap.js`, example],
    [`${example}/index.js`, example],
    [`${example}/cli.js`, example],
    ['/home/dev/fabric-chaincode-node/libraries/fabric-shim/lib/server.js', '/home/dev/fabric-chaincode-node/libraries/fabric-shim'],
    // A dependency of fabric-shim, its package.json, another package, the chaincode itself: not fabric-shim's modules.
    [`${example}/node_modules/yargs/index.js`, null],
    [`${example}/package.json`, null],
    ['/srv/kv/node_modules/fabric-shim-api/index.js', null],
    ['/srv/kv/dist/index.js', null],
  ])('%s -> %s', (file, root) => {
    expect(shimPackageRoot(file)).toBe(root);
  });

  test('loadedShimRoots: one folder per copy, in load order', () => {
    const cache = Object.fromEntries(
      [`${example}/cli.js`, `${example}/lib/chaincode.js`, '/srv/kv/dist/index.js', `${checkout}/index.js`, `${checkout}/lib/chaincode.js`].map((file) => [
        file,
        {},
      ]),
    );
    expect(loadedShimRoots(cache)).toEqual([example, checkout]);
  });
});

describe('chooseShim', () => {
  const resolveFrom =
    (answers: Record<string, string>) =>
    (dir: string): string | null =>
      answers[dir] ?? null;
  const base: ShimLocator = { loaded: [], mainFile: undefined, ownDir: '/src/fabric-ops/dist/chaincode', resolve: resolveFrom({}) };

  test('fabric-chaincode-node server: the copy already loaded (the running one), not the one beside fabric-ops', () => {
    const locator = { ...base, loaded: [example], mainFile: `${example}/cli.js`, resolve: resolveFrom({ '/src/fabric-ops/dist/chaincode': checkout }) };
    expect(chooseShim(locator)).toEqual({ root: example, how: 'loaded' });
  });

  test('several copies loaded: the one running as the main module, else the one the main module resolves, else the first', () => {
    expect(chooseShim({ ...base, loaded: [checkout, example], mainFile: `${example}/cli.js` })).toEqual({ root: example, how: 'loaded' });
    const app = { ...base, loaded: [checkout, example], mainFile: '/srv/kv/dist/main.js', resolve: resolveFrom({ '/srv/kv/dist': example }) };
    expect(chooseShim(app)).toEqual({ root: example, how: 'loaded' });
    expect(chooseShim({ ...base, loaded: [checkout, example], mainFile: '/elsewhere/main.js' })).toEqual({ root: checkout, how: 'loaded' });
  });

  test('none loaded yet (an application calling shim.server() itself): the main module resolves it, else fabric-ops does, else none', () => {
    const both = resolveFrom({ '/srv/kv/dist': example, '/src/fabric-ops/dist/chaincode': checkout });
    expect(chooseShim({ ...base, mainFile: '/srv/kv/dist/main.js', resolve: both })).toEqual({ root: example, how: 'main module' });
    expect(chooseShim({ ...base, mainFile: '/tmp/script.js', resolve: both })).toEqual({ root: checkout, how: 'fabric-ops' });
    expect(chooseShim({ ...base, resolve: both })).toEqual({ root: checkout, how: 'fabric-ops' });
    expect(chooseShim(base)).toBeNull();
  });
});
