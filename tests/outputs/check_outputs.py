#!/usr/bin/env python3
"""check_outputs.py: `sim --out` and `sweep --out` end to end (issue 16
items 1, 2, 4; issue 17 item 4), through the built $HETBATCH:

  replace     a second run replaces the set whole (no file of the first
              stays), prints where the results went (not with -q), and the
              set is byte-identical to the same run into a new directory
  refuse      a directory holding a file no run wrote is refused with one
              line naming it (exit 2, untouched); --force replaces it;
              '--out .' is refused; an unwritable place fails before the work
  full disk   a write failing midway (a file-size limit) leaves the old set
  lock        a second writer of the same directory fails at once, one line
              naming the first's PID; the first is unharmed
  signals     SIGINT / SIGTERM during sim (dedicated is too quick: a trace
              replay) and sweep: exit 130 / 143, one line, the old set kept
              byte for byte, no staging directory, lock or temporary left
  sigkill     a SIGKILLed writer's staging directory and lock, and a dead
              builder's temporaries in the cache, go with the next run

Exit 77 without $HETBATCH (run through meson).
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

EXE = os.environ.get("HETBATCH")
QUICK = ["sim", "--cluster", "demo", "--model", "resnet50", "--policy", "jabas"]
# long enough to be interrupted (tens of seconds), quick to start
LONG = ["sim", "--cluster", "pollux-t4", "--synthetic", "poisson", "--synth", "rate=30", "--synth", "hours=4",
        "--policy", "fifo,pollux"]
SWEEP_LONG = """{
  "name": "outputs-long",
  "trace": { "synthetic": { "arrival": "poisson", "rate_per_hour": 30, "hours": 4, "mix": "pollux" } },
  "clusters": [ { "base": "pollux-t4", "label": "t4" } ],
  "loads": [1], "policies": ["pollux", "fifo"], "seeds": [1, 2, 3]
}"""
SWEEP_QUICK = """{
  "name": "outputs-quick",
  "trace": { "synthetic": { "arrival": "poisson", "rate_per_hour": 12, "hours": 0.5, "mix": "pollux" } },
  "clusters": [ { "base": "demo", "label": "demo" } ],
  "loads": [1], "policies": ["fifo", "tiresias"], "seeds": [1, 2]
}"""

def default_signals():
    """In the child: SIGINT and SIGTERM at their default (a caller started
    in the background may have SIGINT ignored, and hetbatch keeps it so)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(args, cwd, timeout=300):
    p = subprocess.run([EXE] + args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def snapshot(d):
    """{name: bytes} of every file of d (hidden ones too), None if no d."""
    if not os.path.isdir(d):
        return None
    out = {}
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            out[name] = f.read()
    return out


def leftovers(d):
    """What a writer of d may leave beside it or in it: staging
    directories, the lock, temporaries."""
    parent = os.path.dirname(os.path.abspath(d))
    base = os.path.basename(os.path.abspath(d))
    found = glob.glob(os.path.join(parent, base + ".tmp.*")) + glob.glob(os.path.join(parent, base + ".lock"))
    if os.path.isdir(d):
        found += glob.glob(os.path.join(d, "*.tmp.*"))
    return found


def cache_temporaries():
    cache = os.environ.get("HETBATCH_CACHE")
    return glob.glob(os.path.join(cache, "*.tmp.*")) if cache else []


def start(args, cwd):
    return subprocess.Popen([EXE] + args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_signals)


def wait_for_stage(d, proc, limit=120.0):
    """Until proc's staging directory of d exists (the run has begun)."""
    stage = "%s.tmp.%d" % (d, proc.pid)
    t0 = time.time()
    while time.time() - t0 < limit:
        if os.path.isdir(stage) or proc.poll() is not None:
            return os.path.isdir(stage)
        time.sleep(0.05)
    return False


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_replace(tmp):
    d = os.path.join(tmp, "runs", "a")
    rc, _, err = run(QUICK + ["--plot", "--out", "runs/a"], tmp)
    check(rc == 0, "replace: first run exits 0 (%d: %s)" % (rc, err))
    check("hetbatch sim: results in runs/a\n" in err, "replace: 'results in' line without -v: %r" % err)
    first = snapshot(d) or {}
    check("resnet50-series.dat" in first and ".hetbatch-set" in first, "replace: first set has data and manifest")
    rc, _, err = run(["-q"] + QUICK[:3] + ["--model", "gnmt", "--policy", "jabas", "--out", "runs/a"], tmp)
    check(rc == 0 and err == "", "replace: -q run is silent (%d, %r)" % (rc, err))
    second = snapshot(d) or {}
    check(not any(n.startswith("resnet50-") for n in second), "replace: no file of the first set stays")
    check(second.get("summary.csv", b"").find(b"gnmt") >= 0, "replace: the new set is in place")
    check(leftovers(d) == [], "replace: nothing left beside: %s" % leftovers(d))
    rc, _, _ = run(["-q"] + QUICK[:3] + ["--model", "gnmt", "--policy", "jabas", "--out", "fresh"], tmp)
    check(snapshot(os.path.join(tmp, "fresh")) == second, "replace: set byte-identical to a run into a new dir")
    # sweep: the same whole-set replacement
    with open(os.path.join(tmp, "sq.json"), "w") as f:
        f.write(SWEEP_QUICK)
    rc, _, err = run(["sweep", "sq.json", "--out", "runs/a"], tmp)
    check(rc == 0 and "hetbatch sweep: results in runs/a\n" in err, "replace: sweep over a sim set (%d %r)" % (rc, err))
    names = set(snapshot(d) or {})
    check(names == {".hetbatch-set", "results.db", "summary.json", "sweep.csv"}, "replace: sweep set only: %s" % names)


def test_refuse(tmp):
    d = os.path.join(tmp, "mine")
    os.makedirs(d)
    with open(os.path.join(d, "notes.txt"), "w") as f:
        f.write("keep me\n")
    before = snapshot(d)
    rc, out, err = run(QUICK + ["--out", "mine"], tmp)
    check(rc == 2, "refuse: exit 2 (%d)" % rc)
    check(err.count("\n") == 1 and "'notes.txt'" in err and "--force" in err, "refuse: one line naming it: %r" % err)
    check(out == "", "refuse: refused before the work (no table): %r" % out[:80])
    check(snapshot(d) == before and leftovers(d) == [], "refuse: untouched, nothing left")
    with open(os.path.join(tmp, "sq.json"), "w") as f:
        f.write(SWEEP_QUICK)
    rc, _, err = run(["sweep", "sq.json", "--out", "mine"], tmp)
    check(rc == 2 and "'notes.txt'" in err, "refuse: sweep too (%d %r)" % (rc, err))
    rc, _, err = run(QUICK + ["--out", "mine", "--force"], tmp)
    check(rc == 0 and not os.path.exists(os.path.join(d, "notes.txt")), "refuse: --force replaces (%d %r)" % (rc, err))
    rc, _, err = run(QUICK + ["--out", ".", "--force"], tmp)
    check(rc == 2 and "current directory" in err, "refuse: '--out .' (%d %r)" % (rc, err))
    rc, out, err = run(QUICK + ["--out", "/proc/hb-no/such"], tmp)
    check(rc != 0 and out == "" and "/proc/hb-no" in err, "refuse: unwritable place before the work (%d %r)" % (rc, err))


def test_full_disk(tmp):
    """A write that fails midway (a file-size limit standing in for a full
    disk: SIGXFSZ ignored, so write(2) fails with EFBIG) leaves the old set."""
    d = os.path.join(tmp, "full")
    rc, _, _ = run(QUICK + ["--out", "full"], tmp)
    check(rc == 0, "full disk: the first run wrote a set (%d)" % rc)
    before = snapshot(d)
    # the last: replays on threads, each writing its own part (merged at the end)
    for args in (QUICK[:3] + ["--model", "gnmt", "--policy", "jabas,pollux"], LONG[:9] + ["--policy", "fifo"],
                 LONG[:9] + ["--policy", "fifo,tiresias", "-j", "2"]):
        cmd = "trap '' XFSZ; ulimit -f 64; exec '%s' %s --out full" % (EXE, " ".join(args))
        p = subprocess.run(["sh", "-c", cmd], cwd=tmp, capture_output=True, text=True, timeout=300)
        check(p.returncode == 1 and "error" in p.stderr, "full disk: exit 1 with the error (%d %r)" % (
            p.returncode, p.stderr[-300:]))
        check(snapshot(d) == before, "full disk: the old set kept byte for byte (%s)" % args[3])
        check(leftovers(d) == [], "full disk: nothing left: %s" % leftovers(d))


def test_lock(tmp):
    d = os.path.join(tmp, "busy")
    first = start(LONG + ["--out", "busy"], tmp)
    try:
        check(wait_for_stage(d, first), "lock: the first writer began")
        t0 = time.time()
        rc, out, err = run(QUICK + ["--out", "busy"], tmp)
        check(rc == 1, "lock: second writer exits 1 (%d)" % rc)
        check(err.count("\n") == 1 and "(PID %d)" % first.pid in err, "lock: one line naming the first: %r" % err)
        check(out == "" and time.time() - t0 < 30, "lock: fails before its work")
    finally:
        first.send_signal(signal.SIGINT)
        rc = first.wait(120)
    check(rc == 130, "lock: the first, interrupted, exits 130 (%d)" % rc)
    check(not os.path.exists(d) and leftovers(d) == [], "lock: nothing of either left: %s" % leftovers(d))


def interrupt(tmp, args, d, sig, code, what):
    before = snapshot(d) if d else None
    cache0 = set(cache_temporaries())
    p = start(args, tmp)
    began = wait_for_stage(d, p) if d else (time.sleep(1.5) or True)
    check(began, "%s: began" % what)
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    line = [l for l in err.splitlines() if "interrupted by" in l]
    check(p.returncode == code, "%s: exit %d (%d)" % (what, code, p.returncode))
    check(len(line) == 1 and signal.Signals(sig).name in line[0], "%s: one line saying so: %r" % (what, err))
    check("error" not in err, "%s: no error line besides: %r" % (what, err))
    if d:
        check(snapshot(d) == before, "%s: the old set kept byte for byte" % what)
        check(leftovers(d) == [], "%s: nothing left: %s" % (what, leftovers(d)))
    check(set(cache_temporaries()) <= cache0, "%s: no temporary in the cache" % what)
    return err


def test_signals(tmp):
    d = os.path.join(tmp, "sig")
    rc, _, _ = run(QUICK + ["--out", "sig"], tmp)
    check(rc == 0, "signals: a set to keep")
    err = interrupt(tmp, LONG + ["--out", "sig"], d, signal.SIGINT, 130, "sim SIGINT")
    check("sig left as it was" in err, "signals: says the set was kept: %r" % err)
    interrupt(tmp, LONG + ["--out", "sig"], d, signal.SIGTERM, 143, "sim SIGTERM")
    # a closed terminal: like SIGTERM, 128 + 1 (issue 40 item 7)
    interrupt(tmp, LONG + ["--out", "sig"], d, signal.SIGHUP, 129, "sim SIGHUP")
    # replays on threads: their parts go with the staging directory
    interrupt(tmp, LONG + ["-j", "2", "--out", "sig"], d, signal.SIGINT, 130, "sim -j 2 SIGINT")
    err = interrupt(tmp, LONG, None, signal.SIGINT, 130, "sim without --out")
    check("nothing was written" in err, "signals: without --out: %r" % err)
    # SIGINT ignored on entry (a shell's background job) stays ignored
    p = subprocess.Popen([EXE] + LONG + ["--out", "sig"], cwd=tmp, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    check(wait_for_stage(d, p), "ignored SIGINT: began")
    p.send_signal(signal.SIGINT)
    time.sleep(1.0)
    check(p.poll() is None, "ignored SIGINT: still running")
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=120)
    check(p.returncode == 143 and leftovers(d) == [], "ignored SIGINT: SIGTERM still stops it (%d)" % p.returncode)
    with open(os.path.join(tmp, "sl.json"), "w") as f:
        f.write(SWEEP_LONG)
    interrupt(tmp, ["sweep", "sl.json", "-j", "2", "--out", "sig"], d, signal.SIGINT, 130, "sweep SIGINT")
    interrupt(tmp, ["sweep", "sl.json", "--out", "sig"], d, signal.SIGTERM, 143, "sweep SIGTERM")
    interrupt(tmp, ["sweep", "sl.json", "--out", "sig"], d, signal.SIGHUP, 129, "sweep SIGHUP")


def test_sigkill(tmp):
    d = os.path.join(tmp, "kill")
    rc, _, _ = run(QUICK + ["--out", "kill"], tmp)
    check(rc == 0, "sigkill: the first run wrote a set (%d)" % rc)
    before = snapshot(d)
    p = start(LONG + ["--out", "kill"], tmp)
    check(wait_for_stage(d, p), "sigkill: began")
    p.kill()
    p.wait()
    check(snapshot(d) == before, "sigkill: the old set kept")
    check(len(leftovers(d)) >= 1, "sigkill: a staging directory is left (the next run owns it)")
    # a dead builder's temporaries in the cache: beside the database this
    # hetbatch uses (-v names it) and beside the previous analytic
    # version's, which an upgrade leaves in the cache (a test cache kept
    # across builds holds one too)
    cache = os.environ.get("HETBATCH_CACHE")
    planted = []
    rc, _, err = run(["-v", "plan", "--cluster", "demo", "--model", "resnet50", "--gbs", "256"], tmp)
    used = re.search(r"info: profile database: (\S+)", err)
    check(rc == 0 and used is not None, "sigkill: -v names the profile database (%d %r)" % (rc, err[:300]))
    if cache and used:
        cur = used.group(1)
        m = re.search(r"profiles-analytic-v(\d+)\.db$", cur)
        check(m is not None and os.path.dirname(cur) == cache.rstrip("/"), "sigkill: the default database %s" % cur)
        names = [cur]
        if m and int(m.group(1)) > 1:
            names.append(os.path.join(cache, "profiles-analytic-v%d.db" % (int(m.group(1)) - 1)))
        for db in names:
            for suffix in ("", "-journal"):
                path = "%s.tmp.%d%s" % (db, dead_pid(), suffix)
                with open(path, "w") as f:
                    f.write("half a database")
                planted.append(path)
    rc, _, err = run(QUICK[:3] + ["--model", "gnmt", "--policy", "jabas", "--out", "kill"], tmp)
    check(rc == 0, "sigkill: the next run succeeds (%d %r)" % (rc, err))
    check(leftovers(d) == [], "sigkill: the next run removed the leftovers: %s" % leftovers(d))
    check(b"gnmt" in (snapshot(d) or {}).get("summary.csv", b""), "sigkill: the next set in place")
    check(planted != [] and not any(os.path.exists(p) for p in planted), "sigkill: cache temporaries removed")


def main():
    if not EXE:
        print("HETBATCH is not set: run through meson", file=sys.stderr)
        return 77
    tests = [test_replace, test_refuse, test_full_disk, test_lock, test_signals, test_sigkill]
    for t in tests:
        tmp = tempfile.mkdtemp(prefix="hb-outputs-")
        try:
            n = len(failures)
            t(tmp)
            print("%s %s" % ("ok  " if len(failures) == n else "FAIL", t.__name__))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d checks failed" % len(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
