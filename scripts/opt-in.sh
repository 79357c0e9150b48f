#!/usr/bin/env bash
# The opt-in suite, test/real/: tests against real binaries that the project cannot install (no
# registry it may use packages them): real Fabric peers and orderers (test/real/fabric,
# test/real/compat) and Helm (test/real/chart). Each part runs where its binaries are named:
#   Fabric: FABRIC_HOMES (release folders with bin/peer, bin/orderer, sampleconfig/), else
#           FABRIC_HOME, else peer on the PATH;
#   Helm:   HELM, else helm on the PATH.
# A part whose binaries are missing does not run and prints one loud line saying so: it is never
# counted as passed. `make test` calls this without --required (CI has neither); `make test-real`
# with --required, and then a missing binary fails the run.
#
# Usage: NODE=/path/to/node scripts/opt-in.sh [--required]
set -euo pipefail
cd "$(dirname "$0")/.."
required=false
[ "${1:-}" = --required ] && required=true
node="${NODE:-node}"

fabric=""
if [ -n "${FABRIC_HOMES:-}" ]; then fabric="FABRIC_HOMES=$FABRIC_HOMES"
elif [ -n "${FABRIC_HOME:-}" ]; then fabric="FABRIC_HOME=$FABRIC_HOME"
elif command -v peer >/dev/null 2>&1; then fabric="peer on the PATH ($(command -v peer))"
fi
helm_bin="${HELM:-$(command -v helm 2>/dev/null || true)}"

paths=()
missing=()
if [ -n "$fabric" ]; then
  echo "opt-in: real Fabric from $fabric: running test/real/fabric and test/real/compat"
  for dir in test/real/fabric test/real/compat; do [ -d "$dir" ] && paths+=("$dir"); done
else
  missing+=("test/real/fabric and test/real/compat need real Fabric binaries: set FABRIC_HOMES (release folders) or put peer on the PATH")
fi
if [ -n "$helm_bin" ]; then
  echo "opt-in: helm from ${helm_bin}: running test/real/chart"
  [ -d test/real/chart ] && paths+=(test/real/chart)
else
  missing+=("test/real/chart needs helm: set HELM=/path/to/helm or put helm on the PATH")
fi

for reason in "${missing[@]}"; do
  echo "!!! OPT-IN SUITE NOT RUN, NOT COUNTED AS PASSED: $reason (make test-real)"
done

status=0
if [ ${#paths[@]} -gt 0 ]; then
  "$node" node_modules/jest/bin/jest.js --ci "${paths[@]}" || status=$?
fi
if [ "$required" = true ] && [ ${#missing[@]} -gt 0 ]; then
  echo "make test-real: the opt-in suite could not run in full (see the lines above)" >&2
  exit 1
fi
exit "$status"
