#!/usr/bin/env bash
# Builds a Node base image without a registry: a root filesystem holding the host's node
# binary, the shared libraries `ldd` lists for it, npm, a /bin/sh (for Dockerfile RUN),
# /usr/bin/env (npm's shebang), the host's CA bundle (npm behind a TLS-inspecting proxy),
# and a `node` user (uid 1000, as in the official images), turned into an image with
# `docker import`. Skipped when the image already holds this host's node version
# (LIMBO_REBUILD=1 forces it).
#
#   scripts/docker/base-image.sh            # → limbo/node-base:local (LIMBO_BASE_IMAGE)
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

node_bin=$(readlink -f "$(command -v node)")
node_version=$("$node_bin" --version)
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")

existing=$(docker image inspect --format '{{index .Config.Labels "org.limbo.node-version"}}' "$LIMBO_BASE_IMAGE" 2>/dev/null || true)
if [[ "$existing" == "$node_version" && "${LIMBO_REBUILD:-0}" != 1 ]]; then
  log "$LIMBO_BASE_IMAGE already holds node $node_version"
  exit 0
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/limbo-rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

put() { rootfs_put "$root" "$1"; }
put_binary() { rootfs_put_binary "$root" "$1"; }

log "root filesystem for node $node_version from $node_bin"
put_binary "$node_bin"
put_binary "$(readlink -f /bin/sh)"
put_binary /usr/bin/env
mkdir -p "$root/bin" "$root/usr/bin" "$root/usr/local/bin"
[[ -e "$root/bin/sh" ]] || ln -s "$(readlink -f /bin/sh)" "$root/bin/sh"
[[ "$node_bin" == /usr/bin/node ]] || ln -sf "$node_bin" "$root/usr/bin/node"
ln -sf /usr/bin/node "$root/usr/local/bin/node"

# npm (for `npm ci` while building the services image); its own executables are JS files.
mkdir -p "$root$npm_dir"
cp -a "$npm_dir/." "$root$npm_dir/"
ln -sf "$npm_dir/bin/npm-cli.js" "$root/usr/bin/npm"
ln -sf "$npm_dir/bin/npx-cli.js" "$root/usr/bin/npx"

# What node and npm expect of a system: users, a writable /tmp, name resolution order, CAs.
mkdir -p "$root/etc/ssl/certs" "$root/tmp" "$root/root" "$root/home/node" "$root/proc" "$root/sys" "$root/dev"
chmod 1777 "$root/tmp"
chmod 700 "$root/root"
printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnode:x:1000:\n' >"$root/etc/group"
printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
chown 1000:1000 "$root/home/node"
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
[[ -f "$ca" ]] && cp -L "$ca" "$root/etc/ssl/certs/ca-certificates.crt"

# A smoke test before importing: the copied node runs with only the copied libraries.
if ! chroot "$root" /usr/bin/node -e 'require("node:crypto").randomUUID()' 2>/dev/null; then
  die "node does not run inside the root filesystem (missing libraries?)"
fi

log "importing $(du -sh "$root" | cut -f1) as $LIMBO_BASE_IMAGE"
tar --numeric-owner -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change "LABEL org.limbo.node-version=$node_version" \
  --change 'CMD ["node"]' \
  - "$LIMBO_BASE_IMAGE" >/dev/null
docker image ls "$LIMBO_BASE_IMAGE" >&2
