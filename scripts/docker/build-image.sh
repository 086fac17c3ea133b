#!/usr/bin/env bash
# Builds the services image (the repository's Dockerfile) on the local base image, with
# host networking so `npm ci` inside the build reaches the registry (the engine has no
# bridge). Uses the classic builder: Debian's engine has no buildx.
#
#   scripts/docker/build-image.sh          # → limbo/services:local (LIMBO_SERVICES_IMAGE)
#   LIMBO_BASE_IMAGE=node:20-bookworm-slim scripts/docker/build-image.sh   # with a registry
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)

if [[ "$LIMBO_BASE_IMAGE" == limbo/node-base:* ]] && ! docker image inspect "$LIMBO_BASE_IMAGE" >/dev/null 2>&1; then
  "$(dirname "$0")/base-image.sh"
fi
log "building $LIMBO_SERVICES_IMAGE on $LIMBO_BASE_IMAGE"
DOCKER_BUILDKIT=0 docker build --network host \
  --build-arg "BASE_IMAGE=$LIMBO_BASE_IMAGE" \
  --label "org.limbo.base-image=$LIMBO_BASE_IMAGE" \
  -t "$LIMBO_SERVICES_IMAGE" "$repo" >&2
# The classic builder keeps each stage's layers as untagged images: they are the cache of
# the next build (npm ci is skipped while the package files are unchanged). Drop only
# those older than LIMBO_DOCKER_CACHE_HOURS so rebuilds do not pile up on a shared disk;
# engine-down.sh --purge removes everything.
docker image prune -f --filter "until=${LIMBO_DOCKER_CACHE_HOURS:-6}h" >/dev/null 2>&1 || true
docker image ls "$LIMBO_SERVICES_IMAGE" >&2
