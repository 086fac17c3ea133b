#!/usr/bin/env bash
# A Prometheus image without a registry, laid out like the official prom/prometheus one
# (entrypoint /bin/prometheus, TSDB in /prometheus, user nobody), from the host's Debian
# `prometheus` binary and the libraries ldd lists, via `docker import`. It lets
# `limbo up --runtime docker --prometheus-image limbo/prometheus:local` and the docker tests
# run the Prometheus container path for real. Skipped (exit 0) when the host has no
# prometheus binary, or the image already holds this binary's version (LIMBO_REBUILD=1 forces).
#
#   scripts/docker/prometheus-image.sh      # → limbo/prometheus:local (LIMBO_PROMETHEUS_LOCAL_IMAGE)
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
image=${LIMBO_PROMETHEUS_LOCAL_IMAGE:-limbo/prometheus:local}

if ! command -v prometheus >/dev/null 2>&1; then
  log "no prometheus binary on this host: $image not built"
  exit 0
fi
bin=$(readlink -f "$(command -v prometheus)")
version=$("$bin" --version 2>&1 | awk 'NR == 1 { print $3 }')
existing=$(docker image inspect --format '{{index .Config.Labels "org.limbo.prometheus-version"}}' "$image" 2>/dev/null || true)
if [[ "$existing" == "$version" && "${LIMBO_REBUILD:-0}" != 1 ]]; then
  log "$image already holds $version"
  exit 0
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/limbo-prom-rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
rootfs_put_binary "$root" "$bin"
mkdir -p "$root/bin" "$root/prometheus" "$root/etc/prometheus" "$root/tmp"
[[ "$bin" == /bin/prometheus ]] || ln -sf "$bin" "$root/bin/prometheus"
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/bin/false\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
chown 65534:65534 "$root/prometheus"

chroot "$root" /bin/prometheus --version >/dev/null 2>&1 || die "prometheus does not run inside the root filesystem"
log "importing $(du -sh "$root" | cut -f1) as $image ($version)"
tar --numeric-owner -C "$root" -c . | docker import \
  --change 'USER nobody' \
  --change 'WORKDIR /prometheus' \
  --change "LABEL org.limbo.prometheus-version=$version" \
  --change 'ENTRYPOINT ["/bin/prometheus"]' \
  --change 'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]' \
  - "$image" >/dev/null
docker image ls "$image" >&2
