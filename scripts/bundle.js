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
  // (The YAML parser is inside: a start with a file, the usual one, compiles it from the command's
  // code cache instead of 72 files from node_modules, 190 -> 148 ms of start CPU for a companion on
  // Fabric's sample core.yaml (docs/companion.md, "Footprint"); a start without a file does not
  // evaluate it: the start-modules test checks both.)
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

// What express loads at `require('express')` for features the command never uses: body-parser
// (express.json() and friends: fabric-ops reads bodies itself, src/http/body.ts), with raw-body and
// iconv-lite's code-page tables (a third of the bundle), and qs (the 'extended' query parser; the
// command keeps express 5's default, 'simple'). In the bundle each is a stand-in whose functions
// load the real package from node_modules on their first call, so nothing changes for code that
// does use them, and the command neither parses nor evaluates them at start (issue 20).
//
// yargs-parser is convict's, for settings read from command-line arguments (a schema key's `arg`):
// fabric-ops's schemas have none, and convict (patched below, convictArgumentsPlugin) then does
// not call it; the stand-in is the function itself (`callable`), loading the real one on a call.
const DEFERRED = {
  'body-parser': { from: /[\\/]express[\\/]lib[\\/]express\.js$/, functions: ['json', 'raw', 'text', 'urlencoded'] },
  qs: { from: /[\\/]express[\\/]lib[\\/]utils\.js$/, functions: ['parse', 'stringify'] },
  'yargs-parser': { from: /[\\/]convict[\\/]src[\\/]main\.js$/, callable: true, functions: ['detailed', 'camelCase', 'decamelize', 'looksLikeNumber'] },
};
const deferredPlugin = {
  name: 'deferred-express-dependencies',
  setup(build) {
    const filter = new RegExp(`^(${Object.keys(DEFERRED).join('|')})$`);
    build.onResolve({ filter }, (args) => {
      const deferred = DEFERRED[args.path];
      // The stand-in's own require() of the real package: left to Node, at call time.
      if (args.namespace === 'deferred') return { path: args.path, external: true };
      if (!deferred.from.test(args.importer)) {
        throw new Error(`${args.path} is imported by ${args.importer}: scripts/bundle.js defers it only for express (DEFERRED)`);
      }
      return { path: args.path, namespace: 'deferred' };
    });
    build.onLoad({ filter: /.*/, namespace: 'deferred' }, (args) => {
      const { callable, functions } = DEFERRED[args.path];
      const real = `require(${JSON.stringify(args.path)})`;
      const lines = callable ? [`module.exports = function () { return ${real}.apply(this, arguments); };`] : [];
      const target = callable ? 'module.exports' : 'exports';
      for (const name of functions) lines.push(`${target}.${name} = function ${name}() { return ${real}.${name}.apply(this, arguments); };`);
      return { contents: lines.join('\n'), loader: 'js' };
    });
  },
};

// `debug` (express's, the router's, finalhandler's and send's debug logs): loading it reads the
// terminal and environment (supports-color, tty), about 5 ms of every start. Without DEBUG at start
// the real package's loggers are all off, so the stand-in gives loggers that do nothing without
// loading it; with DEBUG set it is the real package (bundled, evaluated only then).
const debugPlugin = {
  name: 'debug-when-asked',
  setup(build) {
    build.onResolve({ filter: /^debug$/ }, (args) => {
      if (args.namespace === 'debug-when-asked') return undefined; // the stand-in's own require: the real package
      return { path: 'debug', namespace: 'debug-when-asked' };
    });
    build.onLoad({ filter: /.*/, namespace: 'debug-when-asked' }, () => ({
      contents: [
        "if (process.env.DEBUG) module.exports = require('debug');",
        'else',
        '  module.exports = function createDebug(namespace) {',
        '    function debug() {}',
        '    debug.namespace = namespace;',
        '    debug.enabled = false;',
        "    debug.extend = (name, delimiter) => createDebug(namespace + (delimiter === undefined ? ':' : delimiter) + name);",
        '    return debug;',
        '  };',
      ].join('\n'),
      resolveDir: root,
      loader: 'js',
    }));
  },
};

// mime-types fills its extension -> type maps at load (every type in mime-db scored, about 5 ms of
// every start). The command's answers only need `contentType()` of full types, which reads mime-db
// directly; the maps are for `lookup()` and `extension()` (express's res.type('json'),
// res.sendFile). In the bundle they are filled on first use instead. mime-db itself (some 2,500
// types in one object literal, about 1 ms and 0.2 MB of every start) is evaluated on first use too:
// each use of mime-types' `db` becomes `require('mime-db')`, which in the bundle is a call that
// evaluates it once; the command's JSON answers name their charset (src/http/json.ts), so none
// looks it up. The text replaced is checked: a mime-types that no longer has it fails the build
// rather than being bundled unchanged unnoticed.
const mimeMapsAtLoad = `exports.extensions = Object.create(null)
exports.lookup = lookup
exports.types = Object.create(null)
exports._extensionConflicts = []

// Populate the extensions/types maps
populateMaps(exports.extensions, exports.types)`;
const mimeMapsOnFirstUse = `var lazyMaps = null
function maps () {
  if (lazyMaps === null) {
    lazyMaps = { extensions: Object.create(null), types: Object.create(null) }
    populateMaps(lazyMaps.extensions, lazyMaps.types)
  }
  return lazyMaps
}
Object.defineProperty(exports, 'extensions', { enumerable: true, get: function () { return maps().extensions } })
exports.lookup = lookup
Object.defineProperty(exports, 'types', { enumerable: true, get: function () { return maps().types } })
exports._extensionConflicts = []`;
// A plugin that makes the edits in the files matching `file`: each replaces `expected`, which must
// be there `count` times (default once), with `replacement`. The build fails when a text is not
// there as often (a new version of the package), rather than bundling it unchanged unnoticed.
// `what` names the text in that message; `absent`, when given, must not match the text after the
// edits (a use they missed).
function sourcePatch(name, file, edits, absent) {
  return {
    name,
    setup(build) {
      build.onLoad({ filter: file }, (args) => {
        let text = fs.readFileSync(args.path, 'utf8');
        for (const { what, expected, replacement, count = 1 } of edits) {
          const found = text.split(expected).length - 1;
          if (found !== count) {
            throw new Error(`${args.path}: not the source scripts/bundle.js expects (${what}: ${count} expected, ${found} found); check and update the plugin`);
          }
          text = text.split(expected).join(replacement);
        }
        const missed = absent?.exec(text);
        if (missed) throw new Error(`${args.path}: "${missed[0]}" is left after scripts/bundle.js's ${name} edits; check and update the plugin`);
        return { contents: text, loader: 'js' };
      });
    },
  };
}

const mimeDbOnFirstUse = [
  ["var db = require('mime-db')\n", ''],
  ['db[match[1].toLowerCase()]', "require('mime-db')[match[1].toLowerCase()]"],
  ['Object.keys(db)', "Object.keys(require('mime-db'))"],
  ['var mime = db[type]', "var mime = require('mime-db')[type]"],
  ['db[type0].source', "require('mime-db')[type0].source", 2],
  ['db[type1].source', "require('mime-db')[type1].source", 2],
].map(([expected, replacement, count]) => ({ what: 'mimeDbOnFirstUse', expected, replacement, count }));
const mimeTypesPlugin = sourcePatch(
  'mime-types-on-first-use',
  /[\\/]node_modules[\\/]mime-types[\\/]index\.js$/,
  [{ what: 'mimeMapsAtLoad', expected: mimeMapsAtLoad, replacement: mimeMapsOnFirstUse }, ...mimeDbOnFirstUse],
  /(?<!mime-)\bdb\b/,
);

// router (express 5's) compiles a path-to-regexp matcher for every layer it makes, and a route
// makes one layer per handler and method: `app.all(path, ...)` is one per HTTP method (34), all
// with the path '/', whose matcher a route never uses. The command's app made 160 matchers at
// every start (about 2 ms) for a dozen distinct ones. In the bundle a layer with a string path
// shares the matcher of an earlier layer with the same path and options: a matcher is a pure
// function of them (path-to-regexp's match() holds a non-global RegExp and its keys), and a path
// that does not compile still throws where it did, at the layer's creation. The text replaced is
// checked as for mime-types.
const routerMatcherPerLayer = `  this.matchers = Array.isArray(this.rawPath) ? this.rawPath.map(matcher) : [matcher(path)]
}`;
const routerSharedMatcher = `  this.matchers = Array.isArray(this.rawPath) ? this.rawPath.map(matcher) : [typeof path === 'string' ? sharedMatcher(path, opts, matcher) : matcher(path)]
}

// fabric-ops bundle (scripts/bundle.js): one matcher per path and options.
const sharedMatchers = new Map()
function sharedMatcher (path, opts, matcher) {
  const key = String(opts.strict) + '|' + String(opts.sensitive) + '|' + String(opts.end) + '|' + path
  let found = sharedMatchers.get(key)
  if (found === undefined) {
    found = matcher(path)
    sharedMatchers.set(key, found)
  }
  return found
}`;
const routerMatchersPlugin = sourcePatch('router-shared-matchers', /[\\/]node_modules[\\/]router[\\/]lib[\\/]layer\.js$/, [
  { what: 'routerMatcherPerLayer', expected: routerMatcherPerLayer, replacement: routerSharedMatcher },
]);

// bunyan checks its arguments with node:assert (ok, equal, fail), whose load brings six of Node's
// modules (about 0.6 ms of every start). In the bundle bunyan's `assert` is a stand-in that makes
// the same checks and calls node:assert only when one fails, so the error thrown is node:assert's.
const assertStandIn = `function real() { return require('node:assert'); }
exports.ok = function ok(value, message) { if (!value) real().ok.apply(null, arguments); };
exports.equal = function equal(actual, expected, message) { if (actual != expected) real().equal.apply(null, arguments); };
exports.fail = function fail() { return real().fail.apply(null, arguments); };`;
const assertOnFailurePlugin = {
  name: 'assert-on-failure',
  setup(build) {
    build.onResolve({ filter: /^(node:)?assert$/ }, (args) => {
      if (args.namespace === 'assert-on-failure') return { path: 'node:assert', external: true };
      if (!/[\\/]node_modules[\\/]bunyan[\\/]/.test(args.importer)) return undefined;
      return { path: 'assert', namespace: 'assert-on-failure' };
    });
    build.onLoad({ filter: /.*/, namespace: 'assert-on-failure' }, () => ({ contents: assertStandIn, loader: 'js' }));
  },
};

// convict parses the command line with yargs-parser whenever it builds a configuration, and then
// reads from the result only the schema keys that name an `arg`: fabric-ops's have none, so in
// the bundle the parse is skipped when no key names one (about 1.5 ms of every start with
// yargs-parser's own load, which DEFERRED then also spares). Checked as for mime-types.
const convictParsesArguments = `function importArguments(o) {
  const argv = parseArgs(`;
const convictParsesArgumentsWhenUsed = `function importArguments(o) {
  // fabric-ops bundle (scripts/bundle.js): nothing to read without a key that names an arg.
  if (Object.keys(o._argv).length === 0) return
  const argv = parseArgs(`;
const convictArgumentsPlugin = sourcePatch('convict-arguments-when-used', /[\\/]node_modules[\\/]convict[\\/]src[\\/]main\.js$/, [
  { what: 'convictParsesArguments', expected: convictParsesArguments, replacement: convictParsesArgumentsWhenUsed },
]);

// esbuild escapes non-ASCII characters in strings but not in regular expressions or the comments
// it keeps; one such character makes V8 hold the whole source as a two-byte string (twice the
// memory for the life of the process). Escaped as \uXXXX, which means the same in a regular
// expression, a string and an identifier, and nothing in a comment.
function asciiOnly(file) {
  const text = fs.readFileSync(file, 'utf8');
  // eslint-disable-next-line no-control-regex
  const escaped = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (escaped !== text) fs.writeFileSync(file, escaped);
}

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

// prom-client (with its @opentelemetry/api, tdigest and bintrees) is in the command's bundle, where
// esbuild keeps each CommonJS file in a function of its own that runs on its first require(): the
// command requires it only with provider prometheus (src/metrics/create.ts), so statsd and
// disabled evaluate none of it (the start-modules test checks it with V8's coverage). In the
// bundle, the functions of it that the start runs are in the command's code cache (src/cli.ts),
// which a chunk of its own, required through Node's loader, was not: about 3.5 ms of every start
// with prometheus (issue 20).

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

// dist/cli.js is only src/cli.ts and the little it imports (the SIGUSR1 listener, first, then the
// Node.js version check, the inspector check and Node's compile cache switched on in a folder of the
// user's own) and runs the command's bundle, dist/cli-command.js: a file Node compiles before running it
// cannot use the cache that the file itself switches on, and compiling the bundle is ~10 ms of
// every start that the cache saves (issue 20).
const commandFile = 'cli-command.js';
const commandChunkPlugin = {
  name: 'command-chunk',
  setup(build) {
    build.onResolve({ filter: /^\.\/command$/ }, (args) =>
      /[\\/]src[\\/]cli\.ts$/.test(args.importer) ? { path: `./${commandFile}`, external: true } : undefined,
    );
  },
};

// The bin's first two lines: a shell script that is also JavaScript (`':'` is the shell's no-op and
// a string statement to Node, the rest of the line a comment), so that the bin starts node with
// --disable-sigusr1 (src/inspector-guard.ts) where that node has the flag (Node.js 22.14 and later),
// and without it on an older node, which then reaches the command's own Node.js version check
// ("Node.js 20.20.2 is too old", exit 2) rather than stopping at `node: bad option:
// --disable-sigusr1` (issue 30 item 14; `#!/usr/bin/env -S node --disable-sigusr1` could do neither,
// and needed an env with -S, which BusyBox's has not). The flag is asked of the node itself
// (`node --disable-sigusr1 --version`: about 6 ms, before the command's start); `exec` leaves one
// process, node, with the pid the caller started. `node dist/cli.js` does not read these lines.
const shellLine = `':' //; node --disable-sigusr1 --version >/dev/null 2>&1 && exec node --disable-sigusr1 "$0" "$@"; exec node "$0" "$@"`;
const shebang = `#!/bin/sh\n${shellLine}`;

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  sourcemap: true,
  // The map names the sources relative to dist/ (../src/..., ../node_modules/... for bundled
  // packages) and carries their text, so it works where the package has no node_modules copy.
  sourcesContent: true,
  metafile: true,
  // Paths as seen from this checkout (node_modules may be a symlink to a shared copy).
  preserveSymlinks: true,
  // Whitespace and syntax minified, identifiers not (stack traces and class names read as in
  // the sources; the map leads back to them): a third less for V8 to read and keep at every start.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'linked',
  logLevel: 'warning',
};

async function main() {
  const outfile = path.join(root, 'dist', 'cli.js');
  const entry = await require('esbuild').build({
    ...common,
    entryPoints: [path.join(root, 'src', 'cli.ts')],
    outfile,
    banner: { js: shebang },
    plugins: [commandChunkPlugin],
  });
  const command = await require('esbuild').build({
    ...common,
    entryPoints: [path.join(root, 'src', 'command.ts')],
    outfile: path.join(root, 'dist', commandFile),
    external: EXTERNAL,
    // The command loads its Kubernetes chunk (ESM) with require() (require(esm), Node >= 22.12),
    // not import(): dist/cli.js runs this bundle through vm.Script for its code cache, and a
    // script run so can import() only with Node's experimental USE_MAIN_CONTEXT_DEFAULT_LOADER.
    supported: { 'dynamic-import': false },
    plugins: [
      absentPlugin,
      deferredPlugin,
      debugPlugin,
      assertOnFailurePlugin,
      mimeTypesPlugin,
      routerMatchersPlugin,
      convictArgumentsPlugin,
      kubernetesClientPlugin,
    ],
  });
  const kubernetes = await bundleKubernetesClient();
  // prom-client was a chunk of its own before: a build over an older one leaves no copy of it.
  for (const stale of ['prom-client.js', 'prom-client.js.map', 'prom-client.js.LEGAL.txt']) fs.rmSync(path.join(root, 'dist', stale), { force: true });
  const results = [entry, command, kubernetes];
  const metafile = {
    inputs: Object.assign({}, ...results.map((result) => result.metafile.inputs)),
    outputs: Object.assign({}, ...results.map((result) => result.metafile.outputs)),
  };
  fs.writeFileSync(path.join(root, 'dist', 'cli.meta.json'), JSON.stringify(metafile));
  for (const file of [outfile, commandFile]) asciiOnly(path.resolve(root, 'dist', file));
  fs.chmodSync(outfile, 0o755);
}

module.exports = { EXTERNAL, DEFERRED };
if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
