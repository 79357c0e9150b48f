// Trims a production node_modules (the image's) to what the bundled command loads from it: the
// packages scripts/bundle.js leaves outside the bundle and their dependencies, without type
// declarations, source maps, TypeScript sources and docs (issue 20: a small image).
//   node scripts/image-prune.js NODE_MODULES_DIR
const fs = require('node:fs');
const path = require('node:path');
const { EXTERNAL } = require('./bundle.js');

const modules = path.resolve(process.argv[2] ?? 'node_modules');

/** The directory of `name` as Node would find it from `fromDir` (nested node_modules first). */
function locate(name, fromDir) {
  for (let dir = fromDir; dir.startsWith(modules); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === modules) break;
  }
  const top = path.join(modules, name);
  return fs.existsSync(path.join(top, 'package.json')) ? top : null;
}

const keep = new Set();
const queue = EXTERNAL.map((name) => locate(name, modules)).filter((dir) => dir !== null);
while (queue.length > 0) {
  const dir = queue.pop();
  if (keep.has(dir)) continue;
  keep.add(dir);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  for (const name of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies })) {
    const found = locate(name, dir);
    if (found) queue.push(found); // an optional or peer dependency may be absent
  }
}

let removed = 0;
function removeUnkept(dir) {
  for (const entry of fs.readdirSync(dir)) {
    if (entry.startsWith('.')) {
      fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
      continue;
    }
    const full = path.join(dir, entry);
    if (entry.startsWith('@')) {
      removeUnkept(full);
      if (fs.readdirSync(full).length === 0) fs.rmdirSync(full);
    } else if (!keep.has(full)) {
      fs.rmSync(full, { recursive: true, force: true });
      removed++;
    }
  }
}
removeUnkept(modules);

const dropFile = /(\.d\.[cm]?ts|\.d\.ts\.map|\.map|\.tsbuildinfo|(?<!\.d)\.[cm]?ts|\.md|\.markdown)$/i;
let bytes = 0;
function strip(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) strip(full);
    else if (entry.isFile() && dropFile.test(entry.name) && !/^license/i.test(entry.name)) {
      bytes += fs.statSync(full).size;
      fs.rmSync(full);
    }
  }
}
strip(modules);
process.stdout.write(`image-prune: kept ${keep.size} packages, removed ${removed}; ${(bytes / 1e6).toFixed(1)} MB of types, maps and docs removed\n`);
