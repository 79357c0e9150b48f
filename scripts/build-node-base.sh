#!/usr/bin/env bash
# Builds a minimal local Node 24 base image (default tag fabric-ops/node-base:24) from the
# Node binary scripts/node24.sh finds and the libraries it links, for machines that
# cannot pull images. Real users keep `FROM node:24-...` (the Dockerfile's NODE_IMAGE arg).
set -euo pipefail
tag="${1:-fabric-ops/node-base:24}"
root="$(cd "$(dirname "$0")/.." && pwd)"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "build-node-base: $tag exists" >&2
  exit 0
fi
node_bin="$("$root/scripts/node24.sh")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fs="$work/rootfs"
mkdir -p "$fs/usr/local/bin" "$fs/bin" "$fs/etc" "$fs/tmp" "$fs/app"
chmod 1777 "$fs/tmp"
cp -L "$node_bin" "$fs/usr/local/bin/node"
for lib in $(ldd "$node_bin" /bin/dash | grep -v ":$" | grep -o "/[^ ]*" | sort -u); do
  mkdir -p "$fs$(dirname "$lib")"
  cp -L "$lib" "$fs$lib"
done
cp -L /bin/dash "$fs/bin/sh"
printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000:node:/home/node:/bin/sh\n' >"$fs/etc/passwd"
printf 'root:x:0:\nnode:x:1000:\n' >"$fs/etc/group"
mkdir -p "$fs/home/node" && chown 1000:1000 "$fs/home/node"
tar -C "$fs" -cf "$work/base.tar" .
docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' "$work/base.tar" "$tag" >/dev/null
echo "build-node-base: built $tag" >&2
