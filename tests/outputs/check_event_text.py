#!/usr/bin/env python3
"""check_event_text.py: results.db keeps an event's detail as a template,
its numbers and its free text (issue 43); the view `events` must give back
the very text C printed.  events.csv (--csv) is written from the C strings,
so for a replay of Pollux's workload 1 under policies whose details differ
(Pollux's restarts with their allocations, Tiresias, Optimus) every row of
`events` must equal events.csv's, byte for byte, and most rows must have
a template (else the store is not compact).  The same replay on two
threads (-j 2, parts merged by template text) must give the same tables.

Exit 77 without $HETBATCH (run through meson).
"""
import csv
import io
import os
import sqlite3
import subprocess
import sys
import tempfile

EXE = os.environ.get("HETBATCH")
SHARED = os.environ.get("HB_SHARED", "../shared")
TRACE = os.path.join(SHARED, "data", "pollux", "workloads", "workload-1.csv")


def run(out, *extra):
    cmd = [EXE, "-q", "sim", "--cluster", "pollux-t4", "--trace", TRACE, "--policy", "pollux,tiresias,optimus",
           "--restart-cost", "30", "--events", "all", "--csv", "--out", out] + list(extra)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def dump(db):
    con = sqlite3.connect(db)
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    rows = {n: con.execute('SELECT * FROM "%s"' % n).fetchall() for n in names}
    con.close()
    return rows


def main():
    if not EXE:
        print("skip: no $HETBATCH")
        return 77
    if not os.path.exists(TRACE):
        print("skip: no %s" % TRACE)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        one = os.path.join(tmp, "one")
        run(one)
        con = sqlite3.connect(os.path.join(one, "results.db"))
        view = con.execute("SELECT run_id, job, kind, detail FROM events ORDER BY run_id, seq").fetchall()
        ntpl, nrows = con.execute("SELECT count(tpl), count(*) FROM event").fetchone()
        kinds = {r[0] for r in con.execute("SELECT DISTINCT kind FROM events")}
        con.close()
        with open(os.path.join(one, "events.csv"), newline="", encoding="utf-8") as f:
            text = [(int(r["run_id"]), int(r["job"]), r["kind"], r["detail"]) for r in csv.DictReader(f)]
        if len(view) != len(text) or not view:
            print("FAIL: %d rows in events, %d in events.csv" % (len(view), len(text)))
            return 1
        for i, (a, b) in enumerate(zip(view, text)):
            if a != b:
                print("FAIL: row %d: events says %r, events.csv %r" % (i, a, b))
                return 1
        for k in ("arrival", "start", "restart", "done"):
            if k not in kinds:
                print("FAIL: no %s event: the replay no longer covers it" % k)
                return 1
        if ntpl < 0.9 * nrows:
            print("FAIL: only %d of %d events have a template" % (ntpl, nrows))
            return 1
        two = os.path.join(tmp, "two")
        run(two, "-j", "2")
        if dump(os.path.join(one, "results.db")) != dump(os.path.join(two, "results.db")):
            print("FAIL: results.db differs between -j 1 and -j 2")
            return 1
        print("ok: %d events, %d with a template, kinds %s" % (nrows, ntpl, ",".join(sorted(kinds))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
