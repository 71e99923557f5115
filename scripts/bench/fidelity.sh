#!/bin/sh
# Fidelity modes against hetbatch's own mechanics on the same workloads: a
# fidelity mode may cost time only where its artifact's mechanics demand
# it (target: each within 2x of the native mode's CPU time).
#
#   scripts/bench/fidelity.sh [REPEATS]
#
#  - Pollux: workload-1 (160 jobs) on pollux-t4, Pollux, Tiresias and
#    Optimus, native (--restart-cost 30) and --fidelity pollux, both on the
#    published T4 profiles imported over the analytic defaults;
#  - EasyScale: scripts/repro/easyscale-trace's seed-1 workload (the
#    artifact's format, 62 jobs) on easyscale, YARN-CS, EasyScale_homo and
#    EasyScale_heter, native and --fidelity easyscale.
# Prints median, min, max wall s, median CPU s and peak RSS per run, then
# the CPU ratio fidelity / native per pair.  Data: $HB_SHARED (default
# ../shared)/data/pollux.
set -eu
cd "$(dirname "$0")/../.."
REPS=${1:-5}
DATA=${HB_SHARED:-../shared}/data/pollux
[ -d "$DATA/profiles" ] || { echo "fidelity.sh: no $DATA/profiles (set HB_SHARED)" >&2; exit 2; }
sh scripts/install-deps.sh
BUILD_DIR=build-bench sh scripts/build.sh --buildtype=release -Db_lto=true >/dev/null
H=./build-bench/cli/hetbatch
M="python3 scripts/bench/measure.py"
TMP=$(mktemp -d /tmp/hetbatch-fidelity-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export HETBATCH_CACHE="${HETBATCH_CACHE:-$PWD/build-bench}"
$H -q profile --analytic --db "$TMP/t4.db" --gpus t4 >/dev/null
$H -q import pollux "$DATA/profiles" --db "$TMP/t4.db" >/dev/null
scripts/repro/easyscale-trace --build build-bench --out "$TMP/es" >/dev/null
W1="$DATA/workloads/workload-1.csv"
ES="$TMP/es/workload.csv"
echo "fidelity benchmarks: $(nproc) cores, $REPS repeat(s); wall s (median, min, max), CPU s, peak RSS MiB"
printf '%-44s %9s %9s %9s %9s %10s\n' "run" "median" "min" "max" "CPU s" "peak MiB"
{
	$M "pollux-t4 workload-1, native" "$REPS" -- $H -q sim --cluster pollux-t4 --trace "$W1" --db "$TMP/t4.db" \
		--restart-cost 30 --no-fairness --policy pollux,tiresias,optimus
	$M "pollux-t4 workload-1, --fidelity pollux" "$REPS" -- $H -q sim --cluster pollux-t4 --trace "$W1" \
		--db "$TMP/t4.db" --no-fairness --fidelity pollux --policy pollux,tiresias,optimus
	$M "easyscale seed-1, native" "$REPS" -- $H -q sim --cluster easyscale --trace "$ES" --no-fairness \
		--policy yarn-cs,easyscale-homo,easyscale
	$M "easyscale seed-1, --fidelity easyscale" "$REPS" -- $H -q sim --cluster easyscale --trace "$ES" \
		--fidelity easyscale --policy yarn-cs,easyscale-homo,easyscale
} | tee "$TMP/rows"
python3 - "$TMP/rows" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()  # LABEL... median min max CPU peak
    rows[" ".join(f[:-5])] = float(f[-2])
for what in ("pollux-t4 workload-1", "easyscale seed-1"):
    nat = rows[what + ", native"]
    fid = [v for k, v in rows.items() if k.startswith(what + ", --fidelity")][0]
    print("%s: fidelity / native CPU %.2fx (target <= 2x)" % (what, fid / nat if nat > 0 else float("nan")))
PY
