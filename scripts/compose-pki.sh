#!/usr/bin/env bash
# Throwaway PKI for docker-compose.yml (default folder deploy/compose/pki, git-ignored):
#   ca.crt                    a dedicated operations CA (never an organisation's CA)
#   server.crt, server.key    fabric-ops's operations server (localhost, 127.0.0.1, ::1)
#   prometheus.crt, .key      the client certificate Prometheus scrapes /metrics with
# ECDSA P-256, 30 days. Keys are mode 0644 so the containers' users (10001, nobody) can read the
# bind mount: throwaway material for a laptop, never for a real node. Kept while the certificates
# are valid for another day; `compose-pki.sh --force [DIR]` makes new ones.
set -euo pipefail
force=0
if [ "${1:-}" = --force ]; then force=1; shift; fi
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/deploy/compose/pki}"
command -v openssl >/dev/null || { echo "compose-pki: openssl is required" >&2; exit 1; }
files=(ca.crt server.crt server.key prometheus.crt prometheus.key)
complete=1
for f in "${files[@]}"; do [ -s "$dir/$f" ] || complete=0; done
if [ "$force" = 0 ] && [ "$complete" = 1 ] \
  && openssl x509 -checkend 86400 -noout -in "$dir/server.crt" >/dev/null \
  && openssl x509 -checkend 86400 -noout -in "$dir/prometheus.crt" >/dev/null; then
  echo "compose-pki: $dir is ready" >&2
  exit 0
fi
mkdir -p "$dir" && chmod 755 "$dir"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
key "$work/ca.key"
openssl req -x509 -new -key "$work/ca.key" -days 30 -subj "/O=fabric-ops compose/CN=fabric-ops compose operations CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$work/ca.crt"
leaf() { # name subject extensions...
  local name="$1" subject="$2"; shift 2
  key "$work/$name.key"
  openssl req -new -key "$work/$name.key" -subj "$subject" -out "$work/$name.csr"
  printf '%s\n' "$@" >"$work/$name.ext"
  openssl x509 -req -in "$work/$name.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 30 \
    -extfile "$work/$name.ext" -out "$work/$name.crt" 2>/dev/null
}
leaf server "/O=fabric-ops compose/CN=localhost" \
  "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" \
  "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"
leaf prometheus "/O=fabric-ops compose/CN=prometheus" \
  "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" "extendedKeyUsage=clientAuth"
for f in "${files[@]}"; do install -m 0644 "$work/$f" "$dir/$f"; done
echo "compose-pki: wrote ${files[*]} to $dir" >&2
