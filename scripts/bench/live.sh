#!/bin/sh
# Live-run benchmark (issue "live runs"): how far `hetbatch live`'s measured
# iteration time is from the perf model's prediction, on this host's cpu
# backend, with profiles measured here.  Not part of the test suite: it
# prints medians and errors and judges nothing.
#
#   scripts/bench/live.sh [--quick] [--per-core] [--netns [--rate R]] [--repeats R] [--keep]
#
#  1. In a temporary directory, for each sharing level K the rows need (see
#     below), a database cpu-sK.db: `hetbatch profile --backend cpu --share
#     K` of cifar10 at --scale 0.05 (about 30 ms per 32-sample micro-batch on
#     one core, alone), local batches 32 and 64, up to 3 VSWs; the analytic
#     all-reduce fits of the links not measured (`profile --analytic --gpus
#     cpu`); the intra-node shm fit measured with `mpirun -np 2 hetbatch
#     profile allreduce`.
#  2. Plans from `hetbatch plan --json` on two cluster files written here,
#     bench-1x2 (one node of 2 cpu devices) and bench-2x2 (two such nodes),
#     at global batches chosen so the planner picks 1 to 3 VSWs and 0 to 2
#     GA steps; IIDP, DDP and OptPerf rows.  Every prediction is the
#     planner's (the perf model's); none is computed here.  One- and three-
#     rank rows use `plan --gpus` with an odd GPU count (DDP and OptPerf;
#     IIDP runs GPU pairs).
#  3. R rounds (default 3; --quick 1) of `mpirun -np N hetbatch live --plan P
#     --method M --iters 10 --warmup 2 --out DIR` over every configuration,
#     then one table of medians over the rounds: predicted and measured
#     critical-path iteration (ms), half the measured range over the rounds
#     (+-%), the error, the slowest rank's time to its first all-reduce
#     (comp: data, forward, backward, aggregation) and what follows it
#     (post: all-reduce, optimizer, weight copies, waiting for slower
#     ranks); the mean absolute error, its median and the worst, over all
#     rows and over those that do not oversubscribe the cores; the 1-VSW
#     profile point measured again after the runs (a slower host shows
#     there: other virtual machines' load is invisible from inside); the CPU
#     time other processes here took meanwhile; the total wall time.
#
# What a "device" is decides which configurations can match:
#   default     the whole host is the profiled device (the README's way):
#               the profile's n VSWs run on all cores, live ranks are not
#               bound (mpirun --bind-to none), so ranks x VSWs threads share
#               the cores; a row of R ranks is one of R sharing the host.
#   --per-core  one core is the device, as one GPU is: the profile runs under
#               taskset on core 0 (its VSWs share the core as CUDA streams
#               share a GPU), live ranks are bound one per core
#               (--map-by core --bind-to core); a row of R ranks puts
#               ceil(R / cores) ranks on a core.  VSWs add no throughput on
#               one core, so the planner prefers GA.
# Rows where several ranks share a device (every row in the default mode,
# the 4-rank rows on 2 cores per core) are planned from a profile measured
# the same way: `hetbatch profile --share K` times each point while K - 1
# copies of the same work run beside it, so the perf model sees the device
# the ranks actually get (K = ranks per device; one database per K).  The
# "sh" column gives K; a plan that uses fewer GPUs than its cluster has
# (so another K) is skipped with a message.
#
#   --netns     the per-core mode across hosts (root): two test clusters of
#               network namespaces (scripts/netns-cluster), A = 2 namespaces
#               of 2 cpu devices, B = 4 of 1, every link shaped to --rate R
#               (default 1gbit); the inter-node all-reduce fit measured over
#               A's link (`profile allreduce` across two namespaces) into the
#               profiles; every row runs across 2 to 4 namespaces with `live
#               --map`, DIR/mpirun launching one rank per device, rank r on
#               core r mod cores (mpirun's own binding is per host, and every
#               namespace shares this host's cores).  Both clusters are
#               taken down at the end.
# Options: --quick (5 configurations, one round of 5 timed iterations; 3
# with --netns), --repeats R, --keep (keep the temporary directory and print
# its path).
# Environment: HETBATCH (the binary; default build/cli/hetbatch, built if
# missing), MPIRUN (default mpirun; --oversubscribe is passed, and
# --allow-run-as-root as root).  Needs mpirun able to start 2 processes.
# About 2 to 3 minutes on 2 cores (--quick: 15 s).  Other load on the host
# shows in the +-% column, the speed check and the background line.
set -eu
cd "$(dirname "$0")/../.."
QUICK=0 PERCORE=0 KEEP=0 REPEATS= NETNS=0 RATE=1gbit
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--per-core) PERCORE=1 ;;
	--netns) NETNS=1 PERCORE=1 ;;
	--rate)
		[ $# -ge 2 ] || { echo "live.sh: --rate needs a tc rate (1gbit, 200mbit, ...)" >&2; exit 2; }
		RATE=$2
		shift ;;
	--keep) KEEP=1 ;;
	--repeats)
		[ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || { echo "live.sh: --repeats needs a count >= 1" >&2; exit 2; }
		REPEATS=$2
		shift ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "live.sh: unknown option '$1' (--quick, --per-core, --netns, --rate R, --repeats R, --keep)" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "${HETBATCH:-}" ]; then
	[ -x build/cli/hetbatch ] || sh scripts/build.sh
	HETBATCH=$PWD/build/cli/hetbatch
fi
case $HETBATCH in /*) ;; *) HETBATCH=$PWD/$HETBATCH ;; esac
H=$HETBATCH
[ -x "$H" ] || { echo "live.sh: no hetbatch binary at $H" >&2; exit 2; }
# A one-host launch: no remote agent needed (Open MPI looks for ssh otherwise).
export OMPI_MCA_plm_rsh_agent="${OMPI_MCA_plm_rsh_agent-}"
MPI="${MPIRUN:-mpirun} --oversubscribe"
[ "$(id -u)" = 0 ] && MPI="$MPI --allow-run-as-root"
if [ $NETNS = 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "live.sh: --netns needs root (network namespaces)" >&2; exit 2; }
	BIND="--bind-to none" # rank r on core r mod cores, by bind.sh below
	PIN="taskset -c 0"
	MODE="per-core across network namespaces at $RATE (device = one core; rank r on core r mod cores)"
elif [ $PERCORE = 1 ]; then
	BIND="--map-by core --bind-to core:overload-allowed"
	PIN="taskset -c 0"
	MODE="per-core (device = one core; ranks bound to cores)"
else
	BIND="--bind-to none"
	PIN=""
	MODE="host (device = all cores; ranks unbound)"
fi
CORES=$(nproc)
SCALE=0.05
if [ $QUICK = 1 ]; then
	ITERS=5 WARMUP=1 PITERS=5 REPEATS=${REPEATS:-1}
else
	ITERS=10 WARMUP=2 PITERS=30 REPEATS=${REPEATS:-3}
fi
$MPI -np 2 true </dev/null >/dev/null 2>&1 || {
	echo "live.sh: '$MPI -np 2' cannot start two processes here" >&2
	exit 2
}

T=$(mktemp -d "${TMPDIR:-/tmp}/hb-live-bench.XXXXXX")
ROOT=$PWD
NSA=hba$(($$ % 10000)) NSB=hbb$(($$ % 10000)) # netns-cluster prefixes: at most 8 characters
netns_down() {
	[ $NETNS = 1 ] || return 0
	"$ROOT/scripts/netns-cluster" down --prefix "$NSA" --dir "$T/nsA" >/dev/null 2>&1 || true
	"$ROOT/scripts/netns-cluster" down --prefix "$NSB" --dir "$T/nsB" >/dev/null 2>&1 || true
}
if [ $KEEP = 1 ]; then
	trap 'netns_down; echo "kept: $T"' EXIT
else
	trap 'netns_down; rm -rf "$T"' EXIT
fi
trap 'exit 1' INT TERM HUP
cd "$T"
t_start=$(date +%s.%N)
# busy (user nice system irq softirq) and steal jiffies, for the background line
set -- $(awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat)
busy0=$1 steal0=$2

# ---- 1. profiles ------------------------------------------------------
echo "live-run benchmark: $CORES cores, mode $MODE"
echo "cifar10 at scale $SCALE; per configuration $REPEATS round(s) of $ITERS timed + $WARMUP warm-up iterations;" \
	"load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
# Ranks per device of R ranks on this host.
share_of_ranks() {
	if [ $PERCORE = 1 ]; then echo $((($1 + CORES - 1) / CORES)); else echo "$1"; fi
}
# The ranks of a row: every GPU of its cluster, or those its --gpus names.
ranks_of() { # cluster [plan options]
	g=$(echo "$2" | sed -n 's/.*--gpus \([^ ]*\).*/\1/p')
	if [ -n "$g" ]; then
		echo "$g" | tr ',' '\n' | awk -F: '{ n += $2 } END { print n }'
	else
		case $1 in bench-1x2) echo 2 ;; bench-2x2 | nsA | nsB) echo 4 ;; *) echo 2 ;; esac
	fi
}
profile_db() { # K
	$PIN "$H" -q profile --backend cpu --models cifar10 --scale $SCALE --local-bs 32,64 --max-vsw 3 \
		--iters $PITERS --warmup 2 --share "$1" --db "cpu-s$1.db" >"profile-s$1.log" 2>&1 ||
		{ cat "profile-s$1.log" >&2; exit 1; }
	"$H" -q profile --analytic --gpus cpu --models cifar10 --db "cpu-s$1.db" >/dev/null
	# Gradient buckets at this scale are 47 and 67 KiB.
	$MPI -np 2 $BIND "$H" -q profile allreduce --backend cpu --link shm --sizes 16K,32K,64K,128K,256K \
		--iters 50 --db "cpu-s$1.db" </dev/null >"allreduce-s$1.log" 2>&1 ||
		{ cat "allreduce-s$1.log" >&2; exit 1; }
	if [ $NETNS = 1 ]; then
		# the inter-node link of both clusters (the same class, tcp-netns-R)
		"$T/nsA/mpirun" -np 2 --host "${NSA}0,${NSA}1" "$H" -q profile allreduce --backend cpu \
			--cluster "$T/nsA/cluster.json" --sizes 16K,32K,64K,128K,256K --iters 50 --db "cpu-s$1.db" \
			</dev/null >"allreduce-inter-s$1.log" 2>&1 || { cat "allreduce-inter-s$1.log" >&2; exit 1; }
	fi
	echo "profile, 1 of $1 sharing (ms per iteration of all VSWs; mean of $PITERS):"
	sed -n '/ lbs  vsw/,/^$/p' "profile-s$1.log" | sed '/^$/d; s/^/  /'
	if [ $NETNS = 1 ]; then
		echo "all-reduce: $(grep 't_ms =' "allreduce-s$1.log"); $(grep 't_ms =' "allreduce-inter-s$1.log")"
	else
		echo "all-reduce: $(grep 't_ms =' "allreduce-s$1.log"); inter-node (tcp-loopback): analytic fit"
	fi
}
# ---- 2. clusters and the configurations -------------------------------
python3 - <<'EOF'
import json
for name, per_node in (("bench-1x2", [2]), ("bench-2x2", [2, 2])):
    groups = [{"name": "node%d" % i, "gpu": "cpu", "nodes": 1, "gpus_per_node": k,
               "intra_link": "shm", "intra_bw": 10e9, "inter_link": "tcp-loopback", "inter_bw": 2.5e9}
              for i, k in enumerate(per_node)]
    with open(name + ".json", "w") as f:
        json.dump({"name": name, "display": "live.sh: %d node(s) of 2 cpu devices" % len(per_node),
                   "storage_bw": 1e9, "restart_latency_s": 2, "groups": groups,
                   "source": "scripts/bench/live.sh"}, f, indent=1)
EOF
# cluster  global-batch  method  [plan options].  What the planner picked
# on the author's host (default mode) is below; another profile may make it
# pick otherwise, and the table shows what ran.
#   1x2 iidp 64: VSW 1; 128: VSW 2; 192: VSW 3; 512: VSW 2 GA 1; 1152: VSW 3 GA 2;
#   1x2 ddp 128: B_L 64; 384: B_L 64 GA 2; optperf 64: 32 + 32;
#   2x2 iidp 128: VSW 1; 192: VSW 1 + 2; 384: VSW 3; ddp 512: GA 1; optperf 192: 48 x 4
# "--gpus node0:1" and "node0:2,node1:1" make one- and three-rank rows
# (IIDP runs GPU pairs, so only DDP and OptPerf rows have them).
if [ $NETNS = 1 ]; then
	A0=${NSA}0 A1=${NSA}1 B0=${NSB}0 B1=${NSB}1 B2=${NSB}2
	for c in "A $NSA 2 2" "B $NSB 4 1"; do
		set -- $c
		"$ROOT/scripts/netns-cluster" up "$3" --slots "$4" --rate "$RATE" --prefix "$2" --dir "$T/ns$1" \
			>"netns-$1.log" 2>&1 || { cat "netns-$1.log" >&2; exit 1; }
		ln -sf "$T/ns$1/cluster.json" "ns$1.json"
	done
	# rank r on core r mod cores: mpirun binds per host, and the
	# namespaces share this host's cores
	printf '#!/bin/sh\nexec taskset -c $((${OMPI_COMM_WORLD_RANK:-0} %% %s)) "$@"\n' "$CORES" >bind.sh
	chmod +x bind.sh
	if [ $QUICK = 1 ]; then
		CONFIGS="nsA 128 iidp
nsA 128 ddp --gpus $A0:1,$A1:1
nsB 128 ddp"
	else
		CONFIGS="nsA 128 iidp
nsA 192 iidp
nsA 384 iidp
nsA 512 ddp
nsA 192 optperf
nsA 96 ddp --gpus $A0:2,$A1:1
nsA 128 optperf --gpus $A0:2,$A1:1
nsA 64 ddp --gpus $A0:1,$A1:1
nsA 128 ddp --gpus $A0:1,$A1:1
nsA 64 optperf --gpus $A0:1,$A1:1
nsB 128 ddp
nsB 256 ddp
nsB 128 optperf
nsB 96 ddp --gpus $B0:1,$B1:1,$B2:1"
	fi
elif [ $QUICK = 1 ]; then
	CONFIGS="bench-1x2 64 iidp
bench-1x2 128 iidp
bench-1x2 384 ddp
bench-1x2 64 optperf
bench-1x2 64 ddp --gpus node0:1
bench-2x2 128 iidp"
else
	CONFIGS="bench-1x2 64 iidp
bench-1x2 128 iidp
bench-1x2 192 iidp
bench-1x2 128 iidp --sync sws
bench-1x2 512 iidp
bench-1x2 1152 iidp
bench-1x2 128 ddp
bench-1x2 384 ddp
bench-1x2 64 optperf
bench-1x2 64 ddp --gpus node0:1
bench-1x2 128 ddp --gpus node0:1
bench-2x2 128 iidp
bench-2x2 192 iidp
bench-2x2 384 iidp
bench-2x2 512 ddp
bench-2x2 192 optperf
bench-2x2 96 ddp --gpus node0:2,node1:1
bench-2x2 128 optperf --gpus node0:2,node1:1"
fi

SHARES=$(echo "$CONFIGS" | while read -r cl gbs method popts; do share_of_ranks "$(ranks_of "$cl" "$popts")"; done | sort -un)
for K in $SHARES; do
	profile_db "$K"
done

# The ranks, the per-node VSW, GA and local batch, and the threads of a
# plan's row.
describe() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1])); m = sys.argv[2]
nodes = {}  # node -> [ranks, vsw, ga, lbs], in order
if m == "iidp":
    s = p["iidp"]
    if s.get("found"):
        for pr in s["pairs"]:
            nodes.setdefault(pr["node"], [0, pr["n_vsw"], pr["n_ga"], s["local_batch"]])[0] += 2
else:
    b = p["baselines_on_requested_gpus"]; s = b[m]
    lbs = {x["node"]: x["local_batch"] for x in s.get("local_batches", [])}
    for g in b["gpus"]:
        nodes[g["node"]] = [g["gpus"], 1, s.get("ga_steps", 0), lbs.get(g["node"], s.get("local_batch", 0))]
if not s.get("found"):
    sys.exit(1)
v = list(nodes.values())
j = lambda k: "+".join(str(int(x[k])) for x in v)
print(sum(int(x[0]) for x in v), j(1), j(2), j(3), sum(int(x[0] * x[1]) for x in v))
# for --netns: mpirun's --host (each node is a namespace of its name) and live's --map
sys.stderr.write(",".join("%s:%d" % (n, x[0]) for n, x in nodes.items()) + " "
                 + ",".join("%s=%s" % (n, n) for n in nodes) + "\n")
EOF
}

# ---- 3. live runs -----------------------------------------------------
# Plans first, then the rounds over all of them, so a burst of background
# load lands on different configurations in different rounds.
: >configs.tsv
k=0
echo "$CONFIGS" | while read -r cl gbs method popts; do
	k=$((k + 1))
	plan=plan-$cl-$gbs$(echo "$popts" | tr -d ' -').json
	K=$(share_of_ranks "$(ranks_of "$cl" "$popts")")
	[ -f "$plan" ] || "$H" -q plan --cluster "$cl.json" --model cifar10 --gbs "$gbs" --db "cpu-s$K.db" $popts \
		--out "$plan" >/dev/null 2>"plan$k.err" || { echo "plan $cl $gbs: $(cat "plan$k.err")" >&2; continue; }
	d=$(describe "$plan" "$method" 2>"where$k.txt") || { echo "$cl gbs $gbs: no $method row in the plan" >&2; continue; }
	set -- $d
	if [ "$(share_of_ranks "$1")" != "$K" ]; then
		echo "$cl gbs $gbs $method: the plan runs $1 ranks, not $(ranks_of "$cl" "$popts"); its profile assumed $K per device; skipped" >&2
		continue
	fi
	label="$cl gbs $gbs${popts:+ $(echo "$popts" | sed 's/--sync //; s/--gpus //')}"
	printf '%s\t%s\t%s\t%s\t%s %s\t%s\n' "$k" "$label" "$method" "$plan" "$d" "$K" "$(cat "where$k.txt")" \
		>>configs.tsv
done
: >runs.tsv
r=0
while [ $r -lt "$REPEATS" ]; do
	r=$((r + 1))
	while IFS="$(printf '\t')" read -r k label method plan d where; do
		set -- $d
		LAUNCH="$MPI -np $1 $BIND"
		LIVEOPTS=
		if [ $NETNS = 1 ]; then
			n=$1
			set -- $where
			case $label in nsA*) ns=nsA ;; *) ns=nsB ;; esac
			LAUNCH="$T/$ns/mpirun -np $n --host $1 $T/bind.sh"
			LIVEOPTS="--map $2"
		fi
		t0=$(date +%s.%N)
		if $LAUNCH "$H" -q live --plan "$plan" --method "$method" --scale $SCALE $LIVEOPTS \
			--iters $ITERS --warmup $WARMUP --out "res$k-$r" </dev/null >"live$k-$r.log" 2>&1; then
			t1=$(date +%s.%N)
			printf '%s\tres%s-%s\t%s\n' "$k" "$k" "$r" "$(awk "BEGIN { print $t1 - $t0 }")" >>runs.tsv
		else
			echo "$label $method (round $r): hetbatch live failed:" >&2
			tail -5 "live$k-$r.log" >&2
		fi
	done <configs.tsv
done

# ---- 4. the table -----------------------------------------------------
python3 - "$CORES" "$PERCORE" <<'EOF'
import csv, json, statistics, sys
cores, percore = int(sys.argv[1]), sys.argv[2] == "1"
runs = {}
for k, res, wall in csv.reader(open("runs.tsv"), delimiter="\t"):
    s = json.load(open(res + "/summary.json"))
    per = [r for r in csv.DictReader(open(res + "/live.csv")) if r["rank"] != "critical"]
    comp = max(float(r["compute_s"]) for r in per)  # the slowest rank's time to its first all-reduce
    runs.setdefault(k, []).append((s["predicted_s"], s["measured_s"], comp, float(wall)))
print()
print("%-36s %-7s %5s %5s %5s %5s %4s %2s %9s %9s %5s %8s %9s %8s %6s"
      % ("config", "method", "ranks", "VSW", "GA", "B_L", "load", "sh", "pred_ms", "meas_ms", "+-%", "error",
         "comp_ms", "post_ms", "run_s"))
errs, byshare = [], {}
for row in csv.reader(open("configs.tsv"), delimiter="\t"):
    k, label, method, plan, d = row[:5]
    if k not in runs:
        continue
    ranks, vsw, ga, lbs, threads, share = d.split()
    ranks, threads = int(ranks), int(threads)
    v = runs[k]
    pred = v[0][0]
    meas = statistics.median(x[1] for x in v)
    comp = statistics.median(x[2] for x in v)
    spread = (max(x[1] for x in v) - min(x[1] for x in v)) / 2 / meas
    # host: threads per core; per-core: ranks on the busiest core
    load = -(-ranks // cores) if percore else threads / cores
    e = meas / pred - 1
    errs.append(abs(e))
    byshare.setdefault(int(share), []).append(abs(e))
    print("%-36s %-7s %5d %5s %5s %5s %4.3g %2s %9.2f %9.2f %5.1f %+7.1f%% %9.2f %8.2f %6.1f"
          % (label, method, ranks, vsw, ga, lbs, load, share, 1e3 * pred, 1e3 * meas, 100 * spread, 100 * e,
             1e3 * comp, 1e3 * (meas - comp), sum(x[3] for x in v)))
def stats(name, v):
    if v:
        print("%-20s %2d rows: mean %5.1f %%, median %5.1f %%, worst %5.1f %%"
              % (name, len(v), 100 * statistics.mean(v), 100 * statistics.median(v), 100 * max(v)))
    else:
        print("%-20s  0 rows" % name)
print()
stats("|error|, all", errs)
for k in sorted(byshare):
    stats("|error|, %d per device" % k, byshare[k])
EOF
# The host's speed then and now: the 1-VSW, B_L 32 profile point again, at
# the first sharing level.
K=$(echo "$SHARES" | head -1)
$PIN "$H" -q profile --backend cpu --models cifar10 --scale $SCALE --local-bs 32 --max-vsw 1 \
	--iters $PITERS --warmup 2 --share "$K" --db check.db >check.log 2>&1 || { cat check.log >&2; exit 1; }
awk -v k="$K" '$1 == 32 && $2 == 1 && NF == 10 { t[FILENAME] = $8 }
	END { p = "profile-s" k ".log"; printf "speed check (1 of %d sharing): 1 VSW at B_L 32 took %.2f ms when profiled, %.2f ms after the runs (%+.1f %%)\n",
		k, t[p], t["check.log"], 100 * (t["check.log"] / t[p] - 1) }' "profile-s$K.log" check.log
# Other processes' CPU time: the busy jiffies less this script's children.
set -- $(awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat)
busy1=$1 steal1=$2
t_end=$(date +%s.%N)
times >times.txt  # not in a pipeline: a subshell would report its own (no) children
mine=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } print s }' times.txt)
# --netns: the ranks run under the namespaces' Open MPI daemons, whose CPU
# time does not come back to this script as its children's
[ $NETNS = 1 ] && mine=-1
awk -v b0="$busy0" -v b1="$busy1" -v s0="$steal0" -v s1="$steal1" -v hz="$(getconf CLK_TCK)" -v mine="$mine" \
	-v t0="$t_start" -v t1="$t_end" -v n="$CORES" -v la="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
	if (mine < 0) {
		printf "background: not measured with --netns (the ranks run outside the children of this script); steal %.1f %%; load average at end %s\n",
			100 * (s1 - s0) / hz / (n * (t1 - t0)), la
		printf "total wall time %.0f s; target (issue): mean absolute error under 10 %%\n", t1 - t0
		exit
	}
	other = (b1 - b0) / hz - mine; if (other < 0) other = 0
	printf "background: other processes %.1f core-s (%.0f %% of the cores), steal %.1f %%; load average at end %s\n",
		other, 100 * other / (n * (t1 - t0)), 100 * (s1 - s0) / hz / (n * (t1 - t0)), la
	if (other > 0.05 * n * (t1 - t0))
		print "warning: other processes took more than 5 % of the cores: the times above are disturbed"
	printf "total wall time %.0f s; target (issue): mean absolute error under 10 %%\n", t1 - t0 }'
