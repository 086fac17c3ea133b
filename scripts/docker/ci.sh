#!/usr/bin/env bash
# Proves the docker runtime on a machine with no running engine and no registry
# (shared/DESIGN.md §4), as CI does: a private engine up, the Node base image imported from
# the host's node, the services image built on it, the docker tests run against them with
# LIMBO_DOCKER_REQUIRED=1 (a missing engine or image fails instead of skipping), and the
# engine down again whatever happens (trap), its state dir deleted unless LIMBO_DOCKER_KEEP=1.
# Prints the wall time of each step.
#
#   bash scripts/docker/ci.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export LIMBO_DOCKER_DIR=${LIMBO_DOCKER_DIR:-/tmp/limbo-docker-ci}
export DOCKER_HOST="unix://$LIMBO_DOCKER_DIR/docker.sock"
# shellcheck source=common.sh
source scripts/docker/common.sh

down() {
  local rc=$?
  if [[ "${LIMBO_DOCKER_KEEP:-0}" == 1 ]]; then
    scripts/docker/engine-down.sh || true
  else
    scripts/docker/engine-down.sh --purge || true
  fi
  exit "$rc"
}
trap down EXIT

step() {
  local name=$1 start=$SECONDS
  shift
  log "$name"
  "$@"
  log "$name: $((SECONDS - start)) s"
}

step "engine up" scripts/docker/engine-up.sh >/dev/null
step "base image" scripts/docker/base-image.sh
step "services image" scripts/docker/build-image.sh
step "compile" npx tsc -p tsconfig.json
step "docker tests" env LIMBO_DOCKER_REQUIRED=1 node --test --test-concurrency=2 --test-timeout=300000 dist/test/docker/
