#!/usr/bin/env bash
# Builds the worker image (deploy/container/Containerfile) with podman around a `hands` binary
# built on the host:  deploy/container/build.sh HANDS_BINARY [IMAGE]
#   IMAGE defaults to localhost/hands-worker:latest.
#   BASE (environment) names the base image; unset, Debian's bookworm-slim is used when podman
#   already holds it, else a bookworm minbase made here with debootstrap from Debian's packages
#   and imported as localhost/hands-debian:bookworm (kept: made once per machine).
#   EXTRA_PACKAGES (environment) replaces the image's optional Debian packages ("chromium").
# podman runs with deploy/container/containers.conf (runc, no default ulimits) unless
# CONTAINERS_CONF is set.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 HANDS_BINARY [IMAGE]" >&2; exit 2; }
binary=$1
image=${2:-localhost/hands-worker:latest}
[ -x "$binary" ] || { echo "$binary is not an executable: build it with cargo build -p hands" >&2; exit 1; }
command -v podman >/dev/null || { echo "podman is not installed: run scripts/install-system-deps.sh" >&2; exit 1; }
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/containers.conf}

base=${BASE:-}
if [ -z "$base" ]; then
  if podman image exists docker.io/library/debian:bookworm-slim; then
    base=docker.io/library/debian:bookworm-slim
  else
    base=localhost/hands-debian:bookworm
    if ! podman image exists "$base"; then
      command -v debootstrap >/dev/null || { echo "no base image, and debootstrap is not installed: run scripts/install-system-deps.sh" >&2; exit 1; }
      [ "$(id -u)" -eq 0 ] || { echo "debootstrap needs root to make the base image $base" >&2; exit 1; }
      rootfs=$(mktemp -d /tmp/hands-rootfs-XXXXXX)
      trap 'rm -rf "$rootfs"' EXIT
      echo "making $base with debootstrap (once)" >&2
      debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
      rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
      tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
    fi
  fi
fi

context=$(mktemp -d /tmp/hands-image-XXXXXX)
trap 'rm -rf "$context" ${rootfs:+"$rootfs"}' EXIT
cp "$here/Containerfile" "$context/Containerfile"
# Debug information is most of a debug build's size; the image does not need it.
objcopy --strip-debug "$binary" "$context/hands" 2>/dev/null || cp "$binary" "$context/hands"
podman build --quiet --network host --build-arg "BASE=$base" \
  ${EXTRA_PACKAGES+--build-arg "EXTRA_PACKAGES=$EXTRA_PACKAGES"} \
  -t "$image" -f "$context/Containerfile" "$context" >/dev/null
echo "$image"
