#!/usr/bin/env python3
"""A JSON file of the user's own works wherever a catalog name does
(issue 39, item 3), one check per place that takes a name:

1. `profile --analytic --gpus FILE --models FILE`: the file's GPU and model
   are profiled under their own names, beside catalog names in the same
   list; a missing file, a directory and a malformed file are errors that
   name the option and the file, and write no database.
2. A job spec whose `model` field names a JSON file: found beside the trace
   (run from another directory), the job runs as that model; a missing
   file is an error naming the trace line and the field.
3. A sweep config: `add[].gpu` naming a GPU file beside the config, and the
   trace's model file: every point runs, the added GPUs are the file's.
4. `live --policy ... --model FILE`: the file is resolved (the run then
   stops at the missing profile of that model, naming it); a missing file
   is an error naming --model.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

HB = os.environ["HETBATCH"]


def run(*args, ok=True, cwd=None):
    p = subprocess.run([HB, *args], capture_output=True, text=True, cwd=cwd)
    if ok and p.returncode != 0:
        sys.exit("FAIL: %s -> %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    if not ok and p.returncode == 0:
        sys.exit("FAIL: %s succeeded, expected an error" % " ".join(args))
    return p


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def entry(kind, name, new_name, **changes):
    """A catalog entry as `catalog KIND NAME --json` prints it, renamed."""
    e = json.loads(run("catalog", kind, name, "--json").stdout)
    e["name"] = new_name
    if "aliases" in e:
        e["aliases"] = []
    if "display" in e:
        e["display"] = new_name.upper()
    e.update(changes)
    return e


def profile_files(tmp):
    l4 = os.path.join(tmp, "l4.json")
    with open(l4, "w") as f:
        json.dump(entry("gpus", "t4", "l4", fp32_tflops=30.3, mem_bytes=24 * 2**30, mem_bw=300e9), f)
    vit = os.path.join(tmp, "vit-mine.json")
    with open(vit, "w") as f:
        json.dump(entry("models", "vit", "vit-mine"), f)
    db = os.path.join(tmp, "mine.db")
    run("-q", "profile", "--analytic", "--db", db, "--gpus", "l4.json,t4", "--models", "vit-mine.json,resnet50",
        cwd=tmp)
    with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
        pairs = set(c.execute("SELECT DISTINCT gpu, model FROM compute"))
        t = dict(((g, m), s) for g, m, s in c.execute(
            "SELECT gpu, model, min(total_s / local_bs) FROM compute GROUP BY gpu, model"))
    want = {(g, m) for g in ("l4", "t4") for m in ("vit-mine", "resnet50")}
    check(pairs == want, "profiled pairs %s, expected %s" % (sorted(pairs), sorted(want)))
    # The file's numbers are used, not the GPU it was copied from.
    check(t[("l4", "resnet50")] < t[("t4", "resnet50")], "l4 (30.3 TFLOPS) is not faster than t4: %s" % t)
    for bad, why in (("nope.json", "no such file"), (tmp, "is a directory")):
        p = run("-q", "profile", "--analytic", "--db", os.path.join(tmp, "bad.db"), "--gpus", bad, ok=False)
        check("--gpus" in p.stderr and why in p.stderr, "--gpus %s: %r" % (bad, p.stderr))
    broken = os.path.join(tmp, "broken.json")
    with open(broken, "w") as f:
        f.write('{"name": "x", "fp32_tflops": ')
    p = run("-q", "profile", "--analytic", "--db", os.path.join(tmp, "bad.db"), "--models", broken, ok=False)
    check("--models" in p.stderr and "broken.json" in p.stderr, "--models broken.json: %r" % p.stderr)
    check(not os.path.exists(os.path.join(tmp, "bad.db")), "a failed profile left bad.db behind")


def trace_files(tmp):
    d = os.path.join(tmp, "traces")
    os.mkdir(d)
    with open(os.path.join(d, "vit-mine.json"), "w") as f:
        json.dump(entry("models", "vit", "vit-mine"), f)
    with open(os.path.join(d, "jobs.csv"), "w") as f:
        f.write("name,arrival_s,model,gpus\na,0,vit-mine.json,4\nb,60,resnet50,4\n")
    with open(os.path.join(d, "bad.csv"), "w") as f:
        f.write("name,arrival_s,model,gpus\na,0,resnet50,4\nb,60,nope.json,4\n")
    p = run("-q", "sim", "--cluster", "pollux-t4", "--trace", "traces/jobs.csv", "--policy", "fifo", "--json",
            cwd=tmp)
    doc = json.loads(p.stdout)
    check(doc["policies"][0]["completed"] == 2, "trace with a model file: %s" % doc["policies"][0])
    check("vit-mine" in p.stdout, "the job's model is the file's entry: %s" % p.stdout[:400])
    p = run("-q", "sim", "--cluster", "pollux-t4", "--trace", "traces/bad.csv", "--policy", "fifo", ok=False, cwd=tmp)
    check("bad.csv:3" in p.stderr and "field 'model'" in p.stderr and "nope.json" in p.stderr,
          "missing model file in a trace: %r" % p.stderr)


def sweep_files(tmp):
    d = os.path.join(tmp, "sweep")
    os.mkdir(d)
    with open(os.path.join(d, "l4.json"), "w") as f:
        json.dump(entry("gpus", "t4", "l4", fp32_tflops=30.3, mem_bytes=24 * 2**30, mem_bw=300e9), f)
    with open(os.path.join(d, "vit-mine.json"), "w") as f:
        json.dump(entry("models", "vit", "vit-mine"), f)
    with open(os.path.join(d, "jobs.csv"), "w") as f:
        f.write("name,arrival_s,model,gpus\na,0,vit-mine.json,4\nb,60,resnet50,4\n")
    cfg = {"name": "l4", "trace": {"file": "jobs.csv"}, "loads": [1], "policies": ["fifo"], "seeds": [1],
           "clusters": [{"base": "demo", "label": "demo"},
                        {"base": "demo", "label": "demo+l4",
                         "add": [{"gpu": "l4.json", "nodes": 1, "gpus_per_node": 4}]}]}
    with open(os.path.join(d, "sw.json"), "w") as f:
        json.dump(cfg, f)
    out = os.path.join(tmp, "runs")
    run("-q", "sweep", "sweep/sw.json", "--out", out, cwd=tmp)
    with sqlite3.connect("file:%s?mode=ro" % os.path.join(out, "results.db"), uri=True) as c:
        got = c.execute("SELECT count(*) FROM points").fetchone()[0]
    check(got == 2, "sweep with a GPU file and a model file: %d points" % got)
    p = run("-q", "sweep", "sweep/sw.json", "--out", out, "--dry-run", cwd=tmp)
    cfg["clusters"][1]["add"][0]["gpu"] = "nope.json"
    with open(os.path.join(d, "bad.json"), "w") as f:
        json.dump(cfg, f)
    p = run("-q", "sweep", "sweep/bad.json", "--out", os.path.join(tmp, "bad-runs"), ok=False, cwd=tmp)
    check("add[0].gpu" in p.stderr and "nope.json" in p.stderr, "sweep with a missing GPU file: %r" % p.stderr)


def live_files(tmp):
    db = os.path.join(tmp, "cpu.db")
    run("-q", "profile", "--analytic", "--db", db, "--gpus", "cpu", "--models", "resnet50")
    vit = os.path.join(tmp, "vit-mine.json")
    with open(vit, "w") as f:
        json.dump(entry("models", "vit", "vit-mine"), f)
    p = run("-q", "live", "--policy", "static", "--model", vit, "--cluster", "cpu-2x2", "--db", db,
            "--epochs", "1", "--out", os.path.join(tmp, "live-out"), ok=False, cwd=tmp)
    check("vit-mine" in p.stderr and "is not a catalog model" not in p.stderr,
          "live --model FILE is resolved: %r" % p.stderr)
    p = run("-q", "live", "--policy", "static", "--model", "nope.json", "--cluster", "cpu-2x2", "--db", db,
            "--epochs", "1", "--out", os.path.join(tmp, "live-out"), ok=False, cwd=tmp)
    check("--model" in p.stderr and "nope.json" in p.stderr, "live --model nope.json: %r" % p.stderr)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        profile_files(tmp)
        trace_files(tmp)
        sweep_files(tmp)
        live_files(tmp)
    print("ok")


if __name__ == "__main__":
    main()
