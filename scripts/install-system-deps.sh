#!/usr/bin/env bash
# Installs the Debian packages hands needs at run time and in tests, once: a package already
# present is not fetched again, and nothing runs when all are there.
#   runtime:   Xvfb (the desktop), openbox (a window manager), fonts, chromium (the browser),
#              bubblewrap (the jail every episode runs in)
#   reference: xdotool, scrot, imagemagick, used only by the benchmark's reference pipeline
#   tests:     gcc and libx11-dev build the Xlib test client (the GTK one needs only mousepad's
#              GTK runtime); postgresql (15) for hands-fleet's tests, which start a private
#              cluster of their own (initdb + pg_ctl as the `postgres` user it creates); podman,
#              runc and debootstrap build and run the worker image (deploy/container) in its test;
#              ffmpeg (and its ffprobe) encodes and checks `hands run --video`
set -euo pipefail

packages=(xvfb xauth x11-utils x11-xkb-utils openbox fonts-dejavu-core chromium bubblewrap
          xdotool scrot imagemagick mousepad gcc libx11-dev postgresql
          podman runc debootstrap ffmpeg)

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "installing system packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
