# fabric-ops container image. `docker build .` works anywhere a registry is reachable (on a git
# checkout it bakes HEAD's commit into /version); `make image` passes the version, commit and date
# (and, on a machine without an image registry, a local base).
#
#   NODE_IMAGE           Node.js >= 22.22 image with npm, for the build and the runtime stages
#   NPM_CONFIG_REGISTRY  npm registry the build installs from
#   VERSION, GIT_COMMIT, BUILD_DATE, SOURCE_URL  OCI labels; GIT_COMMIT is also what /version answers
#
# The process runs as UID:GID 10001:10001 (no passwd entry needed), reads nothing but its own files
# and the configuration, so it runs with a read-only root filesystem, and handles SIGTERM itself as
# PID 1 (exit status 0 after a clean stop).
ARG NODE_IMAGE=node:24-bookworm-slim

# All dependencies, from the lock (docker/npm-ci.sh: `npm ci`, see there for its one fallback).
FROM ${NODE_IMAGE} AS deps
ARG NPM_CONFIG_REGISTRY=https://registry.npmjs.org/
WORKDIR /build
COPY package.json package-lock.json docker/npm-ci.sh ./
RUN sh npm-ci.sh

# Production dependencies only, installed from the same lock, then trimmed to what the bundled
# command loads from node_modules (scripts/image-prune.js: the packages scripts/bundle.js leaves
# outside the bundle and their dependencies; no type declarations, maps or docs). A separate
# install rather than `npm prune` in a later layer: pruning renames hundreds of directories of a
# lower layer, which overlayfs turns into copies (45 s).
FROM ${NODE_IMAGE} AS prod-deps
ARG NPM_CONFIG_REGISTRY=https://registry.npmjs.org/
WORKDIR /build
COPY package.json package-lock.json docker/npm-ci.sh ./
RUN sh npm-ci.sh --omit=dev
COPY scripts/image-prune.js scripts/bundle.js scripts/
RUN node scripts/image-prune.js node_modules

# dist/ compiled with the dev dependencies (tsc for the library, esbuild for the command's bundle).
# The commit baked into dist/build-info.json: GIT_COMMIT when given, else HEAD as the checkout's
# .git names it (.dockerignore lets HEAD and the refs in; `package.json` only keeps the COPY valid
# where there is no .git).
FROM deps AS build
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-assets.js scripts/bundle.js scripts/
COPY src src
COPY package.json .gi[t] /build/git/
ARG GIT_COMMIT=unknown
RUN FABRIC_OPS_COMMIT="${GIT_COMMIT}" FABRIC_OPS_GIT_DIR=/build/git npm run build

# The runtime: node, the command (dist/cli.js and its bundle dist/cli-command.js), the Kubernetes client's bundle, the CRI proto, the
# build info, package.json (version, engines) and the trimmed node_modules.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    FABRIC_CFG_PATH=/etc/hyperledger/fabric
WORKDIR /opt/fabric-ops
COPY --from=prod-deps /build/node_modules ./node_modules
COPY package.json LICENSE ./
# The bundles' third-party licence notices (esbuild legalComments: 'linked') ship beside them.
COPY --from=build /build/dist/cli.js /build/dist/cli-command.js /build/dist/cli-command.js.LEGAL.txt /build/dist/kubernetes-client.mjs /build/dist/kubernetes-client.mjs.LEGAL.txt /build/dist/build-info.json ./dist/
COPY --from=build /build/dist/health/cri.proto ./dist/health/
COPY docker/core.yaml /etc/hyperledger/fabric/core.yaml
USER 10001:10001
EXPOSE 9443
STOPSIGNAL SIGTERM
# --disable-sigusr1: a SIGUSR1 (from anything in the pod's PID or network namespace) must not open
# the V8 inspector; an inspector that NODE_OPTIONS would open is refused at start (README, "The
# command": how to debug on purpose).
ENTRYPOINT ["node", "--disable-sigusr1", "/opt/fabric-ops/dist/cli.js"]
ARG VERSION=unknown
ARG GIT_COMMIT=unknown
ARG BUILD_DATE=unknown
ARG SOURCE_URL=unknown
LABEL org.opencontainers.image.title="fabric-ops" \
      org.opencontainers.image.description="Operations service for Hyperledger Fabric peers and orderers: log levels, health, metrics and version over mutual TLS" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${GIT_COMMIT}" \
      org.opencontainers.image.created="${BUILD_DATE}" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="Apache-2.0"
