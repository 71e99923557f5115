#!/bin/bash
# Issue 12's device runs in ONE command, for a GPU session's short budget
# (~15 minutes of device time; this script aims at under 8).  Build on the
# CPU machine first (BUILD_DIR=build sh scripts/build.sh: gpu=auto compiles
# the CUDA backend and libhetbatch_inject.so), carry the build dir, then:
#
#   scripts/gpu/issue12.sh [--dry-run [--allow-cpu-build]] [--build DIR] [--out DIR] [--quick]
#
# Stages (each under `timeout`; a failing stage is reported and the next
# one runs; set -u):
#   0 preflight   nvidia-smi, the device name, python3 + torch + CUDA
#   1 cuda        hetbatch profile --backend cuda: catalog models (resnet50,
#                 vit, bert-large, gnmt, gpt3-xl, llama2-7b at --scale), CUPTI
#                 timing, into $OUT/cuda.db (-v: CUPTI vs CUDA events per point)
#   2 events      the same points with --no-cupti into $OUT/events.db: the
#                 tracing overhead is the iteration time with and without CUPTI
#   3 torch       hetbatch profile --backend torch for the same models into
#                 $OUT/torch.db, traces kept in $OUT/traces/
#   4 compare     synthetic (cuda.db) against real (torch.db): fwd+bwd per
#                 local batch and the VSW gain n_vsw vs 1 -> $OUT/compare.txt
#   5 live        hetbatch plan + live --plan over >= 10 configurations on the
#                 one GPU, with the measured profiles -> $OUT/live/
# Everything goes under $OUT (default: $OUT from the device runner, else
# ./issue12-out); a summary with each stage's status and time is printed
# and kept in $OUT/summary.txt.  --dry-run prints the commands and runs
# none of them: scripts/gpu/dry_check.py checks each instead (the
# subcommand and every option are in hetbatch's help, models and clusters
# are in the catalog, every file read exists or an earlier stage writes it,
# the plans are rehearsed on the analytic profiles, the shell and Python
# parts parse) and the exit status says whether all is well; the test
# suite runs it (tests/gpu_free).  --allow-cpu-build: a dry run on a build
# without the CUDA backend (no injection library) checks the rest.  --quick: fewer points (a
# rehearsal).  --only LIST (comma list of cuda,events,torch,compare,live):
# run just those stages (preflight always runs).  The limits below add up
# to more than one device call may run (600 s), so a session with the usual
# 15 minutes runs e.g. `--quick --only cuda,events,torch,compare` in one
# call and `--quick --only live` in a second on the warm machine.
set -u
BUILD=build
DRY=0
ALLOW_CPU=0
QUICK=0
ONLY=
OUTDIR=${OUT:-issue12-out}
while [ $# -gt 0 ]; do
	case "$1" in
	--dry-run) DRY=1 ;;
	--allow-cpu-build) ALLOW_CPU=1 ;;
	--quick) QUICK=1 ;;
	--only) ONLY=,$2,; shift ;;
	--build) BUILD=$2; shift ;;
	--out) OUTDIR=$2; shift ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "issue12.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[ $ALLOW_CPU = 0 ] || [ $DRY = 1 ] || { echo "issue12.sh: --allow-cpu-build goes with --dry-run" >&2; exit 2; }
mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
cd "$(dirname "$0")/../.." || exit 1
case "$BUILD" in /*) B=$BUILD ;; *) B=$PWD/$BUILD ;; esac
H=$B/cli/hetbatch
INJ=$B/profiler/libhetbatch_inject.so
WORKER=$B/profiler/torch_worker.py
if [ ! -x "$H" ]; then
	echo "issue12.sh: no $H: build first (BUILD_DIR=$BUILD sh scripts/build.sh) and carry $BUILD" >&2
	exit 1
fi
if [ ! -f "$INJ" ] && [ $ALLOW_CPU = 0 ]; then
	echo "issue12.sh: no $INJ: the build has no CUDA backend (configure with -Dgpu=enabled)" >&2
	exit 1
fi
export HETBATCH_CACHE=$OUTDIR/cache HETBATCH_DATA=$OUTDIR/no-user-db
SUMMARY=$OUTDIR/summary.txt
: >"$SUMMARY"
# the dry run's record of every command: stage, argument count, arguments, NUL-separated
CMDS=$OUTDIR/dry-run.cmds
[ $DRY = 0 ] || : >"$CMDS"

MODELS_CUDA="resnet50 vit bert-large gnmt gpt3-xl llama2-7b"
if [ $QUICK = 1 ]; then ITERS="--warmup 3 --iters 10"; TITERS="--warmup 2 --iters 5"; else
	ITERS="--warmup 5 --iters 30"; TITERS="--warmup 3 --iters 15"; fi
# model -> "--scale F" where the whole model does not fit 80 GB with VSWs
scale_of() { case "$1" in llama2-7b) echo "--scale 0.125" ;; gpt3-xl) echo "--scale 0.5" ;; *) echo "" ;; esac; }
lbs_of() { case "$1" in resnet50|vit) echo "32,64,128" ;; gnmt) echo "32,64" ;; bert-large) echo "8,16,32" ;;
	gpt3-xl|llama2-7b) echo "1,2,4" ;; esac; }

FAILED=0
# stage NAME SECONDS command...: run under timeout, log to $OUTDIR/NAME.log
stage() {
	local name=$1 secs=$2 t0 rc
	shift 2
	# --only: the stage's kind is its name up to the first '-'
	case "$name" in preflight) ;; *) [ -z "$ONLY" ] || case "$ONLY" in *",${name%%-*},"*) ;; *) return 0 ;; esac ;; esac
	echo "== $name (limit ${secs}s): $*"
	if [ $DRY = 1 ]; then
		printf '%-10s %s\n' "$name" "dry run: $*" >>"$SUMMARY"
		printf '%s\0' "$name" "$#" "$@" >>"$CMDS"
		return 0
	fi
	t0=$(date +%s)
	timeout -k 10 "$secs" "$@" >"$OUTDIR/$name.log" 2>&1
	rc=$?
	printf '%-10s rc %3d  %4ds  %s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" \
		"$([ $rc = 124 ] && echo "TIMED OUT" || { [ $rc = 0 ] && echo ok || echo FAILED; })" >>"$SUMMARY"
	[ $rc = 0 ] || { FAILED=$((FAILED + 1)); tail -5 "$OUTDIR/$name.log" | sed 's/^/   | /'; }
	return $rc
}

# 0. preflight: fail fast without a GPU
stage preflight 60 sh -c 'nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv &&
	python3 -c "import torch, torchvision, transformers; print(torch.__version__, torch.version.cuda,
torch.cuda.is_available() and torch.cuda.get_device_name(0))" && python3 -c "import torch; assert torch.cuda.is_available()"'
if [ $? != 0 ] && [ $DRY = 0 ]; then
	echo "issue12.sh: preflight failed (no GPU, driver or torch): nothing else run" | tee -a "$SUMMARY" >&2
	cat "$SUMMARY"
	exit 1
fi

# 1, 2. synthetic workloads: CUPTI and events only
for m in $MODELS_CUDA; do
	stage "cuda-$m" 75 "$H" -v profile --backend cuda --models "$m" $(scale_of "$m") --local-bs "$(lbs_of "$m")" \
		$ITERS --db "$OUTDIR/cuda.db"
done
stage events 90 "$H" profile --backend cuda --no-cupti --models resnet50,bert-large --local-bs 32 $ITERS \
	--db "$OUTDIR/events.db"

# 3. real models through the injection library
for m in $MODELS_CUDA; do
	stage "torch-$m" 100 "$H" profile --backend torch --models "$m" $(scale_of "$m") --local-bs "$(lbs_of "$m")" \
		--vsw 1,2,4 $TITERS --trace-dir "$OUTDIR/traces" --timeout 95 --worker "$WORKER" --inject "$INJ" \
		--db "$OUTDIR/torch.db"
done

# 4. synthetic against real, and the tracing overhead (sqlite3 via python;
# a file, not stdin, so that the dry run can compile it)
cat >"$OUTDIR/compare.py" <<'PY'
import os, sqlite3, sys
out = sys.argv[1]
def rows(db, src):
    p = os.path.join(out, db)
    if not os.path.exists(p):
        return {}
    q = "SELECT model, local_bs, n_vsw, fwd_s + bwd_s, total_s FROM compute WHERE source = ?"
    return {(m, b, n): (fb, t) for m, b, n, fb, t in sqlite3.connect(p).execute(q, (src,))}
syn, real, ev = rows("cuda.db", "cupti"), rows("torch.db", "torch"), rows("events.db", "events")
with open(os.path.join(out, "compare.txt"), "w") as f:
    def w(s=""):
        print(s); f.write(s + "\n")
    w("synthetic (cupti) vs real (torch) forward+backward, ms; goal |diff| <= 15 %")
    w("%-12s %6s %4s %10s %10s %8s" % ("model", "lbs", "vsw", "synthetic", "real", "diff"))
    for k in sorted(set(syn) & set(real)):
        s, r = syn[k][0], real[k][0]
        w("%-12s %6d %4d %10.3f %10.3f %+7.1f%%" % (k + (1e3 * s, 1e3 * r, 100 * (s - r) / r)))
    w("\nVSW throughput gain, samples/s at n VSWs over 1 VSW (same local batch)")
    for name, d in (("synthetic", syn), ("real", real)):
        for (m, b, n), (fb, t) in sorted(d.items()):
            if n > 1 and (m, b, 1) in d:
                w("%-9s %-12s lbs %4d: %d VSWs %.2fx" % (name, m, b, n, n * d[(m, b, 1)][1] / t))
    w("\ntracing overhead: iteration with CUPTI / with events only")
    for k in sorted(set(syn) & set(ev)):
        w("%-12s lbs %4d vsw %d: %.3f" % (k + (syn[k][1] / ev[k][1],)))
PY
stage compare 30 python3 "$OUTDIR/compare.py" "$OUTDIR"

# 5. live on the one GPU: plans from the measured profiles, >= 10 configurations.
# One GPU holds no JABAS pair, so the planner's IIDP rows put both groups on
# it (docs/plan-format.md: a pair with "gpus": 1 runs 2 n_vsw VSWs); --local-bs
# and --sync pick VSW/GA/OWS/SWS settings, the DDP and OptPerf rows run on
# the same GPU; one rank needs no mpirun.
mkdir -p "$OUTDIR/live"
cat >"$OUTDIR/live/one-gpu.json" <<JSON
{"name": "one-gpu", "display": "issue 12: the one GPU of this machine", "storage_bw": 1e9,
 "restart_latency_s": 2, "source": "scripts/gpu/issue12.sh",
 "groups": [{"name": "node0", "gpu": "h100-80gb", "nodes": 1, "gpus_per_node": 1,
             "intra_link": "nvlink4", "intra_bw": 450e9, "inter_link": "ib-400g", "inter_bw": 50e9}]}
JSON
# model, target B_G, live --method, extra plan options
LIVE_CONFIGS="resnet50 64 iidp --local-bs 32
resnet50 128 iidp --local-bs 32
resnet50 256 iidp --local-bs 32
resnet50 256 iidp --local-bs 32 --sync sws
resnet50 512 iidp --local-bs 64
vit 128 iidp --local-bs 32
bert-large 32 iidp --local-bs 8
gnmt 128 iidp --local-bs 32
resnet50 128 ddp
resnet50 512 ddp
vit 256 ddp
resnet50 512 optperf"
[ $QUICK = 1 ] && LIVE_CONFIGS=$(echo "$LIVE_CONFIGS" | sed -n '1p;3p;4p;9p')
k=0
echo "$LIVE_CONFIGS" | while read -r m gbs method extra; do
	k=$((k + 1))
	stage "live-$k" 45 sh -c "'$H' -q plan --cluster '$OUTDIR/live/one-gpu.json' --model $m --gbs $gbs \
		--gpus node0:1 $extra --db '$OUTDIR/cuda.db' --out '$OUTDIR/live/plan-$k.json' && \
		'$H' live --plan '$OUTDIR/live/plan-$k.json' --method $method --backend cuda --iters 20 --warmup 5 \
		--db '$OUTDIR/cuda.db' --out '$OUTDIR/live/res-$k'"
done
if [ $DRY = 1 ]; then
	echo
	set --
	[ $ALLOW_CPU = 1 ] && set -- --allow-missing "$INJ"
	python3 scripts/gpu/dry_check.py --hetbatch "$H" --cmds "$CMDS" --work "$OUTDIR/dry-run" "$@"
	exit $?
fi
FAILED=$(grep -c -E "FAILED|TIMED OUT" "$SUMMARY")

echo
echo "== summary ($OUTDIR/summary.txt); device: $( [ $DRY = 1 ] && echo 'dry run' || nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)"
cat "$SUMMARY"
echo "$FAILED stage(s) failed"
[ "$FAILED" = 0 ]
