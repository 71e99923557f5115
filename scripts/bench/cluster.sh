#!/bin/sh
# Cluster-mode benchmarks (issue "Cluster mode"): wall time and peak memory of
# `hetbatch sim --trace` as a user runs it, on an optimised build.
#
#   scripts/bench/cluster.sh [REPEATS] [POLICIES_160] [POLICIES_PHILLY]
#
#  1. Pollux's 160-job workload-1 on its 64-GPU T4 cluster under every
#     policy with a shared arbiter (Pollux's restart delay of 30 s).  Target:
#     Pollux's policy in under 30 s (Pollux's Python simulator: up to 30 min).
#  2. The whole philly.csv (82,247 jobs) on the Philly-scale preset "philly"
#     (2,048 GPUs) under every policy with a shared arbiter.  Targets (issue
#     "Philly scale"): Pollux under 10 minutes, JABAS under 5, every other
#     policy under 2, peak RSS under 300 MB for all.  A run is stopped at
#     its target (BENCH_TIMEOUT overrides) and reported as "> S".
#  3. The engine's event rate: fifo's events per CPU-second on philly.csv
#     (`sim -v`) against the event queue's own pop+schedule pairs per
#     CPU-second (bench_engine); target: within 5x.
#  4. Replays on threads: workload-1 under six policies at -j 1 and at
#     -j $(nproc) (`sim --trace -j N`, each replay on a thread of its own,
#     its records merged in table order), with and without --out.  On a
#     machine whose cores are busy with other work the wall times say
#     little: compare the CPU seconds and the load (printed).
# Fairness (rho) is off: it simulates every job a second time alone.
# Data: $HB_SHARED (default ../shared)/data/pollux.
set -eu
cd "$(dirname "$0")/../.."
REPS=${1:-1}
P160=${2:-fifo,tiresias,optimus,pollux,elastic,jabas,simigrad,optperf}
PPH=${3:-fifo,tiresias,optimus,elastic,simigrad,optperf,jabas,pollux}
DATA=${HB_SHARED:-../shared}/data/pollux
[ -f "$DATA/philly.csv" ] || { echo "cluster.sh: no $DATA/philly.csv (set HB_SHARED)" >&2; exit 2; }
sh scripts/install-deps.sh
# Release with link-time optimisation: the solvers' and agents' hot calls
# cross files (iidp.c, autoscale.c, agent_*.c).  On two Philly days it cut
# JABAS's and Pollux's wall time by 4-5 % with the same output bytes; C11
# mode contracts no FMAs, so inlining across files changes no result.
BUILD_DIR=build-bench sh scripts/build.sh --buildtype=release -Db_lto=true >/dev/null
H=./build-bench/cli/hetbatch
M="python3 scripts/bench/measure.py"
export HETBATCH_CACHE="${HETBATCH_CACHE:-$PWD/build-bench}"
# Build the default profile database once, outside the timings.
$H -q plan --cluster pollux-t4 --model cifar10 --gbs 128 >/dev/null

echo "cluster-mode benchmarks: $(nproc) cores, $REPS repeat(s); wall s (median, min, max), peak RSS MiB"
printf '%-44s %9s %9s %9s %9s %10s\n' "run" "median" "min" "max" "CPU s" "peak MiB"
for p in $(echo "$P160" | tr , ' '); do
	$M "workload-1 (160 jobs), pollux-t4, $p" "$REPS" --timeout "${BENCH_TIMEOUT:-600}" -- \
		$H -q sim --cluster pollux-t4 --trace "$DATA/workloads/workload-1.csv" --policy "$p" \
		--restart-cost 30 --no-fairness
done
for p in $(echo "$PPH" | tr , ' '); do
	case $p in pollux) lim=600 ;; jabas) lim=300 ;; *) lim=120 ;; esac
	$M "philly.csv (82,247 jobs), philly, $p" "$REPS" --timeout "${BENCH_TIMEOUT:-$lim}" -- \
		$H -q sim --cluster philly --trace "$DATA/philly.csv" --policy "$p" --no-fairness
done
rate=$($H -v sim --cluster philly --trace "$DATA/philly.csv" --policy fifo --no-fairness 2>&1 >/dev/null |
	sed -n 's/.*(\([0-9.e+]*\) events per CPU-second).*/\1/p' | head -1)
queue=$(./build-bench/scripts/bench/bench_engine 5 | sed -n 's/.* \([0-9.e+]*\) pop+schedule pairs per CPU-second.*/\1/p')
python3 -c "import sys; r, q = float(sys.argv[1]), float(sys.argv[2]); print('engine: fifo %.3g events per CPU-second, event queue %.3g pairs per CPU-second: %.1fx (target <= 5x)' % (r, q, q / r))" "$rate" "$queue"
NJ=$(nproc)
P6=fifo,tiresias,optimus,elastic,simigrad,optperf
echo "replays on threads ($P6; load: $(cut -d' ' -f1-3 /proc/loadavg)):"
for j in 1 "$NJ"; do
	$M "workload-1, 6 policies, -j $j" "$REPS" -- \
		$H -q sim --cluster pollux-t4 --trace "$DATA/workloads/workload-1.csv" --policy "$P6" --no-fairness -j "$j"
	rm -rf build-bench/bench-jobs-out
	$M "workload-1, 6 policies, -j $j --out" "$REPS" -- \
		$H -q sim --cluster pollux-t4 --trace "$DATA/workloads/workload-1.csv" --policy "$P6" --no-fairness -j "$j" \
		--out build-bench/bench-jobs-out --force
done
rm -rf build-bench/bench-jobs-out
echo "targets: pollux on workload-1 < 12 s (2x the 24 s of issue 14); philly.csv: pollux < 600 s, jabas < 300 s, others < 120 s; peak RSS < 300 MiB"
