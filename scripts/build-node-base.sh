#!/usr/bin/env bash
# Builds a minimal local Node 24 base image (default tag fabric-ops/node-base:24) for machines
# that cannot pull images: the Node binary scripts/node24.sh finds, the machine's npm (run by a
# small sh wrapper), /bin/sh, /usr/bin/env (for npm's `#!/usr/bin/env node` bin scripts), the few
# coreutils a Dockerfile RUN line expects (cat, grep, ls, mkdir, ...) and the libraries they link. When the host reaches the npm registry through an extra CA
# ($NODE_EXTRA_CA_CERTS), that public certificate is copied in and named by the same variable,
# so `npm ci` inside a build reaches the registry the way the host's npm does.
# Real users keep `FROM node:24-bookworm-slim` (the Dockerfile's NODE_IMAGE arg).
set -euo pipefail
tag="${1:-fabric-ops/node-base:24}"
# Bump when the contents change: an older image under the tag is then rebuilt.
revision=3
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$(docker image inspect -f '{{index .Config.Labels "org.fabric-ops.node-base.revision"}}' "$tag" 2>/dev/null || true)" = "$revision" ]; then
  echo "build-node-base: $tag exists" >&2
  exit 0
fi
node_bin="$("$root/scripts/node24.sh")"
npm_cli="$(readlink -f "$(command -v npm)")"
npm_dir="$(cd "$(dirname "$npm_cli")/.." && pwd)"
[ -f "$npm_dir/package.json" ] || { echo "build-node-base: no npm package at $npm_dir" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fs="$work/rootfs"
mkdir -p "$fs/usr/local/bin" "$fs/usr/local/lib/node_modules" "$fs/usr/bin" "$fs/bin" "$fs/etc" "$fs/tmp" "$fs/app"
chmod 1777 "$fs/tmp"
cp -L "$node_bin" "$fs/usr/local/bin/node"
cp -a "$npm_dir" "$fs/usr/local/lib/node_modules/npm"
for tool in npm npx; do
  printf '#!/bin/sh\nexec node /usr/local/lib/node_modules/npm/bin/%s-cli.js "$@"\n' "$tool" >"$fs/usr/local/bin/$tool"
  chmod 755 "$fs/usr/local/bin/$tool"
done
tools=()
for tool in env cat grep ls mkdir rm cp mv ln chmod chown id head tail sed sleep; do
  tools+=("$(command -v "$tool")")
done
for tool in "${tools[@]}"; do cp -L "$tool" "$fs/usr/bin/$(basename "$tool")"; done
for lib in $(ldd "$node_bin" /bin/dash "${tools[@]}" | grep -v ":$" | grep -o "/[^ ]*" | sort -u); do
  mkdir -p "$fs$(dirname "$lib")"
  cp -L "$lib" "$fs$lib"
done
cp -L /bin/dash "$fs/bin/sh"
printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000:node:/home/node:/bin/sh\n' >"$fs/etc/passwd"
printf 'root:x:0:\nnode:x:1000:\n' >"$fs/etc/group"
mkdir -p "$fs/root" "$fs/home/node" && chown 1000:1000 "$fs/home/node" && chmod 700 "$fs/root"
changes=(-c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' -c "LABEL org.fabric-ops.node-base.revision=$revision")
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  mkdir -p "$fs/etc/ssl/certs"
  cp -L "$NODE_EXTRA_CA_CERTS" "$fs/etc/ssl/certs/host-extra-ca-certs.pem"
  changes+=(-c 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-extra-ca-certs.pem')
fi
tar -C "$fs" -cf "$work/base.tar" .
docker import "${changes[@]}" "$work/base.tar" "$tag" >/dev/null
echo "build-node-base: built $tag" >&2
