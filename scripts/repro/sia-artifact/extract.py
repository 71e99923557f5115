#!/usr/bin/env python3
"""Turn logs of Sia's own simulator (siasosp23/artifacts, sia-simulator/:
the --output file of multi_simulator.py or multi_simulator_unaware.py, one
JSON record per scheduling round) into one CSV row per job: what hetbatch's
comparison with Sia's simulator reads.

    extract.py LOG... > jobs.csv          (LOG named POLICY-TRACE-K.log)
    extract.py --run N LOG... > reruns.csv
                                          the same rows after a leading run
                                          column (N >= 2: another run of
                                          workloads jobs.csv holds as run 1)
    extract.py --summary-json LOG...      the artifact's summary.json for
                                          those logs (its utils/print_run_stats.py
                                          reads it; one policy per call)
    extract.py --stdout OUT...            a run that did not finish: the jobs
                                          completed so far, from its stdout
                                          (OUT named POLICY-TRACE-K.out; JCT
                                          only, other columns empty)
    extract.py --stats jobs.csv           per policy and trace: jobs, mean
                                          and p99 JCT, makespan, GPU-hours per
                                          job, as print_run_stats computes them

Columns: trace, workload, policy, job, application, submit_s, start_s (the
round whose logged allocation first holds a GPU), restarts (the artifact's
num_restarts: (re)starts after the first), gpu_s (GPUs held x round length,
summed over rounds while the job is incomplete: print_run_stats' GPU
seconds), gpu_s_by_type ("type:seconds" joined by ';', the artifact's type
names aws, rtx, dgx-ext), first_type (the GPU type of its first
allocation), finish_s, jct_s.  Only jobs that completed are written.

Round semantics (cluster.py:Cluster.step): each round first advances every
job over the round with its current allocation, then asks the policy and
logs the new allocation at the round's end time t; so the allocation
logged at t is held during (t, t + interval].
"""
import json
import os
import sys


def parse_name(path):
    base = os.path.basename(path)
    if not base.endswith(".log"):
        sys.exit("%s: expected a log named POLICY-TRACE-K.log" % path)
    parts = base[:-4].split("-")
    if len(parts) < 3 or not parts[-1].isdigit():
        sys.exit("%s: expected a log named POLICY-TRACE-K.log" % path)
    return "-".join(parts[:-2]), parts[-2], parts[-1]


def read_log(path):
    """Per job: submit, start, restarts, GPU seconds per type, finish."""
    jobs = {}
    times = []
    for lineno, line in enumerate(open(path), 1):
        try:
            rec = json.loads(line)
        except ValueError as e:
            sys.exit("%s:%d: not a JSON record: %s" % (path, lineno, e))
        times.append(rec["timestamp"])
        jobs_now = rec["submitted_jobs"]
        for j in jobs_now:
            d = jobs.setdefault(j["name"], {"submit": j["submission_time"], "start": None, "gpu_s": {},
                                            "first_type": None, "restarts": 0, "finish": None})
            alloc = j["allocation"]
            held = alloc and alloc[0] is not None and len(alloc[1]) > 0
            if held and d["start"] is None:
                d["start"] = rec["timestamp"]
                d["first_type"] = alloc[0]
            if held and j["completion_time"] is None:
                d["gpu_s"].setdefault(alloc[0], 0)
                d["gpu_s"][alloc[0]] += len(alloc[1])  # x interval below
            d["restarts"] = j["num_restarts"] or 0
            d["finish"] = j["completion_time"]
    if len(times) < 2:
        sys.exit("%s: fewer than two rounds logged" % path)
    interval = times[1] - times[0]
    for d in jobs.values():
        d["gpu_s"] = {t: n * interval for t, n in d["gpu_s"].items()}
    return jobs


def app_of(job):
    return job.rsplit("-", 1)[0]


def fmt(x):
    return "%d" % x if float(x) == int(x) else "%.3f" % x


def main(paths, run=None):
    pre = "" if run is None else "%d," % run
    print(("" if run is None else "run,") + "trace,workload,policy,job,application,submit_s,start_s,restarts,gpu_s,"
          "gpu_s_by_type,first_type,finish_s,jct_s")
    for path in paths:
        policy, trace, workload = parse_name(path)
        for name, d in read_log(path).items():
            if d["finish"] is None:
                continue
            by_type = ";".join("%s:%s" % (t, fmt(s)) for t, s in sorted(d["gpu_s"].items()))
            print(pre + "%s,%s,%s,%s,%s,%s,%s,%d,%s,%s,%s,%s,%s" % (
                trace, workload, policy, name, app_of(name), fmt(d["submit"]),
                fmt(d["start"]) if d["start"] is not None else "", d["restarts"],
                fmt(sum(d["gpu_s"].values())), by_type, d["first_type"] or "", fmt(d["finish"]),
                fmt(d["finish"] - d["submit"])))


def from_stdout(paths):
    """Each round prints 'Completed jobs:' and then a dict of JCTs (s)."""
    import ast
    import re
    print("trace,workload,policy,job,application,submit_s,start_s,restarts,gpu_s,gpu_s_by_type,first_type,"
          "finish_s,jct_s")
    for path in paths:
        if not path.endswith(".out"):
            sys.exit("%s: expected a stdout file named POLICY-TRACE-K.out" % path)
        policy, trace, workload = parse_name(path[:-4] + ".log")
        last, reached, take = None, None, False
        for line in open(path):
            m = re.search(r"SIMULATOR TIME:\s*(\d+)", line)
            if m:
                reached = int(m.group(1))
            if take:
                last = ast.literal_eval(line.strip())
                take = False
            take = line.startswith("Completed jobs:")
        if last is None:
            sys.exit("%s: no 'Completed jobs:' line" % path)
        sys.stderr.write("%s: simulated time reached %s s, %d jobs completed\n" % (path, reached, len(last)))
        for name, jct in last.items():
            print("%s,%s,%s,%s,%s,,,,,,,,%s" % (trace, workload, policy, name, app_of(name), fmt(jct)))


def summary_json(paths):
    """summary.json as multi_simulator.py writes it for a directory run."""
    doc = {"jcts": {}, "avgs": {}}
    for path in paths:
        _, _, workload = parse_name(path)
        jobs = read_log(path)
        name = "workload-%s" % workload
        doc["jcts"][name] = {n: d["finish"] - d["submit"] for n, d in jobs.items() if d["finish"] is not None}
        doc["avgs"][name] = sum(doc["jcts"][name].values()) / len(doc["jcts"][name])
    doc["mean"] = sum(doc["avgs"].values()) / len(doc["avgs"])
    json.dump(doc, sys.stdout, indent=4)
    print()


def stats(path):
    import csv
    groups = {}
    for row in csv.DictReader(open(path)):
        groups.setdefault((row["policy"], row["trace"]), []).append(row)
    print("policy,trace,workloads,jobs,mean_jct_h,p99_jct_h,mean_makespan_h,gpu_h_per_job")
    for (policy, trace), rows in sorted(groups.items()):
        jcts = sorted(float(r["jct_s"]) for r in rows)
        spans = {}
        for r in rows:
            lo, hi = spans.get(r["workload"], (float("inf"), 0.0))
            spans[r["workload"]] = (min(lo, float(r["submit_s"])), max(hi, float(r["finish_s"])))
        makespan = sum(hi - lo for lo, hi in spans.values()) / len(spans)
        gpu_h = sum(float(r["gpu_s"]) for r in rows) / 3600 / len(rows)
        print("%s,%s,%d,%d,%.4f,%.4f,%.4f,%.4f" % (policy, trace, len(spans), len(rows), sum(jcts) / len(jcts) / 3600,
                                                   jcts[int(0.99 * len(jcts))] / 3600, makespan / 3600, gpu_h))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--summary-json":
        summary_json(sys.argv[2:])
    elif len(sys.argv) > 2 and sys.argv[1] == "--stdout":
        from_stdout(sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "--stats":
        stats(sys.argv[2])
    elif len(sys.argv) > 3 and sys.argv[1] == "--run":
        if not sys.argv[2].isdigit() or int(sys.argv[2]) < 2:
            sys.exit("extract.py: --run: '%s' is not a whole number >= 2 (run 1 is jobs.csv)" % sys.argv[2])
        main(sys.argv[3:], int(sys.argv[2]))
    elif len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        main(sys.argv[1:])
    else:
        sys.exit(__doc__)
