// Bundles the command (src/cli.ts and everything it loads at start) into one file, dist/cli.js,
// with esbuild (issue 20): one file to read and compile instead of hundreds. The library keeps
// tsc's output (dist/index.js and the rest, with types). Packages that only some configurations
// load stay outside the bundle, loaded from node_modules when a feature needs them:
// EXTERNAL below (the start-modules test checks they are not loaded otherwise).
//   node scripts/bundle.js            writes dist/cli.js, dist/cli.js.map, dist/cli.meta.json
const path = require('node:path');
const fs = require('node:fs');
const esbuild = require('esbuild');

const root = path.resolve(__dirname, '..');
const EXTERNAL = [
  // gRPC for the CRI checker; the Kubernetes client; hot-shots for StatsD.
  '@grpc/grpc-js',
  '@grpc/proto-loader',
  '@kubernetes/client-node',
  'hot-shots',
  // Only with provider prometheus / a YAML file (zod: only the library's types use it).
  'prom-client',
  'yaml',
  'zod',
];

// bunyan's optional packages, which it tries at load (`try { require(...) } catch`) and does
// without: dtrace-provider (native probes), mv (rotating files), moment (its CLI's local time);
// fabric-ops uses none of them. In the bundle they are modules that throw as a missing one does, so
// bunyan takes its own fallback and nothing is read from node_modules for them.
const ABSENT = ['dtrace-provider', 'mv', 'moment', 'source-map-support'];
const absentPlugin = {
  name: 'absent-optional-packages',
  setup(build) {
    const filter = new RegExp(`^(${ABSENT.join('|')})$`);
    build.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'absent' }));
    build.onLoad({ filter: /.*/, namespace: 'absent' }, (args) => ({
      contents: `const e = new Error("Cannot find module '${args.path}' (left out of the fabric-ops bundle)"); e.code = 'MODULE_NOT_FOUND'; throw e;`,
      loader: 'js',
    }));
  },
};

async function main() {
  const outfile = path.join(root, 'dist', 'cli.js');
  const result = await esbuild.build({
    entryPoints: [path.join(root, 'src', 'cli.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: EXTERNAL,
    plugins: [absentPlugin],
    sourcemap: true,
    // The map names the sources relative to dist/ (../src/..., ../node_modules/... for bundled
    // packages) and carries their text, so it works where the package has no node_modules copy.
    sourcesContent: true,
    metafile: true,
    // Paths as seen from this checkout (node_modules may be a symlink to a shared copy).
    preserveSymlinks: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  fs.writeFileSync(path.join(root, 'dist', 'cli.meta.json'), JSON.stringify(result.metafile));
  fs.chmodSync(outfile, 0o755);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
