#!/bin/sh
# Speed beside Sia's own simulator (issue 42, "Must show"): CPU seconds of
# hetbatch's sia and gavel-tput per 160-job workload of Sia's artifact
# (Saturn 1-10, Philly 1-4 on sia-hetero, `--fidelity sia`, as
# scripts/repro/sia-sim runs them), the median over workloads and repeats,
# beside the CPU seconds Sia's Python simulator took per workload on this
# machine (scripts/repro/sia-artifact/README.md: gavel 24-51 CPU-s on
# Saturn, 26-35 on Philly; sia 212-293 and 199-278), and the ratio.  No
# thresholds: it reports.
#
#   scripts/bench/sia-speed.sh SIA_DIR [REPEATS] [BUILD]
#
# SIA_DIR: an extracted sia-simulator/ folder (see scripts/repro/sia-sim);
# without it the script exits 77.  CPU = user + system of the hetbatch
# process (one policy per process, fairness off, summary-level events),
# including loading the profiles and writing results.  One process at a
# time: the machine is shared.
set -eu
cd "$(dirname "$0")/../.."
SIA=${1:-${HETBATCH_SIA_ARTIFACT:-}}
REPS=${2:-3}
BUILD=${3:-build}
if [ -z "$SIA" ] || [ ! -d "$SIA/traces" ]; then
	echo "sia-speed: give SIA_DIR, an extracted sia-simulator/ folder (scripts/repro/sia-sim --help); skipped" >&2
	exit 77
fi
[ -x "$BUILD/cli/hetbatch" ] || BUILD_DIR=$BUILD sh scripts/build.sh
python3 - "$SIA" "$REPS" "$BUILD/cli/hetbatch" <<'PY'
import os, resource, shutil, statistics, subprocess, sys, tempfile
sia, reps, hb = sys.argv[1], int(sys.argv[2]), sys.argv[3]
tmp = tempfile.mkdtemp(prefix="hetbatch-sia-speed.")
db = os.path.join(tmp, "sia.db")
for cmd in ([hb, "-q", "profile", "--analytic", "--db", db, "--gpus", "t4,a100-40gb,rtx-2080ti"],
            [hb, "-q", "import", "sia", os.path.join(sia, "traces"), "--db", db]):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# Sia's simulator on this machine, CPU-s per workload (README's table).
ART = {("gavel", "saturn"): (24, 51), ("gavel", "philly"): (26, 35),
       ("sia", "saturn"): (212, 293), ("sia", "philly"): (199, 278)}
WL = {"saturn": range(1, 11), "philly": range(1, 5)}


def cpu_of(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


print("%-6s %-6s %5s %12s %10s %14s %16s" % ("policy", "trace", "runs", "hetbatch s", "max s", "Sia-sim CPU-s",
                                              "Sia-sim / hetb."))
for (pol, hpol) in (("gavel", "gavel-tput"), ("sia", "sia")):
    for trace in ("saturn", "philly"):
        got = []
        for w in WL[trace]:
            wl = os.path.join(sia, "workloads", trace, "workload-%d.csv" % w)
            for _ in range(reps):
                out = os.path.join(tmp, "run")
                shutil.rmtree(out, ignore_errors=True)
                got.append(cpu_of(["nice", hb, "-q", "sim", "--cluster", "sia-hetero", "--trace", wl, "--db", db,
                                   "--no-fairness", "--fidelity", "sia", "--events", "summary", "--threads", "1",
                                   "--policy", hpol, "--out", out]))
        med = statistics.median(got)
        lo, hi = ART[(pol, trace)]
        print("%-6s %-6s %5d %12.3f %10.3f %14s %16s" % (pol, trace, len(got), med, max(got), "%d-%d" % (lo, hi),
                                                        "%.0f-%.0fx" % (lo / med, hi / med)))
shutil.rmtree(tmp, ignore_errors=True)
PY
