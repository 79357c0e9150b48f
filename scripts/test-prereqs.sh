#!/usr/bin/env bash
# Installs and starts what the integration tests talk to, so that `make test` works on a
# fresh Debian machine: Docker engine (with containerd), docker-compose, Prometheus and promtool, openssl.
# Idempotent: does nothing for what is already there.
set -euo pipefail
say() { echo "test-prereqs: $*" >&2; }

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
    say "missing ${missing[*]}; install them (Debian: apt-get install ${missing[*]})"
    exit 1
  fi
  say "installing ${missing[*]} (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  say "starting dockerd"
  mkdir -p /var/log
  nohup dockerd --bridge=none --iptables=false >/var/log/fabric-ops-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || { say "dockerd did not come up; see /var/log/fabric-ops-dockerd.log"; exit 1; }
fi
say "docker, containerd, docker-compose, prometheus, promtool and openssl are ready"
