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
/**
 * HEAD's commit from a git directory's files, without git (the image's build stage has none):
 * HEAD names a commit, or a branch found in refs/heads or packed-refs. Null when it cannot tell.
 */
function commitFromGitDir(gitDir) {
  const read = (file) => {
    try {
      return fs.readFileSync(path.join(gitDir, file), 'utf8');
    } catch {
      return null;
    }
  };
  const head = (read('HEAD') ?? '').trim();
  if (/^[0-9a-f]{40}$/.test(head)) return head;
  const ref = /^ref: (refs\/\S+)$/.exec(head)?.[1];
  if (!ref) return null;
  const loose = (read(ref) ?? '').trim();
  if (/^[0-9a-f]{40}$/.test(loose)) return loose;
  for (const line of (read('packed-refs') ?? '').split('\n')) {
    const [sha, name] = line.trim().split(' ');
    if (name === ref && /^[0-9a-f]{40}$/.test(sha ?? '')) return sha;
  }
  return null;
}

let commit = process.env.FABRIC_OPS_COMMIT || 'unknown';
if (commit === 'unknown') {
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // No git: the Dockerfile copies .git's HEAD and refs to FABRIC_OPS_GIT_DIR.
    commit = commitFromGitDir(process.env.FABRIC_OPS_GIT_DIR || path.join(root, '.git')) ?? 'unknown';
  }
}
fs.writeFileSync(path.join(root, 'dist', 'build-info.json'), JSON.stringify({ commit }) + '\n');
