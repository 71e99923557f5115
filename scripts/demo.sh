#!/bin/sh
# Install what is missing, build, and run the demo on the built-in data:
# no GPU and no download.  The first run generates the analytic profile
# database into the cache (~/.cache/hetbatch, or $HETBATCH_CACHE).
# Each long step says what it does before it starts (on stderr), so a
# loaded host's four quiet minutes of compiling do not look like a hang.
set -eu
cd "$(dirname "$0")/.."
say() { printf 'demo: %s\n' "$*" >&2; }
t0=$(date +%s)
say "checking the Debian packages hetbatch needs (installs only what is missing)..."
sh scripts/install-deps.sh
if [ -x build/cli/hetbatch ]; then
	say "bringing the build in build/ up to date (seconds, unless sources changed)..."
else
	say "building hetbatch into build/ (about 1 min on 2 free cores, up to 5 on a loaded host)..."
fi
BUILD_DIR=build sh scripts/build.sh
say "built in $(( $(date +%s) - t0 )) s"
HB=./build/cli/hetbatch
cache=${HETBATCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hetbatch}
[ -d "$cache" ] || say "the first command also generates the analytic profile database into $cache (once)"

step() { say "running hetbatch $1..."; printf '\n$ hetbatch %s\n' "$*"; $HB "$@"; }

step plan --cluster jabas-a --model resnet50 --gbs 2048
step sim --cluster jabas-a --model resnet50,gnmt --policy jabas,simigrad,pollux,pollux-as,optperf
