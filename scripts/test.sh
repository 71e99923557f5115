#!/bin/sh
# Install what is missing, build, and run the whole test suite.
#   scripts/test.sh              normal build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/
#   scripts/test.sh --no-gpu     build with -Dgpu=disabled in build-nogpu/
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
case "${1:-}" in
--sanitize)
	BUILD_DIR=build-asan sh scripts/build.sh -Db_sanitize=address,undefined -Db_lundef=false
	exec meson test -C build-asan --print-errorlogs ;;
--no-gpu)
	BUILD_DIR=build-nogpu sh scripts/build.sh -Dgpu=disabled
	exec meson test -C build-nogpu --print-errorlogs ;;
"")
	BUILD_DIR=build sh scripts/build.sh
	exec meson test -C build --print-errorlogs ;;
*)
	echo "usage: scripts/test.sh [--sanitize | --no-gpu]" >&2
	exit 2 ;;
esac
