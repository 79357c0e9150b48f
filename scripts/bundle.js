// Bundles the command (src/cli.ts and everything it loads at start) into one file, dist/cli.js,
// with esbuild (issue 20): one file to read and compile instead of hundreds. The library keeps
// tsc's output (dist/index.js and the rest, with types). Packages that only some configurations
// load stay outside the bundle, loaded from node_modules when a feature needs them:
// EXTERNAL below (the start-modules test checks they are not loaded otherwise).
//   node scripts/bundle.js   writes dist/cli.js, dist/kubernetes-client.mjs (maps, licence notes) and dist/cli.meta.json
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
const EXTERNAL = [
  // gRPC for the CRI checker; hot-shots for StatsD.
  '@grpc/grpc-js',
  '@grpc/proto-loader',
  'hot-shots',
  // Only with provider prometheus / a YAML file.
  'prom-client',
  'yaml',
  // Only in fleet mode (its configuration schema, requests and put-back state).
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

// @kubernetes/client-node (ESM only, about 30 MB installed, most of it generated models) is
// bundled on its own into dist/kubernetes-client.mjs, which the command imports only when the
// Kubernetes integration is configured: the image then needs none of it in node_modules.
const kubernetesClientFile = 'kubernetes-client.mjs';
const kubernetesClientPlugin = {
  name: 'kubernetes-client-chunk',
  setup(build) {
    build.onResolve({ filter: /^@kubernetes\/client-node$/ }, () => ({ path: `./${kubernetesClientFile}`, external: true }));
  },
};

async function bundleKubernetesClient() {
  return require('esbuild').build({
    stdin: { contents: "export * from '@kubernetes/client-node';", resolveDir: root, loader: 'js', sourcefile: 'kubernetes-client-entry.mjs' },
    outfile: path.join(root, 'dist', kubernetesClientFile),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    // Third-party code only: minified (4 MB against 17 MB; it loads in about a third of the time of
    // the installed package), and no map: esbuild would chain the packages' own maps, which name
    // their TypeScript sources without carrying them (a map naming files nobody has).
    minify: true,
    // Its CommonJS dependencies call require(): an ES module has none of its own.
    banner: { js: "import { createRequire as __fabricOpsCreateRequire } from 'node:module'; const require = __fabricOpsCreateRequire(import.meta.url);" },
    sourcemap: false,
    metafile: true,
    preserveSymlinks: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
}

async function main() {
  const outfile = path.join(root, 'dist', 'cli.js');
  const result = await require('esbuild').build({
    entryPoints: [path.join(root, 'src', 'cli.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: EXTERNAL,
    plugins: [absentPlugin, kubernetesClientPlugin],
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
  const kubernetes = await bundleKubernetesClient();
  const metafile = {
    inputs: { ...result.metafile.inputs, ...kubernetes.metafile.inputs },
    outputs: { ...result.metafile.outputs, ...kubernetes.metafile.outputs },
  };
  fs.writeFileSync(path.join(root, 'dist', 'cli.meta.json'), JSON.stringify(metafile));
  fs.chmodSync(outfile, 0o755);
}

module.exports = { EXTERNAL };
if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
