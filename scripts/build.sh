#!/bin/sh
# Configure (once) and build hetbatch into BUILD_DIR (default: build).
# Extra arguments go to `meson setup`, e.g. -Dgpu=disabled.  Output is kept
# quiet unless something fails, then the whole log is shown.
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
	if ! "$@" >"$log" 2>&1; then
		cat "$log" >&2
		echo "build.sh: '$*' failed" >&2
		exit 1
	fi
}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
	run meson setup "$BUILD_DIR" "$@"
elif [ $# -gt 0 ]; then
	run meson configure "$BUILD_DIR" "$@"
fi
run ninja -C "$BUILD_DIR"
