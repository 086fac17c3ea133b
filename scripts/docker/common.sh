# Shared settings of scripts/docker/*.sh (sourced, not run).
#
# One private Docker engine per state dir: its data, exec root, pidfile, log and API socket
# all live under LIMBO_DOCKER_DIR, so it never meets a system engine or another agent's.
# Keep the path short: containerd puts unix sockets under the exec root (108-byte limit).
LIMBO_DOCKER_DIR=${LIMBO_DOCKER_DIR:-/tmp/limbo-docker}
LIMBO_DOCKER_SOCK="$LIMBO_DOCKER_DIR/docker.sock"
LIMBO_DOCKER_PIDFILE="$LIMBO_DOCKER_DIR/dockerd.pid"
LIMBO_DOCKER_LOG="$LIMBO_DOCKER_DIR/dockerd.log"
LIMBO_BASE_IMAGE=${LIMBO_BASE_IMAGE:-limbo/node-base:local}
LIMBO_SERVICES_IMAGE=${LIMBO_SERVICES_IMAGE:-limbo/services:local}

log() { printf '== %s\n' "$*" >&2; }
die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# The PID in our pidfile, if that process is alive and is a dockerd.
engine_pid() {
  local pid
  [[ -f "$LIMBO_DOCKER_PIDFILE" ]] || return 1
  pid=$(cat "$LIMBO_DOCKER_PIDFILE" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == dockerd ]] || return 1
  echo "$pid"
}

# True when our engine answers on its socket.
engine_answers() {
  [[ -S "$LIMBO_DOCKER_SOCK" ]] && docker -H "unix://$LIMBO_DOCKER_SOCK" version >/dev/null 2>&1
}

# The docker client talks to DOCKER_HOST when the caller set one, else to our engine.
export DOCKER_HOST=${DOCKER_HOST:-unix://$LIMBO_DOCKER_SOCK}

# Root filesystems for `docker import` (no registry here): a file copied to the same path
# under the root ($1), following symlinks (libraries are often links); a binary with every
# library its dynamic loader would map (ldd: "name => /path (addr)" and the loader itself).
rootfs_put() { cp -L --parents "$2" "$1/"; }
rootfs_put_binary() {
  local lib
  rootfs_put "$1" "$2"
  for lib in $(ldd "$2" | grep -o '/[^ ]*' | sort -u); do
    [[ -e "$lib" ]] && rootfs_put "$1" "$lib"
  done
  return 0
}
