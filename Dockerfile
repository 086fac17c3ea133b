# The services image: every role of the reference cluster, run as `limbo serve <role>`.
#
#   docker build -t limbo/services:local .                       # on the official Node 20 image
#   docker build --build-arg BASE_IMAGE=limbo/node-base:local \
#     --network host -t limbo/services:local .                   # no registry: scripts/docker/
#   docker run --network host limbo/services:local serve log --port 0 --data-dir /tmp/log
#
# Stages: manifests (package files without what the services never load) → build (tsc,
# with dev dependencies) and deps (production dependencies only) → the runtime image.
# The base image needs nothing but node, npm and /bin/sh, so an image `docker import`-ed
# from the host's node binary works as well as the official one.
ARG BASE_IMAGE=node:20-bookworm-slim

# The Restate server and restatectl binaries (~240 MB) serve the `restate` target, which
# runs on the testbed's machine, and are never downloaded here. testcontainers (starts
# containers) and esbuild (loads chaos suites written in TypeScript) are compiled against but
# not installed in the runtime image: `limbo serve` loads none of them.
FROM ${BASE_IMAGE} AS manifests
COPY scripts/docker/prune-manifest.mjs /tmp/prune-manifest.mjs
WORKDIR /app/build
COPY package.json package-lock.json ./
RUN node /tmp/prune-manifest.mjs @restatedev/restate-server @restatedev/restate-server-linux-x64 \
      @restatedev/restatectl @restatedev/restatectl-linux-x64
WORKDIR /app/run
COPY package.json package-lock.json ./
RUN node /tmp/prune-manifest.mjs @restatedev/restate-server @restatedev/restate-server-linux-x64 \
      @restatedev/restatectl @restatedev/restatectl-linux-x64 testcontainers esbuild

FROM ${BASE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /app/build/package.json /app/build/package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

FROM ${BASE_IMAGE} AS deps
WORKDIR /app
COPY --from=manifests /app/run/package.json /app/run/package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${BASE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY --from=manifests /app/run/package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY bin ./bin
# The .proto files are read at run time from src/ (beside the compiled dist/src).
COPY src ./src
COPY --from=build /app/dist/src ./dist/src
USER node
ENTRYPOINT ["node", "/app/bin/limbo.js"]
CMD ["serve", "--help"]
