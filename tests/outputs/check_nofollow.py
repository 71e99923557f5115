#!/usr/bin/env python3
"""check_nofollow.py: no file written through a symbolic link, no shell
through gnuplot (issue 40 items 1 and 2), through the built $HETBATCH.

  writers   for each writer (sim and sweep output sets, plan, catalog and
            live single files, a profile database, the analytic cache) a
            symbolic link (or hard link) planted where its lock or
            temporary goes: the victim file is untouched and the run fails
            with one line naming the link (exit 1), or, where the planted
            name is a dead writer's temporary, the link alone is removed
            and the run succeeds.  A temporary carries the writer's PID:
            the test forks, plants the link for the child's PID, then lets
            the child exec hetbatch (exec keeps the PID).
  gnuplot   --out names holding '<', '|', quotes, newlines and backquotes
            for sim --plot, sim --trace --plot and sweep --plot: the
            figures are drawn and no command in the name ran.

Exit 77 without $HETBATCH (run through meson).
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

EXE = os.environ.get("HETBATCH")
QUICK = ["-q", "sim", "--cluster", "demo", "--model", "resnet50", "--policy", "jabas"]
SWEEP_QUICK = """{
  "name": "nofollow-quick",
  "trace": { "synthetic": { "arrival": "poisson", "rate_per_hour": 12, "hours": 0.5, "mix": "pollux" } },
  "clusters": [ { "base": "demo", "label": "demo" } ],
  "loads": [1], "policies": ["fifo", "tiresias"], "seeds": [1]
}"""
PLAN = ["-q", "plan", "--cluster", "demo", "--model", "resnet50", "--gbs", "1024"]
LIVE_PLAN = ('{"format": "hetbatch-plan/1", "cluster": "cpu-2x2", "model": "cifar10",'
             ' "baselines_on_requested_gpus": {"gpus": [{"node": "node0", "gpu": "cpu", "gpus": 1}],'
             '  "ddp": {"found": true, "global_batch": 32, "local_batch": 16, "ga_steps": 1, "iter_s": 0.02}}}')
LIVE = ["-q", "live", "--plan", "p1.json", "--method", "ddp", "--scale", "0.05", "--iters", "4", "--warmup", "1",
        "--out", "res1"]
VICTIM = "do not touch\n"

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(args, cwd, env=None):
    p = subprocess.run([EXE] + args, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)
    return p.returncode, p.stdout, p.stderr


def run_planted(args, cwd, plant, env=None):
    """Run hetbatch with plant(pid) called before it starts, pid being the
    PID it will run as.  (rc, stderr)."""
    r, w = os.pipe()
    errpath = os.path.join(cwd, ".stderr-%d" % os.getpid())
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w)
            os.read(r, 1)
            os.chdir(cwd)
            fd = os.open(errpath, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 2)
            out = os.open(os.devnull, os.O_WRONLY)
            os.dup2(out, 1)
            os.execve(EXE, [EXE] + args, env if env is not None else os.environ)
        finally:
            os._exit(127)
    os.close(r)
    try:
        plant(pid)
    finally:
        os.write(w, b"x")
        os.close(w)
    _, st = os.waitpid(pid, 0)
    with open(errpath) as f:
        err = f.read()
    os.unlink(errpath)
    return os.waitstatus_to_exitcode(st), err


def rm(path):
    """Unlink path if it is there (a writer may have removed it)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def victim(tmp, name="victim.txt"):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(VICTIM)
    return path


def untouched(path):
    with open(path) as f:
        return f.read() == VICTIM


def one_line(err):
    return err.count("\n") == 1


# ---- writers ---------------------------------------------------------------------------------

def test_outset_lock(tmp):
    v = victim(tmp)
    os.symlink("victim.txt", os.path.join(tmp, "res.lock"))
    rc, _, err = run(QUICK + ["--out", "res"], tmp)
    check(rc == 1, "sim lock link: exit 1 (%d: %s)" % (rc, err))
    check("res.lock is a symbolic link" in err and one_line(err), "sim lock link: one line naming it: %r" % err)
    check(untouched(v), "sim lock link: victim untouched")
    check(not os.path.exists(os.path.join(tmp, "res")), "sim lock link: no set made")
    rm(os.path.join(tmp, "res.lock"))
    # a hard link: the PID would be written into the victim's data
    os.link(v, os.path.join(tmp, "res.lock"))
    rc, _, err = run(QUICK + ["--out", "res"], tmp)
    check(rc == 1 and "res.lock is not a plain file of its own" in err, "sim lock hard link: refused: %d %r" % (rc, err))
    check(untouched(v), "sim lock hard link: victim untouched")
    rm(os.path.join(tmp, "res.lock"))
    rc, _, err = run(QUICK + ["--out", "res"], tmp)
    check(rc == 0 and os.path.isdir(os.path.join(tmp, "res")), "sim lock: runs once the link is gone (%d %r)" % (rc, err))


def test_outset_stage(tmp):
    vdir = os.path.join(tmp, "vdir")
    os.mkdir(vdir)
    v = victim(vdir)
    # the staging directory's name for this run: refused by name
    rc, err = run_planted(QUICK + ["--out", "res"], tmp,
                          lambda pid: os.symlink("vdir", os.path.join(tmp, "res.tmp.%d" % pid)))
    check(rc == 1 and "is a symbolic link" in err and one_line(err), "sim stage link: refused: %d %r" % (rc, err))
    check(untouched(v) and os.listdir(vdir) == ["victim.txt"], "sim stage link: victim directory untouched")
    for p in glob.glob(os.path.join(tmp, "res.tmp.*")):
        rm(p) if os.path.islink(p) else shutil.rmtree(p, ignore_errors=True)
    # a dead writer's staging name: the link goes, its target stays
    dead = os.path.join(tmp, "res.tmp.%d" % dead_pid())
    os.symlink("vdir", dead)
    rc, _, err = run(QUICK + ["--out", "res"], tmp)
    check(rc == 0, "sim stale stage link: the run succeeds (%d %r)" % (rc, err))
    check(not os.path.lexists(dead), "sim stale stage link: the link is removed")
    check(untouched(v) and os.listdir(vdir) == ["victim.txt"], "sim stale stage link: its target stays")
    # a dead writer's staging directory holding a link to a directory: the
    # removal descends into neither
    dead = os.path.join(tmp, "res.tmp.%d" % dead_pid())
    os.mkdir(dead)
    os.symlink(vdir, os.path.join(dead, "inner"))
    os.symlink(v, os.path.join(dead, "file.csv"))
    rc, _, err = run(QUICK + ["--out", "res"], tmp)
    check(rc == 0 and not os.path.lexists(dead), "sim stale stage dir: removed (%d %r)" % (rc, err))
    check(untouched(v) and os.listdir(vdir) == ["victim.txt"], "sim stale stage dir: link targets stay")


def test_sweep_lock(tmp):
    with open(os.path.join(tmp, "c.json"), "w") as f:
        f.write(SWEEP_QUICK)
    v = victim(tmp)
    os.symlink("victim.txt", os.path.join(tmp, "sw.lock"))
    rc, _, err = run(["-q", "sweep", "c.json", "--out", "sw"], tmp)
    check(rc == 1 and "sw.lock is a symbolic link" in err, "sweep lock link: refused: %d %r" % (rc, err))
    check(untouched(v), "sweep lock link: victim untouched")
    rm(os.path.join(tmp, "sw.lock"))
    rc, err = run_planted(["-q", "sweep", "c.json", "--out", "sw"], tmp,
                          lambda pid: os.symlink("victim.txt", os.path.join(tmp, "sw.tmp.%d" % pid)))
    check(rc == 1 and "is a symbolic link" in err, "sweep stage link: refused: %d %r" % (rc, err))
    check(untouched(v), "sweep stage link: victim untouched")


def single_file(tmp, what, args, out):
    """A command writing one file atomically (--out OUT): a link at its
    temporary is refused, a dead writer's link is removed alone."""
    v = victim(tmp)
    tmpname = lambda pid: os.path.join(tmp, "%s.tmp.%d" % (out, pid))
    rc, err = run_planted(args, tmp, lambda pid: os.symlink(v, tmpname(pid)))
    check(rc == 1 and "is a symbolic link" in err and one_line(err), "%s temp link: refused: %d %r" % (what, rc, err))
    check(untouched(v), "%s temp link: victim untouched" % what)
    check(not os.path.lexists(os.path.join(tmp, out)), "%s temp link: %s not made" % (what, out))
    for p in glob.glob(os.path.join(tmp, out + ".tmp.*")):
        rm(p)
    dead = tmpname(dead_pid())
    os.symlink(v, dead)
    rc, _, err = run(args, tmp)
    check(rc == 0, "%s stale temp link: the run succeeds (%d %r)" % (what, rc, err))
    check(not os.path.lexists(dead), "%s stale temp link: the link is removed" % what)
    check(untouched(v), "%s stale temp link: victim untouched" % what)
    p = os.path.join(tmp, out)
    check(os.path.isfile(p) and not os.path.islink(p), "%s: %s is a file of its own" % (what, out))


def test_plan(tmp):
    single_file(tmp, "plan", PLAN + ["--out", "plan.json"], "plan.json")


def test_catalog(tmp):
    machines = os.path.join(os.environ.get("HB_FIXTURES", ""), "traces", "machines_good.csv")
    if not os.path.exists(machines):
        print("skip catalog: no fixture %s" % machines)
        return
    single_file(tmp, "catalog", ["-q", "catalog", "clusters", "--from-philly", machines, "--out", "philly.json"],
                "philly.json")


def test_live(tmp):
    with open(os.path.join(tmp, "p1.json"), "w") as f:
        f.write(LIVE_PLAN)
    os.mkdir(os.path.join(tmp, "res1"))
    v = victim(tmp)

    def plant(pid):
        # every file live --out writes: whichever comes first is refused
        for name in ("metrics.csv", "live.csv", "summary.json"):
            os.symlink(v, os.path.join(tmp, "res1", "%s.tmp.%d" % (name, pid)))
    rc, err = run_planted(LIVE, tmp, plant)
    check(rc == 1 and "is a symbolic link" in err, "live temp link: refused: %d %r" % (rc, err))
    check(untouched(v), "live temp link: victim untouched")


def test_profile_db(tmp):
    # a link to nothing where the database is to be created: not created through it
    os.symlink(os.path.join(tmp, "made-by-link.db"), os.path.join(tmp, "p.db"))
    rc, _, err = run(["-q", "profile", "--analytic", "--db", "p.db", "--gpus", "t4", "--models", "resnet50"], tmp)
    check(rc == 1 and "symbolic link to nothing" in err, "profile db dangling link: refused: %d %r" % (rc, err))
    check(not os.path.exists(os.path.join(tmp, "made-by-link.db")), "profile db dangling link: target not created")
    rm(os.path.join(tmp, "p.db"))
    # SQLite's own rollback journal beside it: never written through either
    v = victim(tmp)
    os.symlink(v, os.path.join(tmp, "p.db-journal"))
    rc, _, err = run(["-q", "profile", "--analytic", "--db", "p.db", "--gpus", "t4", "--models", "resnet50"], tmp)
    check(rc == 0 and os.path.isfile(os.path.join(tmp, "p.db")), "profile db: created once the link is gone (%d %r)" % (rc, err))
    check(untouched(v), "profile db journal link: victim untouched")


def test_cache(tmp):
    env = dict(os.environ)
    env["HETBATCH_CACHE"] = os.path.join(tmp, "probe")
    rc, _, err = run(PLAN, tmp, env)
    dbs = glob.glob(os.path.join(tmp, "probe", "profiles-analytic-v*.db"))
    check(rc == 0 and len(dbs) == 1, "cache: a plan builds the analytic cache (%d %r %s)" % (rc, err, dbs))
    if len(dbs) != 1:
        return
    name = os.path.basename(dbs[0])
    cache = os.path.join(tmp, "cache")
    os.mkdir(cache)
    env["HETBATCH_CACHE"] = cache
    v = victim(tmp)
    # this run's own temporary name and a dead builder's: neither written through
    dead = os.path.join(cache, "%s.tmp.%d" % (name, dead_pid()))
    os.symlink(v, dead)
    rc, err = run_planted(PLAN, tmp, lambda pid: os.symlink(v, os.path.join(cache, "%s.tmp.%d" % (name, pid))), env)
    check(untouched(v), "cache temp link: victim untouched (rc %d %r)" % (rc, err))
    check(rc == 0 or (rc == 1 and "symbolic link" in err), "cache temp link: a safe success or a clear error: %d %r" % (rc, err))
    check(not os.path.lexists(dead), "cache stale temp link: removed")
    check(all(not os.path.islink(p) for p in glob.glob(os.path.join(cache, "*"))), "cache: no link left")


# ---- gnuplot ---------------------------------------------------------------------------------

NASTY = ["<touch PWN1;echo x", "|touch PWN2;cat >/dev/null;echo ", "q'`touch PWN3`'\"x",
         "n\nl'\n!touch PWN4\n", "$(touch PWN5)`touch PWN6`"]


def pwned(tmp):
    return [os.path.relpath(p, tmp) for p in glob.glob(os.path.join(tmp, "**", "PWN*"), recursive=True)]


def figures(d):
    return sorted(n for n in os.listdir(d) if n.endswith(".png")) if os.path.isdir(d) else []


def test_gnuplot(tmp):
    if not shutil.which("gnuplot"):
        print("skip gnuplot: not on PATH")
        return
    os.environ["HETBATCH_GNUPLOT_DIR"] = os.path.join(os.environ["HB_SOURCE_ROOT"], "scripts", "gnuplot")
    with open(os.path.join(tmp, "c.json"), "w") as f:
        f.write(SWEEP_QUICK)
    trace = os.path.join(os.environ["HB_SOURCE_ROOT"], "tests", "trace_replay", "small.csv")
    for i, name in enumerate(NASTY):
        wd = os.path.join(tmp, "w%d" % i)
        os.mkdir(wd)
        rc, _, err = run(QUICK + ["--out", name, "--plot"], wd)
        check(rc == 0, "sim --plot --out %r: exit 0 (%d %r)" % (name, rc, err))
        check(len(figures(os.path.join(wd, name))) == 3, "sim --plot --out %r: figures %s" % (name, figures(os.path.join(wd, name))))
        rc, _, err = run(["-q", "sweep", "../c.json", "--out", name + "-sw", "--plot"], wd)
        check(rc == 0, "sweep --plot --out %r: exit 0 (%d %r)" % (name, rc, err))
        check(len(figures(os.path.join(wd, name + "-sw"))) == 2, "sweep --plot --out %r: figures %s" % (name, figures(os.path.join(wd, name + "-sw"))))
        if os.path.exists(trace):
            rc, _, err = run(["-q", "sim", "--cluster", "pollux-t4", "--trace", trace, "--policy", "fifo",
                              "--out", name + "-tr", "--plot"], wd)
            check(rc == 0 and len(figures(os.path.join(wd, name + "-tr"))) >= 1,
                  "sim --trace --plot --out %r: %d %r %s" % (name, rc, err, figures(os.path.join(wd, name + "-tr"))))
        check(pwned(wd) == [], "--out %r: no injected command ran: %s" % (name, pwned(wd)))
    # an absolute --out too (the path itself never reaches gnuplot)
    absout = os.path.join(tmp, "<touch PWN7;echo abs")
    rc, _, err = run(QUICK + ["--out", absout, "--plot"], tmp)
    check(rc == 0 and len(figures(absout)) == 3 and pwned(tmp) == [], "absolute --out: %d %r %s" % (rc, err, pwned(tmp)))


def main():
    if not EXE:
        print("HETBATCH is not set: run through meson", file=sys.stderr)
        return 77
    tests = [test_outset_lock, test_outset_stage, test_sweep_lock, test_plan, test_catalog, test_live,
             test_profile_db, test_cache, test_gnuplot]
    for t in tests:
        tmp = tempfile.mkdtemp(prefix="hb-nofollow-")
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
