#!/usr/bin/env python3
"""A JSON file of the user's own works wherever a catalog name does
(issue 39, item 3), one check per place that takes a name:

1. `profile --analytic --gpus FILE --models FILE`: the file's GPU and model
   are profiled under their own names, beside catalog names in the same
   list; a missing file, a directory and a malformed file are errors that
   name the option and the file, and write no database.
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


def main():
    with tempfile.TemporaryDirectory() as tmp:
        profile_files(tmp)
    print("ok")


if __name__ == "__main__":
    main()
