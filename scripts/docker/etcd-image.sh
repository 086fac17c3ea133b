#!/usr/bin/env bash
# An etcd image without a registry, for the declared etcd target on `--runtime docker`
# (targets/etcd.limbo.ts: each member's `image`): the host's Debian `etcd` binary and the
# libraries ldd lists, entrypoint /usr/bin/etcd, via `docker import`. The target's arguments
# become the container's command; its data directory is bind-mounted at the same path.
# Skipped (exit 0) when the host has no etcd, or the image already holds this binary's
# version (LIMBO_REBUILD=1 forces).
#
#   scripts/docker/etcd-image.sh      # → limbo/etcd:local (LIMBO_ETCD_IMAGE)
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
image=${LIMBO_ETCD_IMAGE:-limbo/etcd:local}

if ! command -v etcd >/dev/null 2>&1; then
  log "no etcd binary on this host (Debian: apt-get install etcd-server): $image not built"
  exit 0
fi
bin=$(readlink -f "$(command -v etcd)")
version=$("$bin" --version 2>&1 | awk 'NR == 1 { print $3 }')
existing=$(docker image inspect --format '{{index .Config.Labels "org.limbo.etcd-version"}}' "$image" 2>/dev/null || true)
if [[ "$existing" == "$version" && "${LIMBO_REBUILD:-0}" != 1 ]]; then
  log "$image already holds etcd $version"
  exit 0
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/limbo-etcd-rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
rootfs_put_binary "$root" "$bin"
[[ "$bin" == /usr/bin/etcd ]] || { mkdir -p "$root/usr/bin" && ln -sf "$bin" "$root/usr/bin/etcd"; }
mkdir -p "$root/tmp" "$root/etc" "$root/var/lib/etcd"
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"

chroot "$root" /usr/bin/etcd --version >/dev/null 2>&1 || die "etcd does not run inside the root filesystem"
log "importing $(du -sh "$root" | cut -f1) as $image (etcd $version)"
tar --numeric-owner -C "$root" -c . | docker import \
  --change 'WORKDIR /var/lib/etcd' \
  --change "LABEL org.limbo.etcd-version=$version" \
  --change 'ENTRYPOINT ["/usr/bin/etcd"]' \
  - "$image" >/dev/null
docker image ls "$image" >&2
