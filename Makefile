# The two commands of the README: `make run` and `make test`.
NODE := $(shell scripts/node24.sh)
# Base image for `make image`; real users: make image NODE_IMAGE=node:24-bookworm-slim
# (the default is the base scripts/build-node-base.sh makes for machines without an image registry).
NODE_IMAGE ?= fabric-ops/node-base:24
IMAGE ?= fabric-ops:latest
# The package version: `make image` also tags fabric-ops:<version>, the Helm chart's default tag,
# unless IMAGE names another image (then only IMAGE is tagged).
VERSION := $(shell sed -n 's/^  "version": "\(.*\)",$$/\1/p' package.json)
VERSION_TAG := $(if $(filter fabric-ops:latest,$(IMAGE)),-t fabric-ops:$(VERSION))
# What /version answers in the image (and its org.opencontainers.image.revision label).
GIT_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)

.PHONY: run test compat compat-record build deps prereqs bench bench-prereqs image compose-pki compose-images compose-up clean docs

# npm runs under the project's Node (its `#!/usr/bin/env node` and the scripts it starts find it
# first on the PATH), not under an older `node` of the machine: no EBADENGINE warnings, one runtime.
NPM := PATH="$(dir $(NODE)):$$PATH" npm

# `npm install --no-save` rather than `npm ci`: it installs the locked versions but, unlike
# `npm ci`, tolerates a registry that lacks other platforms' optional binaries (unrs-resolver's).
node_modules/.package-lock.json: package.json package-lock.json
	$(NPM) install --no-save --no-audit --no-fund

deps: node_modules/.package-lock.json

# tsc runs only when an input changed (and then incrementally: dist/.tsbuildinfo); the commit is
# written into dist/build-info.json at every build, which costs one short node start.
BUILD_INPUTS := $(shell find src -type f 2>/dev/null) package.json tsconfig.json tsconfig.build.json scripts/copy-assets.js scripts/bundle.js
dist/.built: $(BUILD_INPUTS) | deps
	$(NPM) run --silent build
	touch $@

build: dist/.built
	$(NODE) scripts/copy-assets.js

# `make run` needs the command's bundle only (esbuild, under a second), not tsc's library output.
dist/.bundled: $(BUILD_INPUTS) | deps
	$(NODE) scripts/bundle.js
	touch $@

run: dist/.bundled
	$(NODE) scripts/copy-assets.js
	$(NODE) --disable-sigusr1 dist/cli.js $(ARGS)

prereqs:
	scripts/test-prereqs.sh
	scripts/build-node-base.sh

# Every suite but the unit tests (run apart by unit-purity.sh) and the opt-in suite test/real/, which
# needs real Fabric or Helm binaries: scripts/opt-in.sh runs the parts whose binaries are named
# (FABRIC_HOMES, HELM, or on the PATH) and prints one loud line for each part it could not run.
# The compat replay (test/compat/replay.test.ts) says itself when it has no recording; the line is
# printed again at the end, where it is seen.
test: lint build prereqs
	scripts/unit-purity.sh
	status=0; $(NODE) node_modules/jest/bin/jest.js --ci --testPathIgnorePatterns /test/unit/ /test/real/ || status=$$?; \
	  NODE=$(NODE) scripts/opt-in.sh || status=$$?; \
	  ls test/compat/recorded/fabric-*.json ../shared/fixtures/compat-recorded/fabric-*.json >/dev/null 2>&1 || \
	  echo '!!! COMPAT REPLAY HAS NO RECORDING: looked in test/compat/recorded/ and ../shared/fixtures/compat-recorded/; make one with make compat-record FABRIC_HOMES="<Fabric release folders>"'; \
	  exit $$status

# The opt-in suite alone (test/real/); a part whose binaries are missing fails the run.
.PHONY: test-real
test-real: deps build prereqs
	NODE=$(NODE) scripts/opt-in.sh --required

# The contributor's fast loop, on the project's Node: lint, typecheck and the unit tests with coverage
# (npm test); no root, no daemons, no network, no ../shared.
.PHONY: check
check: deps
	$(NPM) test

# ESLint (eslint.config.mjs: typescript-eslint's type-checked rules over src, test, bench, scripts
# and examples) and Prettier (.prettierrc.json, .prettierignore). `make fix` applies their fixes.
.PHONY: lint fix
lint: deps
	$(NODE) node_modules/eslint/bin/eslint.js .
	$(NODE) node_modules/prettier/bin/prettier.cjs --check .

fix: deps
	$(NODE) node_modules/eslint/bin/eslint.js --fix .
	$(NODE) node_modules/prettier/bin/prettier.cjs --write --log-level warn .

# The differential suite, live (test/real/compat, part of the opt-in suite): the real peer and orderer
# of every release in FABRIC_HOMES (else FABRIC_HOME, else peer on the PATH; the project ships none)
# against fabric-ops on the same configuration; rewrites the deviation table of docs/reference/deviations.md.
compat: deps build prereqs
	COMPAT_WRITE=1 FABRIC_HOMES="$(FABRIC_HOMES)" $(NODE) node_modules/jest/bin/jest.js --ci test/real/compat

# The same, recording each release's answers in $(COMPAT_RECORD)/fabric-<version>.json; then the
# replay (which make test runs) renders docs/compatibility.md from the recordings.
COMPAT_RECORD ?= test/compat/recorded
compat-record: deps build prereqs
	COMPAT_RECORD="$(COMPAT_RECORD)" COMPAT_WRITE=1 FABRIC_HOMES="$(FABRIC_HOMES)" $(NODE) node_modules/jest/bin/jest.js --ci test/real/compat
	COMPAT_WRITE=1 $(NODE) node_modules/jest/bin/jest.js --ci test/compat/replay.test.ts

# The generated parts of docs/ from the code (the configuration, metrics and command references,
# docs/companion.md's metrics table, docs/reference/api.md from the library's types); see
# scripts/gendocs.ts. test/unit/docs/ fails when a page is not what this writes.
docs: deps
	node_modules/.bin/tsc -p scripts/gendocs.tsconfig.json
	$(NODE) .tmp/docs-build/scripts/gendocs.js .

# Benchmarks print figures; they assert nothing. Compiled with the tests' tsconfig into .tmp/bench-build.
# bench/http.ts runs the compiled command (dist/) beside Go net/http + client_golang (bench/go),
# bare node:http(s) and express 5, loaded by
# wrk (Debian package; installed here when missing); BENCH_ARGS="--rounds 5 --seconds 5" for more.
# bench/fleet.ts: 500 simulated HTTPS nodes (one hung) behind /fleet/healthz, with --expose-gc for
# its heap figures; FLEET_BENCH_ARGS="--rounds 100" (or --nodes, --timeout, --concurrency) for more.
bench: build prereqs bench-prereqs
	node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build
	cp src/health/cri.proto .tmp/bench-build/src/health/
	$(NODE) .tmp/bench-build/bench/metrics.js
	$(NODE) .tmp/bench-build/bench/health.js
	$(NODE) .tmp/bench-build/bench/http-hardening.js
	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$(CURDIR)/.tmp/go-cache GOFLAGS= go build -o .tmp/bench-build/go-ops-server ./bench/go
	$(NODE) .tmp/bench-build/bench/http.js $(BENCH_ARGS)
	$(NODE) .tmp/bench-build/bench/companion.js $(COMPANION_BENCH_ARGS)
	$(NODE) --expose-gc .tmp/bench-build/bench/fleet.js $(FLEET_BENCH_ARGS)
	$(NODE) --expose-gc .tmp/bench-build/bench/fleet-channels.js $(FLEET_BENCH_ARGS)

# wrk, and Go with client_golang for bench/go (Fabric's stack), from Debian: built offline in GOPATH mode.
bench-prereqs:
	command -v wrk >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null; }
	{ command -v go >/dev/null 2>&1 && [ -d /usr/share/gocode/src/github.com/prometheus/client_golang ]; } || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-go golang-github-prometheus-client-golang-dev >/dev/null; }
	command -v taskset >/dev/null 2>&1 || { echo "bench: taskset (util-linux) is missing" >&2; exit 1; }

# The container image (Dockerfile: npm ci and tsc inside the build). The legacy builder and the
# host network: it works where BuildKit is missing and npm reaches the registry only from the host.
image:
	if [ "$(NODE_IMAGE)" = fabric-ops/node-base:24 ]; then scripts/build-node-base.sh; fi
	DOCKER_BUILDKIT=0 docker build --network host \
	  --build-arg NODE_IMAGE=$(NODE_IMAGE) \
	  --build-arg NPM_CONFIG_REGISTRY="$$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)" \
	  --build-arg VERSION=$(VERSION) \
	  --build-arg GIT_COMMIT=$(GIT_COMMIT) \
	  --build-arg BUILD_DATE="$$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	  --build-arg SOURCE_URL="$$(git remote get-url origin 2>/dev/null || echo unknown)" \
	  -t $(IMAGE) $(VERSION_TAG) .

# docker-compose.yml: its throwaway PKI, the local images it needs without a registry, and `up`.
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo 'docker compose' || echo docker-compose)
compose-pki:
	scripts/compose-pki.sh

compose-images: image
	scripts/build-compose-images.sh

compose-up: compose-pki compose-images
	FABRIC_OPS_IMAGE=$(IMAGE) NODE_IMAGE=$(NODE_IMAGE) PROMETHEUS_IMAGE=fabric-ops/prometheus:local $(COMPOSE) up

clean:
	rm -rf dist .tools .image

# The Helm chart: copy deploy/'s alert rules into it, check the values docs, lint, package into
# .tmp/chart. HELM: $HELM, else helm on the PATH (the project has no helm of its own); with
# neither, the recipe stops and says how to get Helm.
.PHONY: chart
HELM ?= $(shell command -v helm 2>/dev/null)
chart:
	@[ -n "$(HELM)" ] && command -v "$(HELM)" >/dev/null 2>&1 || { \
	  echo "make chart: no helm: not on the PATH and HELM is not set." >&2; \
	  echo "  Install Helm 3 (https://helm.sh/docs/intro/install/: a release archive's linux-amd64/helm on your PATH, or your package manager)," >&2; \
	  echo "  or name one: make chart HELM=/path/to/helm" >&2; exit 1; }
	scripts/chart-sync-rules.sh
	$(NODE) scripts/chart-docs.js --check
	$(HELM) lint --strict charts/fabric-ops
	$(HELM) package charts/fabric-ops --destination .tmp/chart
