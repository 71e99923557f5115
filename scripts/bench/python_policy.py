#!/usr/bin/env python3
"""python_policy.py: what a policy written in Python costs per decision,
beside the same rule in C (issue 43's "Must show").

The rule is least attained service: examples/python/las.py (Python,
hetbatch.Policy) and examples/policy-plugin/las.c (a C plugin, built here
with cc), which give the same results byte for byte
(python/tests/test_policy.py).  Each case replays a trace under each of
them alone, REPEATS times, with --record-wall-time, and reads the engine's
own timing of the arbiter's rounds (cluster_summary.sched_ms_per_round: the
wall time inside on_round, sim/sim.c) and the run's wall time.  A round's
work grows with the jobs in the system, so it also reports the cost per
job a round considered (counted in one more run of the Python policy).
Medians; no thresholds.

    python3 scripts/bench/python_policy.py [--repeats N] [--philly]

Needs the package (pip install ./python, or PYTHONPATH=python with
$HETBATCH_LIBRARY) and ../shared.  Cases: Pollux's workload-1 (160 jobs) on
pollux-t4 (64 T4, contended: LAS preempts 2.5 times per job); with
--philly also the whole philly.csv (82247 jobs) on the philly cluster.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))

import hetbatch  # noqa: E402
import las  # noqa: E402

SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data", "pollux")


class CountingLAS(las.LAS):
    """las-py that counts the jobs each round considers."""
    name = "las-py-count"
    rounds = visited = 0

    def on_round(self, sim):
        CountingLAS.rounds += 1
        CountingLAS.visited += sum(1 for j in self.arrived if j.state not in (hetbatch.policy.DONE,
                                                                               hetbatch.policy.DROPPED))
        super().on_round(sim)


def build_plugin(tmp):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        sys.exit("python_policy: no C compiler for examples/policy-plugin/las.c")
    so = os.path.join(tmp, "las.so")
    subprocess.run([cc, "-std=c11", "-O2", "-shared", "-fPIC", "-I", os.path.join(ROOT, "include"), "-o", so,
                    os.path.join(ROOT, "examples", "policy-plugin", "las.c")], check=True)
    return so


def one(cluster, trace, policy, plugin):
    df = hetbatch.sim(cluster, trace=trace, policies=policy, events="none",
                      opts=["--policy-plugin", plugin, "--record-wall-time"])
    row = df.iloc[0]
    runs = df.attrs["results"].runs
    return float(row["sched_ms_per_round"]), int(row["sched_rounds"]), float(runs["wall_s"].iloc[0]), \
        float(row["jct_mean_h"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--philly", action="store_true", help="also the whole philly.csv (about a minute)")
    a = ap.parse_args()
    cases = [("pollux-t4", os.path.join(SHARED, "workloads", "workload-1.csv"))]
    if a.philly:
        cases.append(("philly", os.path.join(SHARED, "philly.csv")))
    for _, t in cases:
        if not os.path.exists(t):
            sys.exit("python_policy: %s is missing (../shared)" % t)
    hetbatch.register_policy(las.LAS)
    hetbatch.register_policy(CountingLAS)
    tmp = tempfile.mkdtemp(prefix="hetbatch-pypolicy.")
    try:
        plugin = build_plugin(tmp)
        print("%-10s %-7s %7s %10s %10s %9s %12s" % ("cluster", "policy", "rounds", "ms/round", "wall_s",
                                                   "jobs/rnd", "us/job-rnd"))
        for cluster, trace in cases:
            CountingLAS.rounds = CountingLAS.visited = 0
            one(cluster, trace, "las-py-count", plugin)
            per_round = CountingLAS.visited / max(CountingLAS.rounds, 1)
            med = {}
            for pol in ("las", "las-py"):
                r = [one(cluster, trace, pol, plugin) for _ in range(a.repeats)]
                ms, rounds, wall = (statistics.median(x[i] for x in r) for i in range(3))
                med[pol] = (ms, wall)
                print("%-10s %-7s %7d %10.4f %10.3f %9.1f %12.3f" % (cluster, pol, rounds, ms, wall, per_round,
                                                                   1e3 * ms / max(per_round, 1e-9)))
            (cms, cw), (pms, pw) = med["las"], med["las-py"]
            print("%-10s ratio   python/C: %.1fx per round (%+.3f ms), %.2fx wall; %.2f us more per job a "
                  "round considers" % (cluster, pms / cms, pms - cms, pw / cw, 1e3 * (pms - cms) / max(per_round, 1e-9)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
