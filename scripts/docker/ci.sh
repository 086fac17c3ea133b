#!/usr/bin/env bash
# Proves the docker runtime on a machine with no running engine and no registry
# (docs/architecture.md#runtimes), as CI does: a private engine up, the Node base image imported from
# the host's node, the services image built on it, the docker tests run against them with
# LIMBO_DOCKER_REQUIRED=1 (a missing engine or image fails instead of skipping), the
# Toxiproxy acceptance suite run against `limbo proxy` inside a container, and the engine
# down again whatever happens (trap), its state dir deleted unless LIMBO_DOCKER_KEEP=1.
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
step "prometheus image (from the host binary, for limbo up --runtime docker)" scripts/docker/prometheus-image.sh
step "etcd image (from the host binary, for the declared etcd target on --runtime docker)" scripts/docker/etcd-image.sh
step "compile" npx tsc -p tsconfig.json
step "docker tests" env LIMBO_DOCKER_REQUIRED=1 node --test --test-concurrency=2 --test-timeout=300000 dist/test/e2e-docker/*.test.js
step "chaos suites on --runtime docker, verdicts as local" bash scripts/ci/docker-suites.sh

# The Toxiproxy acceptance suite (test/proxy/) against `limbo proxy` inside a container.
proxy_acceptance() {
  local cid line="" url deadline=$((SECONDS + 30))
  cid=$(docker run -d --network host --label org.limbo.run=ci-proxy "$LIMBO_SERVICES_IMAGE" proxy --port 0)
  # shellcheck disable=SC2064
  trap "docker rm -f $cid >/dev/null 2>&1 || true; down" EXIT
  until line=$(docker logs "$cid" 2>/dev/null | grep -m1 '^limbo-ready ') && [[ -n "$line" ]]; do
    ((SECONDS < deadline)) || die "limbo proxy container not ready in 30 s: $(docker logs "$cid" 2>&1 | tail -5)"
    sleep 0.2
  done
  url=$(sed -E 's/.*"api":"([^"]+)".*/\1/' <<<"$line")
  log "proxy container ${cid:0:12} serves the Toxiproxy API on $url"
  LIMBO_TOXIPROXY_URL=$url node --test --test-concurrency=2 --test-timeout=300000 dist/test/proxy/*.test.js
  docker rm -f "$cid" >/dev/null
  trap down EXIT
}
step "proxy acceptance suite against a container" proxy_acceptance
