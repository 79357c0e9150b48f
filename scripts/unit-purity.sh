#!/usr/bin/env bash
# test/unit must stay pure (README, Contributing): no sockets, no child tools, nothing outside the
# repository. This runs it where none of those exist: an empty network namespace (not even a
# loopback that is up), ../shared hidden behind an empty directory and openssl replaced by nothing.
# A unit test that reaches for any of them fails here. Needs root (unshare); without it, the unit
# tests run as they are. `make test` runs it, then every other suite.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
node="$("$root/scripts/node24.sh")"
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "unit-purity: needs root and unshare (util-linux) to hide the network, ../shared and openssl" >&2
    exit 1
  fi
  echo "unit-purity: cannot isolate without root and unshare; running test/unit as it is" >&2
  exec "$node" "$root/node_modules/jest/bin/jest.js" --ci --rootDir "$root" test/unit
fi
empty="$(mktemp -d)"
trap 'rmdir "$empty"' EXIT
shared="$(cd "$root/.." && pwd)/shared"
openssl="$(command -v openssl || true)"
unshare --mount --net -- sh -ec '
  if [ -d "$1" ]; then mount --bind "$2" "$1"; fi
  if [ -n "$3" ]; then mount --bind /dev/null "$3"; fi
  cd "$4"
  exec "$5" node_modules/jest/bin/jest.js --ci test/unit
' unit-purity "$shared" "$empty" "$openssl" "$root" "$node"
