#!/usr/bin/env bash
# Starts a private Docker engine for limbo on a machine that has none running and no
# registry (docs/architecture.md#runtimes): Debian's docker.io, dockerd without iptables or a bridge
# (only host networking), with its own data root, exec root, pidfile and API socket under
# LIMBO_DOCKER_DIR (default /tmp/limbo-docker). Idempotent: an engine already answering
# on that socket is reused. Prints the DOCKER_HOST line for the caller to export.
#
#   LIMBO_DOCKER_DIR=/tmp/limbo-docker scripts/docker/engine-up.sh
#   export DOCKER_HOST=unix:///tmp/limbo-docker/docker.sock
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
START_TIMEOUT_S=${LIMBO_DOCKER_START_TIMEOUT_S:-60}

install_engine() {
  command -v dockerd >/dev/null 2>&1 && command -v containerd >/dev/null 2>&1 && return 0
  [[ $(id -u) -eq 0 ]] || die "dockerd is not installed and installing docker.io needs root"
  log "installing Debian's docker.io"
  export DEBIAN_FRONTEND=noninteractive
  # Keep the package scripts from starting the system's docker and containerd services:
  # the only engine we want is the private one below.
  local policy=/usr/sbin/policy-rc.d added_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    added_policy=1
  fi
  local rc=0
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends docker.io >/dev/null; } || rc=$?
  [[ $added_policy -eq 1 ]] && rm -f "$policy"
  [[ $rc -eq 0 ]] || die "apt-get install docker.io failed ($rc)"
}

main() {
  mkdir -p "$LIMBO_DOCKER_DIR"
  if engine_answers; then
    log "engine already up on unix://$LIMBO_DOCKER_SOCK"
    echo "export DOCKER_HOST=unix://$LIMBO_DOCKER_SOCK"
    return 0
  fi
  install_engine
  command -v docker >/dev/null 2>&1 || die "no docker client on PATH"
  local pid
  if pid=$(engine_pid); then
    log "dockerd $pid is starting; waiting for its socket"
  else
    rm -f "$LIMBO_DOCKER_PIDFILE" "$LIMBO_DOCKER_SOCK"
    log "starting dockerd (state in $LIMBO_DOCKER_DIR, log $LIMBO_DOCKER_LOG)"
    # setsid + nohup: the engine outlives this script; engine-down.sh stops it by its PID.
    setsid nohup dockerd \
      --iptables=false --ip6tables=false --bridge=none --ip-forward=false --ip-masq=false \
      --data-root "$LIMBO_DOCKER_DIR/data" \
      --exec-root "$LIMBO_DOCKER_DIR/exec" \
      --pidfile "$LIMBO_DOCKER_PIDFILE" \
      --host "unix://$LIMBO_DOCKER_SOCK" \
      >>"$LIMBO_DOCKER_LOG" 2>&1 </dev/null &
    pid=$!
  fi
  local deadline=$((SECONDS + START_TIMEOUT_S))
  until engine_answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$LIMBO_DOCKER_LOG" >&2 || true
      die "dockerd exited before it answered (log: $LIMBO_DOCKER_LOG)"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 30 "$LIMBO_DOCKER_LOG" >&2 || true
      die "dockerd did not answer on $LIMBO_DOCKER_SOCK within ${START_TIMEOUT_S}s (still running as $pid; stop it with engine-down.sh)"
    fi
    sleep 0.2
  done
  log "engine up: dockerd $pid, $(docker -H "unix://$LIMBO_DOCKER_SOCK" version --format 'server {{.Server.Version}}, storage' 2>/dev/null) $(docker -H "unix://$LIMBO_DOCKER_SOCK" info --format '{{.Driver}}' 2>/dev/null)"
  echo "export DOCKER_HOST=unix://$LIMBO_DOCKER_SOCK"
}

main "$@"
