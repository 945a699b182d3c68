#!/usr/bin/env bash
# The acceptance check by hand: installs a built package with apt into a fresh
# Debian 12 (a debootstrap chroot), then runs the installed command-line program
# on the default demo case and the installed workstation under Xvfb.
# Needs root, network access to a Debian mirror, and debootstrap; not run by CI
# (ctest -L package checks the package without root or network).
#
#   sudo installer/check-fresh-debian.sh build-pkg/reconstudio_0.1.0-1_amd64.deb [CHROOT_DIR] [SCREENSHOT.png]
set -euo pipefail

deb=${1:?usage: $0 PACKAGE.deb [CHROOT_DIR] [SCREENSHOT.png]}
root=${2:-/tmp/reconstudio-debian12}
screenshot=${3:-$PWD/installed.png}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

[ "$(id -u)" -eq 0 ] || { echo "$0: needs root (debootstrap, chroot)" >&2; exit 2; }
[ -f "$deb" ] || { echo "$0: no such package: $deb" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "$0: apt-get install debootstrap" >&2; exit 2; }

if [ ! -x "$root/usr/bin/apt-get" ]; then
    echo "== debootstrap bookworm (minbase) into $root"
    debootstrap --variant=minbase bookworm "$root" "$mirror"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mountpoint -q "$root/proc" || mount --bind /proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT

name=$(basename "$deb")
cp "$deb" "$root/tmp/$name"
echo "== apt-get install ./$name (and xvfb, xauth to show the window)"
chroot "$root" env DEBIAN_FRONTEND=noninteractive sh -c \
    "apt-get update -qq && apt-get install -y -qq --no-install-recommends xvfb xauth >/dev/null &&
     apt-get install -y -qq --no-install-recommends --reinstall /tmp/$name >/dev/null"
chroot "$root" dpkg-query -W -f '${Package} ${Version} ${Status}\n' "$(dpkg-deb --field "$deb" Package)"

echo "== reconstudio-cli --version; compare on the default demo case"
chroot "$root" reconstudio-cli --version
chroot "$root" sh -c 'cd /tmp && reconstudio-cli compare --quiet'

if chroot "$root" sh -c 'command -v reconstudio' >/dev/null; then
    echo "== reconstudio under Xvfb on the default demo case"
    chroot "$root" sh -c 'cd /tmp && xvfb-run -a -s "-screen 0 1920x1200x24" reconstudio --screenshot /tmp/installed.png'
    cp "$root/tmp/installed.png" "$screenshot"
    echo "saved $screenshot"
fi
