#!/bin/sh
# Install what is missing, build, and run the demo on the built-in data:
# no GPU and no download.  The first run generates the analytic profile
# database into the cache (~/.cache/hetbatch, or $HETBATCH_CACHE).
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
BUILD_DIR=build sh scripts/build.sh
HB=./build/cli/hetbatch

step() { printf '\n$ hetbatch %s\n' "$*"; $HB "$@"; }

step plan --cluster jabas-a --model resnet50 --gbs 2048
step sim --cluster jabas-a --model resnet50,gnmt --policy jabas,simigrad,pollux,pollux-as,optperf
