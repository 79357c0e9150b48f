// Copies non-TypeScript assets into dist/ and bakes the build's commit into dist/build-info.json.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
for (const asset of ['health/cri.proto']) {
  const from = path.join(root, 'src', asset);
  if (fs.existsSync(from)) {
    fs.mkdirSync(path.dirname(path.join(root, 'dist', asset)), { recursive: true });
    fs.copyFileSync(from, path.join(root, 'dist', asset));
  }
}
// The bin entry runs by its shebang (npm sets the mode when it installs the package; a checkout
// needs it too).
fs.chmodSync(path.join(root, 'dist', 'cli.js'), 0o755);
let commit = process.env.FABRIC_OPS_COMMIT || 'unknown';
if (commit === 'unknown') {
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // not built from a git checkout
  }
}
fs.writeFileSync(path.join(root, 'dist', 'build-info.json'), JSON.stringify({ commit }) + '\n');
