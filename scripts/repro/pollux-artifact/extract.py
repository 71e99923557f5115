#!/usr/bin/env python3
"""Turn logs of Pollux's own simulator (its --output files, one JSON record
per 60 s step) into one CSV row per job: what hetbatch's per-job comparison
(scripts/repro/pollux-compare) reads.

    extract.py LOG... > jobs.csv      (LOG named POLICY-WORKLOAD.log)
    extract.py --summary SUMMARY.json POLICY [WORKLOAD...]   (no header)

The second form reads a summary.json the artifact wrote (e.g. its
published results-jobload/POLICY-1.0/summary.json), which keeps only each
job's JCT: the other columns are left empty.

Columns: workload, policy, job, submit_s, start_s (the step whose
allocation first holds a GPU), restarts (the artifact's num_restarts:
allocation changes after the first), gpu_s (GPUs held x 60 s, summed over
steps), finish_s, jct_s.
"""
import json
import os
import sys


def main(paths):
    print("workload,policy,job,submit_s,start_s,restarts,gpu_s,finish_s,jct_s")
    for path in paths:
        base = os.path.basename(path)[:-4]
        policy, workload = base.rsplit("-", 1)
        jobs = {}
        prev_t = 0
        for line in open(path):
            rec = json.loads(line)
            t = rec["timestamp"]
            for j in rec["submitted_jobs"]:
                d = jobs.setdefault(j["name"], {"submit": j["submission_time"], "start": None,
                                                "gpu_s": 0, "restarts": 0, "finish": None})
                # The allocation logged at t is held during (t, t + 60].
                if j["allocation"] and d["start"] is None:
                    d["start"] = t
                if j["allocation"] and j["completion_time"] is None:
                    d["gpu_s"] += len(j["allocation"]) * (t - prev_t if prev_t else 60)
                d["restarts"] = j["num_restarts"] or 0
                d["finish"] = j["completion_time"]
            prev_t = t
        for name, d in jobs.items():
            if d["finish"] is None:
                continue
            print("%s,%s,%s,%d,%d,%d,%d,%d,%d" % (workload, policy, name, d["submit"], d["start"], d["restarts"],
                                                   d["gpu_s"], d["finish"], d["finish"] - d["submit"]))


def summary(path, policy, workloads):
    doc = json.load(open(path))
    for name, jcts in sorted(doc["jcts"].items()):
        w = name.split("-")[-1]
        if workloads and w not in workloads:
            continue
        for job, jct in jcts.items():
            print("%s,%s,%s,,,,,,%d" % (w, policy, job, jct))


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--summary":
        summary(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        main(sys.argv[1:])
