#!/bin/sh
# Profile loading: a replay on an imported profile database against the same
# replay on the built-in one (target: within 2x of its CPU time).
#
#   scripts/bench/profile-load.sh [REPEATS]
#
# The replay: Pollux's workload-1 (160 jobs) on pollux-t4 under Tiresias,
# whose rounds cost almost nothing, so what is left is loading each model's
# profile.  The imported database is the analytic T4 rows plus `import
# pollux` (Pollux's measured placements and scalability rows: 540-1661 per
# model), as pollux-sim builds it.  Prints median, min, max wall s, median
# CPU s and peak RSS per run, then the CPU ratio.  Data: $HB_SHARED
# (default ../shared)/data/pollux.
set -eu
cd "$(dirname "$0")/../.."
REPS=${1:-10}
DATA=${HB_SHARED:-../shared}/data/pollux
[ -d "$DATA/profiles" ] || { echo "profile-load.sh: no $DATA/profiles (set HB_SHARED)" >&2; exit 2; }
sh scripts/install-deps.sh
BUILD_DIR=build-bench sh scripts/build.sh --buildtype=release -Db_lto=true >/dev/null
H=./build-bench/cli/hetbatch
M="python3 scripts/bench/measure.py"
TMP=$(mktemp -d /tmp/hetbatch-profile-load.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export HETBATCH_CACHE="$TMP/cache"
$H -q profile --analytic --db "$TMP/t4.db" --gpus t4 >/dev/null
$H -q import pollux "$DATA/profiles" --db "$TMP/t4.db" >/dev/null
W1="$DATA/workloads/workload-1.csv"
$H -q sim --cluster pollux-t4 --trace "$W1" --policy tiresias >/dev/null # builds the cached analytic database
echo "profile loading: $(nproc) cores, $REPS repeat(s); wall s (median, min, max), CPU s, peak RSS MiB"
printf '%-44s %9s %9s %9s %9s %10s\n' "run" "median" "min" "max" "CPU s" "peak MiB"
{
	$M "workload-1 tiresias, built-in database" "$REPS" -- $H -q sim --cluster pollux-t4 --trace "$W1" \
		--policy tiresias
	$M "workload-1 tiresias, imported database" "$REPS" -- $H -q sim --cluster pollux-t4 --trace "$W1" \
		--db "$TMP/t4.db" --policy tiresias
} | tee "$TMP/rows"
python3 - "$TMP/rows" <<'PY'
import sys
cpu = [float(line.split()[-2]) for line in open(sys.argv[1])]
print("imported / built-in CPU %.2fx (target <= 2x)" % (cpu[1] / cpu[0] if cpu[0] > 0 else float("nan")))
PY
