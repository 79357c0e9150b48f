# fabric-ops container image. `docker build .` works anywhere a registry is reachable; `make image`
# passes the version, commit and date (and, on a machine without an image registry, a local base).
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

# Production dependencies only, installed from the same lock (optional ones kept: bunyan and
# hot-shots use them when present). A separate install rather than `npm prune` in a later layer:
# pruning renames hundreds of directories of a lower layer, which overlayfs turns into copies (45 s).
FROM ${NODE_IMAGE} AS prod-deps
ARG NPM_CONFIG_REGISTRY=https://registry.npmjs.org/
WORKDIR /build
COPY package.json package-lock.json docker/npm-ci.sh ./
RUN sh npm-ci.sh --omit=dev

# dist/ compiled with the dev dependencies; the commit is baked into dist/build-info.json.
FROM deps AS build
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-assets.js scripts/
COPY src src
ARG GIT_COMMIT=unknown
RUN FABRIC_OPS_COMMIT="${GIT_COMMIT}" npm run build

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    FABRIC_CFG_PATH=/etc/hyperledger/fabric
WORKDIR /opt/fabric-ops
COPY --from=prod-deps /build/node_modules ./node_modules
COPY package.json ./
COPY --from=build /build/dist ./dist
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
