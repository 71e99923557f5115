#!/usr/bin/env python3
"""sim output feeds the forecaster (issue 39, item 8): `hetbatch forecast
DIR/timeseries.csv` on what `sim --out DIR --csv` wrote, end to end.

1. timeseries.csv has a `step` column (last), the job's iterations done:
   0 at the first sample, non-decreasing within a run's job.
2. forecast reads it as it is: exit 0, the history is run 1's samples at
   distinct steps, the scored row is a real sample (its `actual` is one of
   the file's batches).
3. With two policies the file holds two runs: forecast reads the first and
   says so with -v; --run 2 reads the other (a different history); a run
   that is not there is an input error (exit 2) naming the file.
4. A plain step,global_batch file still reads as before (duplicate steps are
   still refused there).
"""
import csv
import os
import subprocess
import sys
import tempfile

HB = os.environ["HETBATCH"]


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def run(*args, code=0):
    p = subprocess.run([HB, *args], capture_output=True, text=True)
    check(p.returncode == code, "%s -> %d (want %d)\n%s%s" % (" ".join(args), p.returncode, code, p.stdout, p.stderr))
    return p


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "a")
        run("-q", "sim", "--cluster", "jabas-a", "--model", "resnet50", "--policy", "jabas,simigrad", "--csv", "--out", out)
        ts = os.path.join(out, "timeseries.csv")
        rows = list(csv.DictReader(open(ts)))
        check(rows and list(rows[0].keys())[-1] == "step", "step is not the last column: %r" % list(rows[0].keys()))
        by_run = {}
        for r in rows:
            by_run.setdefault((r["run_id"], r["job"]), []).append(r)
        check(len(by_run) == 2, "two runs of one job, got %r" % list(by_run))
        for key, rs in by_run.items():
            steps = [int(r["step"]) for r in rs]
            check(steps[0] == 0, "%r: first step %d" % (key, steps[0]))
            check(all(b >= a for a, b in zip(steps, steps[1:])), "%r: steps go back" % (key,))
        p = run("-v", "forecast", ts)
        check("run 1, job 0 (the file holds others" in p.stderr, "no note on the run read:\n" + p.stderr)
        distinct = len({int(r["step"]) for r in by_run[("1", "0")]})
        hist = [l for l in p.stdout.splitlines() if l.startswith("history:")]
        check(hist, "no history line:\n" + p.stdout)
        npts = int(hist[0].split()[1])
        check(0 < npts < distinct, "history of %d points from %d distinct steps" % (npts, distinct))
        batches = {float(r["global_bs"]) for r in by_run[("1", "0")]}
        lines = p.stdout.splitlines()
        head = [i for i, l in enumerate(lines) if l.split()[:2] == ["step", "actual"]]
        check(head, "no scored rows:\n" + p.stdout)
        actual = float(lines[head[0] + 1].split()[1])
        check(actual in batches, "actual %g is not one of run 1's batches" % actual)
        p2 = run("forecast", ts, "--run", "2")
        check(p2.stdout != p.stdout, "--run 2 read the same series")
        p3 = run("forecast", ts, "--run", "9", code=2)
        check(ts in p3.stderr and "no rows of run 9" in p3.stderr, "--run 9: %r" % p3.stderr)
        plain = os.path.join(tmp, "plain.csv")
        with open(plain, "w") as f:
            f.write("step,global_batch\n" + "".join("%d,%d\n" % (100 * i, 64 + 8 * (i // 5)) for i in range(1, 40)))
        run("forecast", plain)
        with open(plain, "a") as f:
            f.write("3900,128\n")
        p4 = run("forecast", plain, code=2)
        check("not greater than the previous step" in p4.stderr, "duplicate step: %r" % p4.stderr)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
