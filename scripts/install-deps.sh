#!/bin/sh
# Install the Debian 12 packages hetbatch needs, only those missing.
# Idempotent: a second run checks with dpkg-query and returns at once.
# Works as root or through sudo.
set -eu

PKGS="gcc meson ninja-build pkgconf python3 python3-venv libgsl-dev libqhull-dev libsqlite3-dev libcjson-dev libcmocka-dev gnuplot-nox libopenblas-dev libglpk-dev liblbfgsb-dev libopenmpi-dev openmpi-bin"
[ "${1:-}" = "--fuzz" ] && PKGS="$PKGS clang libclang-rt-14-dev"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "install-deps: need root or sudo to install:$missing" >&2
	exit 1
fi
echo "install-deps: installing:$missing" >&2
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
