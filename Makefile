# The two commands of the README: `make run` and `make test`.
NODE := $(shell scripts/node24.sh)
# Base image for `make image`; real users: make image NODE_IMAGE=node:24-bookworm-slim
NODE_IMAGE ?= fabric-ops/node-base:24

.PHONY: run test build deps prereqs bench image clean

# `npm install --no-save` rather than `npm ci`: it installs the locked versions but, unlike
# `npm ci`, tolerates a registry that lacks other platforms' optional binaries (unrs-resolver's).
node_modules/.package-lock.json: package.json package-lock.json
	npm install --no-save --no-audit --no-fund

deps: node_modules/.package-lock.json

build: deps
	npm run --silent build

run: build
	$(NODE) dist/cli.js $(ARGS)

prereqs:
	scripts/test-prereqs.sh
	scripts/build-node-base.sh

test: build prereqs
	$(NODE) node_modules/jest/bin/jest.js --ci

# Benchmarks print figures; they assert nothing. Compiled with the tests' tsconfig into .tmp/bench-build.
bench: deps prereqs
	node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build
	cp src/health/cri.proto .tmp/bench-build/src/health/
	$(NODE) .tmp/bench-build/bench/metrics.js
	$(NODE) .tmp/bench-build/bench/health.js

image: build
	rm -rf .image && mkdir -p .image && cp package.json package-lock.json .image/
	cd .image && npm install --no-save --omit=dev --no-audit --no-fund --ignore-scripts
	scripts/build-node-base.sh
	DOCKER_BUILDKIT=0 docker build --network host --build-arg NODE_IMAGE=$(NODE_IMAGE) -t fabric-ops:latest .

clean:
	rm -rf dist .tools .image
