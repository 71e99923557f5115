#!/usr/bin/env python3
"""Two measuring runs into one database (issue 40 item 5).

`profile --backend cpu` commits point by point, so two runs into one file
used to interleave: each replaced the other's rows on the natural key, both
said "N compute rows", and the table ended as a mix that readers credited
to one run.  Now:

1. while one measuring run holds the database, a second into the same file
   is refused at once (exit 1, one line naming the file and what to do);
   the first's rows are all its own and as many as it said;
2. the lock goes with the process: after a SIGKILL the next run measures;
3. a later run that replaces only some of an earlier run's points leaves a
   mix, and `-v` readers say so ("N rows of 2 runs, A to B") instead of
   naming one run;
4. readers (plan, sim) are not held up by the lock.
"""
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HB = os.environ["HETBATCH"]
MEASURE = ["profile", "--backend", "cpu", "--models", "cifar10", "--scale", "0.05", "--warmup", "0",
           "--max-vsw", "2"]
PLAN = ["plan", "--cluster", "cpu-2x2", "--model", "cifar10", "--gbs", "128"]


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def run(args, cwd):
    return subprocess.run([HB, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def start(args, cwd):
    return subprocess.Popen([HB, "-q", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def runs_of(db):
    with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
        return c.execute("SELECT run_id, count(*) FROM compute GROUP BY run_id ORDER BY run_id").fetchall()


def wait_for_run_row(db, p):
    """Until the first run has its run row (it holds the lock from before)."""
    t0 = time.time()
    while time.time() - t0 < 60 and p.poll() is None:
        try:
            with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
                if c.execute("SELECT count(*) FROM run").fetchone()[0] >= 1:
                    return True
        except sqlite3.DatabaseError:
            pass
        time.sleep(0.02)
    return False


def main():
    tmp = tempfile.mkdtemp(prefix="hb-mlock-")
    db = os.path.join(tmp, "same.db")
    try:
        # 1. two at once: the second is refused while the first measures
        first = start(MEASURE + ["--local-bs", "16,32,48", "--iters", "6", "--db", db], tmp)
        check(wait_for_run_row(db, first), "the first run started")
        second = run(MEASURE + ["--local-bs", "16,32", "--iters", "2", "--db", db], tmp)
        lines = second.stderr.strip().splitlines()
        check(second.returncode == 1, "second run refused: exit %d %s" % (second.returncode, second.stderr))
        check(len(lines) == 1 and db in lines[0] and "another measuring run" in lines[0] and "--db" in lines[0],
              "one line naming the file: %r" % second.stderr)
        # a reader meanwhile is not held up
        p = run(["-q", *PLAN, "--db", db], tmp)
        check(p.returncode in (0, 1, 2) and "another measuring run" not in p.stderr, "reader ignores the lock")
        out, err = first.communicate(timeout=300)
        check(first.returncode == 0, "first run: %d %s" % (first.returncode, err))
        said = int(re.search(r"(\d+) compute", out).group(1))
        check(runs_of(db) == [(1, said)], "all %d rows are run 1's: %s" % (said, runs_of(db)))
        p = run(["-v", *PLAN, "--db", db], tmp)
        check("profile cpu x cifar10: cpu (run 1, %d rows) from %s" % (said, db) in p.stderr,
              "reader names the run it read:\n" + p.stderr)

        # 2. a killed holder leaves no lock behind
        killed = start(MEASURE + ["--local-bs", "16,32,48", "--iters", "20", "--db", db], tmp)
        t0 = time.time()
        while time.time() - t0 < 60:
            with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
                if c.execute("SELECT count(*) FROM run").fetchone()[0] >= 2:
                    break
            time.sleep(0.02)
        killed.send_signal(signal.SIGKILL)
        killed.communicate()
        p = run(["-q", *MEASURE, "--local-bs", "16", "--iters", "2", "--db", db], tmp)
        check(p.returncode == 0, "after a SIGKILL the next run measures: %d %s" % (p.returncode, p.stderr))

        # 3. a run that replaced only some points: readers say it is a mix
        ids = [r for r, _ in runs_of(db)]
        check(len(ids) >= 2, "rows of two runs now: %s" % runs_of(db))
        p = run(["-v", *PLAN, "--db", db], tmp)
        total = sum(n for _, n in runs_of(db))
        want = "profile cpu x cifar10: cpu (%d rows of %d runs, %d to %d) from %s" % (
            total, len(ids), min(ids), max(ids), db)
        check(want in p.stderr, "reader says the rows are a mix (%s):\n%s" % (want, p.stderr))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
