# fabric-ops container. Build with `make image`, which compiles dist/ and installs the production
# dependencies into .image/node_modules first. NODE_IMAGE is any Node.js >= 22.22 image; the default
# is the official one, `make image` on a machine without a registry passes a locally built base.
ARG NODE_IMAGE=node:24-bookworm-slim
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /opt/fabric-ops
COPY package.json ./
COPY .image/node_modules ./node_modules
COPY dist ./dist
USER 1000:1000
EXPOSE 9443
ENTRYPOINT ["node", "/opt/fabric-ops/dist/cli.js"]
