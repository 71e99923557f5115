#!/bin/sh
# Configure (once) and build hetbatch into BUILD_DIR (default: build).
# Extra arguments go to `meson setup`, e.g. -Dgpu=disabled.
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
	meson setup "$BUILD_DIR" "$@" >/dev/null
elif [ $# -gt 0 ]; then
	meson configure "$BUILD_DIR" "$@" >/dev/null
fi
ninja -C "$BUILD_DIR" >/dev/null
