# The two commands of the README: `make run` and `make test`.
NODE := $(shell scripts/node24.sh)

.PHONY: run test build deps prereqs bench clean

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

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

bench: build prereqs
	$(NODE) bench/run-all.js

clean:
	rm -rf dist .tools
