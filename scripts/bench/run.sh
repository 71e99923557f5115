#!/bin/sh
# Build an optimised tree (build-bench/) and print the benchmark tables.
#   scripts/bench/run.sh [REPEATS]
set -eu
cd "$(dirname "$0")/../.."
sh scripts/install-deps.sh
# The build cluster.sh makes and says why: release with LTO.
BUILD_DIR=build-bench sh scripts/build.sh --buildtype=release -Db_lto=true
REPS=${1:-21}
./build-bench/scripts/bench/bench_math "$REPS"
echo
./build-bench/scripts/bench/bench_solvers "$REPS"
echo
./build-bench/scripts/bench/bench_engine "$REPS"
