#!/usr/bin/env python3
"""`hetbatch profile --backend torch` end to end without torch or a GPU: a
fake worker (fake_python.py) answers as the real one would and hands over
the hand-made ktrace fixtures; the rows in the database must be the
fixture's attributed times (worked out by hand in tests/ktrace/test_ktrace.c),
a trace with dropped records must not be kept, a missing Python must fail
clearly."""
import os
import sqlite3
import subprocess
import sys
import tempfile

hb = os.environ["HETBATCH"]
fix = os.path.join(os.environ["HB_FIXTURES"], "ktrace")
here = os.path.dirname(os.path.abspath(__file__))
fake = os.path.join(here, "fake_python.py")
tmp = tempfile.mkdtemp(prefix="hb-torch-test-")
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL: " + what)


def run(extra, fixture, env_extra=None):
    env = dict(os.environ, FAKE_KTRACE=os.path.join(fix, fixture))
    env.update(env_extra or {})
    cmd = [hb, "profile", "--backend", "torch", "--python", sys.executable, "--worker", fake,
           "--inject", "/dev/null"] + extra
    return subprocess.run(cmd, env=env, capture_output=True, text=True)


# 1. two points stored, one out of memory; numbers from the fixture
db = os.path.join(tmp, "t.db")
r = run(["--models", "resnet50", "--local-bs", "32", "--vsw", "1,2,4", "--db", db,
         "--trace-dir", os.path.join(tmp, "tr")], "two_vsw.ktrace", {"FAKE_OOM_VSW": "4"})
check(r.returncode == 0, "good run exited %d: %s" % (r.returncode, r.stderr))
con = sqlite3.connect(db)
rows = con.execute("SELECT gpu, model, local_bs, n_vsw, fwd_s, bwd_s, data_s, update_s, copy_s, total_s, "
                   "mem_bytes, source, run_id FROM compute ORDER BY n_vsw").fetchall()
check(len(rows) == 2, "rows: %r" % (rows,))
for row in rows:
    gpu, model, b, n, fwd, bwd, data, upd, cp, tot, mem, src, run_id = row
    check((gpu, model, b, src) == ("h100-80gb", "resnet50", 32, "torch"), "row keys %r" % (row,))
    for got, want, name in ((fwd, 2.75e-3, "fwd"), (bwd, 3.1e-3, "bwd"), (data, 0.25e-3, "data"),
                            (upd, 0.8e-3, "update"), (cp, 0.3e-3, "copy"), (tot, 9e-3, "total")):
        check(abs(got - want) < 1e-12, "%s_s %r, expected %r" % (name, got, want))
    check(mem == 32 * 1048576, "mem_bytes %r" % mem)
run_row = con.execute("SELECT kind, backend, host, device, driver, cuda, gpu, cupti, dropped FROM run").fetchall()
check(run_row == [("profile", "torch", "fakehost", "NVIDIA H100 80GB HBM3", "580.0", "13.0", "h100-80gb",
                   "130001", 0)], "run row %r" % (run_row,))
check("out of device memory" in r.stdout, "OOM point not reported: " + r.stdout)
con.close()

# 2. dropped records: not kept, exit 1, the message names the file and count
db2 = os.path.join(tmp, "d.db")
r = run(["--models", "bert-large", "--local-bs", "4", "--vsw", "1", "--db", db2,
         "--trace-dir", os.path.join(tmp, "tr2")], "dropped.ktrace")
check(r.returncode == 1, "dropped run exited %d" % r.returncode)
check("header: dropped 3" in r.stderr and "not kept" in r.stderr, "dropped message: " + r.stderr)
if os.path.exists(db2):
    n = sqlite3.connect(db2).execute("SELECT count(*) FROM compute").fetchone()[0]
    check(n == 0, "%d rows stored from a trace with drops" % n)

# 3. no such Python: fails at once, clearly
r = subprocess.run([hb, "profile", "--backend", "torch", "--python", "/nonexistent/python3", "--worker", fake,
                    "--inject", "/dev/null", "--models", "resnet50", "--db", os.path.join(tmp, "n.db")],
                   capture_output=True, text=True)
check(r.returncode == 1 and "cannot run '/nonexistent/python3'" in r.stderr, "missing python: %d %s" %
      (r.returncode, r.stderr))
check(not os.path.exists(os.path.join(tmp, "n.db")), "a database was created for a run that never started")

if fails:
    print("%d failed" % len(fails))
    sys.exit(1)
print("profile --backend torch (fake worker): all checks passed")
