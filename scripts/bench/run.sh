#!/bin/sh
# Build an optimised tree (build-bench/) and print the benchmark tables.
#   scripts/bench/run.sh [REPEATS]
set -eu
cd "$(dirname "$0")/../.."
sh scripts/install-deps.sh
# Release with link-time optimisation: the solvers' and agents' hot calls
# cross files (iidp.c, autoscale.c, agent_*.c).  On two Philly days it cut
# JABAS's and Pollux's wall time by 4-5 % with the same output bytes; C11
# mode contracts no FMAs, so inlining across files changes no result.
BUILD_DIR=build-bench sh scripts/build.sh --buildtype=release -Db_lto=true
REPS=${1:-21}
./build-bench/scripts/bench/bench_math "$REPS"
echo
./build-bench/scripts/bench/bench_solvers "$REPS"
echo
./build-bench/scripts/bench/bench_engine "$REPS"
