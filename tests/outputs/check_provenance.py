#!/usr/bin/env python3
"""Results say which profiles made them (issue 39, item 1).

1. On the built-in analytic database: summary.json's `profiles` has one entry
   per GPU type x model, each `analytic`, `builtin`, with a digest; the
   results.db table `profiles` holds the same; the terminal table has no
   `profiles:` line; two runs write identical summaries.
2. On a database of the user's own (`--db`, analytic rows too): the same
   digests (the same rows) but `builtin` false, and the table names it.
   `plan --json` records the same under "profile_sources", and a sweep's
   results.db its `profiles` table per cluster.
3. After `import pollux` into the user database (when ../shared is there):
   import says later commands read it; `sim` without --db then records
   `import:pollux` with measured rows and a digest unlike the built-in one,
   and the table's `profiles:` line names it.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

HB = os.environ["HETBATCH"]
SHARED = os.environ.get("HB_SHARED", "")
POLLUX = os.path.join(SHARED, "data", "pollux", "profiles")
TRACE = os.path.join(os.environ.get("HB_SOURCE_ROOT", "."), "tests", "trace_replay", "small.csv")


def run(*args, env=None, ok=True):
    p = subprocess.run([HB, *args], capture_output=True, text=True, env=env)
    if ok and p.returncode != 0:
        sys.exit("FAIL: %s -> %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def profiles(out):
    with open(os.path.join(out, "summary.json")) as f:
        doc = json.load(f)
    with sqlite3.connect("file:%s?mode=ro" % os.path.join(out, "results.db"), uri=True) as c:
        rows = c.execute("SELECT gpu, model, source, file, builtin, rows, measured_rows, digest FROM profiles"
                         " ORDER BY gpu, model").fetchall()
    js = sorted((p["gpu"], p["model"], p["source"], p["file"], int(p["builtin"]), p["rows"], p["measured_rows"],
                 p["digest"]) for p in doc["profiles"])
    check(js == sorted(rows), "summary.json and results.db disagree:\n%s\n%s" % (js, rows))
    return {(r[0], r[1]): r for r in rows}, doc


def main():
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HETBATCH_DATA=os.path.join(tmp, "data"))
        sim = ["-q", "sim", "--cluster", "pollux-t4", "--trace", TRACE, "--policy", "fifo"]
        p = run(*sim, "--out", os.path.join(tmp, "a"), env=env)
        check("profiles:" not in p.stdout, "a profiles line on the built-in database:\n" + p.stdout)
        a, doc_a = profiles(os.path.join(tmp, "a"))
        check(a and all(r[2] == "analytic" and r[4] == 1 and len(r[7]) == 16 and r[5] > 0 for r in a.values()),
              "built-in profiles: %s" % a)
        check({m for _, m in a} == {"cifar10", "ncf", "bert", "deepspeech2"}, "models recorded: %s" % sorted(a))
        run(*sim, "--out", os.path.join(tmp, "a2"), env=env)
        with open(os.path.join(tmp, "a2", "summary.json")) as f:
            check(json.load(f) == doc_a, "the same inputs gave another summary.json")

        p = run("-q", "plan", "--cluster", "pollux-t4", "--model", "cifar10", "--gbs", "512", "--json", env=env)
        ps = json.loads(p.stdout)["profile_sources"]
        check(len(ps) == 1 and ps[0]["digest"] == a[("t4", "cifar10")][7] and ps[0]["builtin"],
              "plan's profile_sources %s against sim's %s" % (ps, a[("t4", "cifar10")]))

        cfg = os.path.join(tmp, "sw.json")
        with open(cfg, "w") as f:
            json.dump({"name": "prov", "trace": {"file": TRACE}, "loads": [1], "policies": ["fifo"], "seeds": [1],
                       "clusters": [{"base": "pollux-t4", "label": "t4"}]}, f)
        p = run("-q", "sweep", cfg, "--out", os.path.join(tmp, "sw"), env=env)
        check("profiles:" not in p.stdout, "a sweep's profiles line on the built-in database:\n" + p.stdout)
        with sqlite3.connect("file:%s?mode=ro" % os.path.join(tmp, "sw", "results.db"), uri=True) as c:
            sp = {(g, m): d for g, m, d in c.execute("SELECT gpu, model, digest FROM profiles WHERE cluster_id = 0")}
        check(sp == {k: v[7] for k, v in a.items()}, "sweep profiles %s against sim's %s" % (sp, a))

        mine = os.path.join(tmp, "mine.db")
        run("-q", "profile", "--analytic", "--db", mine, "--gpus", "t4", env=env)
        p = run(*sim, "--db", mine, "--out", os.path.join(tmp, "b"), env=env)
        b, _ = profiles(os.path.join(tmp, "b"))
        check(all(b[k][7] == a[k][7] and b[k][4] == 0 and b[k][3] == "mine.db" for k in a),
              "own analytic database: %s against %s" % (b, a))
        check("profiles: t4 x" in p.stdout and "mine.db" in p.stdout, "no profiles line for --db:\n" + p.stdout)
        p = run("-q", "sweep", cfg, "--db", mine, env=env)
        check("profiles: t4 x" in p.stdout and "mine.db" in p.stdout, "no sweep profiles line for --db:\n" + p.stdout)

        if not os.path.isdir(POLLUX):
            print("ok (import part skipped: %s not found)" % POLLUX)
            return
        p = run("import", "pollux", POLLUX, env=env)
        check("without --db now read" in p.stderr, "import said nothing of later commands: %r" % p.stderr)
        p = run(*sim, "--out", os.path.join(tmp, "c"), env=env)
        c, _ = profiles(os.path.join(tmp, "c"))
        k = ("t4", "cifar10")
        check(c[k][2] == "import:pollux" and c[k][6] > 0 and c[k][7] != a[k][7] and c[k][4] == 0,
              "after the import: %s (built-in %s)" % (c[k], a[k]))
        check("import:pollux (profiles.db" in p.stdout, "the table does not name the import:\n" + p.stdout)
    print("ok")


if __name__ == "__main__":
    main()
