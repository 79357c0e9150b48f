#!/usr/bin/env bash
# The images docker-compose.yml uses besides fabric-ops, built locally for machines without an
# image registry (`make compose-images`; real users let compose build statsd and pull prom/prometheus):
#   fabric-ops/compose-statsd:local  deploy/compose/statsd on $NODE_IMAGE (npm reached via the host network)
#   fabric-ops/prometheus:local      Debian's /usr/bin/prometheus on the local base
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
base="${NODE_IMAGE:-fabric-ops/node-base:24}"
if [ "$base" = fabric-ops/node-base:24 ]; then "$root/scripts/build-node-base.sh" "$base"; fi
registry="$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)"
export DOCKER_BUILDKIT=0
docker build -q --network host --build-arg NODE_IMAGE="$base" --build-arg NPM_CONFIG_REGISTRY="$registry" \
  -t fabric-ops/compose-statsd:local "$root/deploy/compose/statsd" >/dev/null
echo "build-compose-images: built fabric-ops/compose-statsd:local" >&2

prometheus="$(command -v prometheus || true)"
[ -n "$prometheus" ] || { echo "build-compose-images: no prometheus binary (Debian: apt-get install prometheus)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -L "$prometheus" "$work/prometheus"
mkdir "$work/data"
cp "$root/deploy/compose/prometheus/Dockerfile.local" "$work/Dockerfile"
docker build -q --build-arg BASE_IMAGE=fabric-ops/node-base:24 -t fabric-ops/prometheus:local "$work" >/dev/null
echo "build-compose-images: built fabric-ops/prometheus:local ($("$prometheus" --version 2>&1 | head -1))" >&2
