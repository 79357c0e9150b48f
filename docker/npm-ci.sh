#!/bin/sh
# `npm ci "$@"` for the image build. A lock written against a registry that lacks other platforms'
# optional binaries (see the Makefile) is refused by `npm ci` ("Missing: ... from lock file"); only
# then are the same locked versions installed with `npm install --no-save`. Any other failure fails.
set -eu
if npm ci --no-audit --no-fund "$@" 2>/tmp/npm-ci.log; then exit 0; fi
if grep -q 'from lock file' /tmp/npm-ci.log; then
  echo "npm ci refused the lock (other platforms' optional binaries are missing from it): npm install --no-save" >&2
  exec npm install --no-save --no-audit --no-fund "$@"
fi
cat /tmp/npm-ci.log >&2
exit 1
