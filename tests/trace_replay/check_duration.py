#!/usr/bin/env python3
"""duration_s in a job spec (issue 39, item 3's "accepted and ignored"):
used with `sim --duration-from-trace`, else a one-line notice.

1. Without the flag: one warning line on stderr naming the file and how
   many jobs record a run time; job 'a' (3,600 s recorded) trains to its
   target, far past 3,600 s; stopped_at_duration is 0 everywhere; -q
   silences the notice.
2. With the flag: 'a' finishes at its run time (within one iteration),
   flagged 1, with a `done` event saying so and the line under the table;
   'b' (no duration_s) is not flagged; 'c' (a run time longer than its
   training) reaches its target first, flag 0, same finish as in 1; no
   notice.
3. The flag without --trace is a usage error (exit 2).
"""
import csv
import os
import subprocess
import sys
import tempfile

HB = os.environ["HETBATCH"]
SPEC = "name,arrival_s,model,gpus,batch,duration_s\na,0,resnet50,4,0,3600\nb,60,resnet50,4,0,\nc,120,cifar10,2,0,600000\n"


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def run(*args, code=0):
    p = subprocess.run([HB, *args], capture_output=True, text=True)
    check(p.returncode == code, "%s -> %d (want %d)\n%s" % (" ".join(args), p.returncode, code, p.stderr))
    return p


def jobs(out):
    return {r["name"]: r for r in csv.DictReader(open(os.path.join(out, "jobs.csv")))}


def main():
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "spec.csv")
        with open(spec, "w") as f:
            f.write(SPEC)
        sim = ["sim", "--cluster", "jabas-a", "--trace", spec, "--policy", "fifo", "--no-fairness"]
        p0 = run(*sim, "--out", os.path.join(tmp, "d0"))
        notes = [l for l in p0.stderr.splitlines() if "duration_s" in l]
        check(len(notes) == 1, "want one notice, got %r" % p0.stderr)
        check("spec.csv records a run time (duration_s) for 2 of its 3 jobs; it is ignored" in notes[0]
              and "--duration-from-trace" in notes[0], "notice: %r" % notes[0])
        check("duration_s" not in run("-q", *sim).stderr, "-q did not silence the notice")
        j0 = jobs(os.path.join(tmp, "d0"))
        check(float(j0["a"]["jct_s"]) > 10 * 3600, "a without the flag ran %s s" % j0["a"]["jct_s"])
        check(all(r["stopped_at_duration"] == "0" for r in j0.values()), "a flag without --duration-from-trace")

        p1 = run(*sim, "--duration-from-trace", "--csv", "--out", os.path.join(tmp, "d1"))
        check("duration_s" not in p1.stderr, "a notice with the flag: %r" % p1.stderr)
        check("fifo: 1 of the 3 completed jobs stopped at the trace's run time" in p1.stdout, p1.stdout)
        j1 = jobs(os.path.join(tmp, "d1"))
        a = j1["a"]
        check(a["stopped_at_duration"] == "1", "a not flagged: %r" % a)
        run_s = float(a["finish_s"]) - float(a["start_s"])
        check(3600 <= run_s < 3601, "a ran %g s, not its 3600 s" % run_s)
        check(j1["b"]["stopped_at_duration"] == "0" and j1["c"]["stopped_at_duration"] == "0", "b or c flagged")
        check(j1["c"]["finish_s"] == j0["c"]["finish_s"], "c, done before its run time, moved: %s vs %s"
              % (j1["c"]["finish_s"], j0["c"]["finish_s"]))
        ev = [r for r in csv.DictReader(open(os.path.join(tmp, "d1", "events.csv")))
              if r["kind"] == "done" and r["job"] == "0"]
        check(ev and ev[0]["detail"].startswith("stopped at its recorded run time 3600 s"), "done event %r" % ev)

        p = run("sim", "--cluster", "jabas-a", "--model", "resnet50", "--duration-from-trace", code=2)
        check("--duration-from-trace" in p.stderr, p.stderr)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
