#!/usr/bin/env bash
# Stops the private Docker engine that engine-up.sh started (the dockerd whose PID is in
# LIMBO_DOCKER_DIR/dockerd.pid — no other process), then unmounts what it left under
# LIMBO_DOCKER_DIR. Its containers are removed first. Idempotent.
#
#   scripts/docker/engine-down.sh            # keep images (the next engine-up reuses them)
#   scripts/docker/engine-down.sh --purge    # also delete LIMBO_DOCKER_DIR (images, cache)
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
STOP_TIMEOUT_S=${LIMBO_DOCKER_STOP_TIMEOUT_S:-30}
purge=0
[[ "${1:-}" == --purge ]] && purge=1

# Mount points at or below our state dir, deepest first.
our_mounts() {
  awk -v root="$LIMBO_DOCKER_DIR" '$2 == root || index($2, root "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

if pid=$(engine_pid); then
  if engine_answers; then
    ids=$(docker -H "unix://$LIMBO_DOCKER_SOCK" ps -aq) || ids=""
    if [[ -n "$ids" ]]; then
      log "removing $(wc -w <<<"$ids") container(s)"
      # shellcheck disable=SC2086
      docker -H "unix://$LIMBO_DOCKER_SOCK" rm -f $ids >/dev/null || true
    fi
  fi
  log "stopping dockerd $pid"
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + STOP_TIMEOUT_S))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      log "dockerd $pid did not stop within ${STOP_TIMEOUT_S}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      break
    fi
    sleep 0.2
  done
else
  log "no engine running for $LIMBO_DOCKER_DIR"
fi
# The containerd that dockerd supervised exits with it; one left by a killed dockerd is
# found by its config under our exec root (its command line names it), and only that one.
for p in $(pgrep -x containerd || true); do
  if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$LIMBO_DOCKER_DIR/exec/"; then
    log "stopping containerd $p left by dockerd"
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
  fi
done
rm -f "$LIMBO_DOCKER_PIDFILE" "$LIMBO_DOCKER_SOCK"

for m in $(our_mounts); do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
done
if [[ $purge -eq 1 ]]; then
  if [[ -n "$(our_mounts)" ]]; then
    die "mounts remain under $LIMBO_DOCKER_DIR; not deleting it"
  fi
  log "deleting $LIMBO_DOCKER_DIR"
  rm -rf "$LIMBO_DOCKER_DIR"
fi
log "engine down"
