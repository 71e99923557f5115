"""`hetbatch live` and `hetbatch sweep` across hosts: scripts/netns-cluster
up 3 at 1gbit (three network namespaces, one cpu device each), a plan on
two of them, then:

  live       `live --plan --map` with one rank in each namespace: exit 0,
             one row per rank on its own node, prediction rows stored
  faults     each ends (or, for the slowdown, continues) within its bound,
             its message naming the host or the rank:
               kill      rank 1 SIGKILLed at iteration 3 (HB_LIVE_FAULT)
               stop      rank 1 SIGSTOPped at iteration 3: rank 0's
                         watchdog names "rank 1 on P1" after --timeout
               link down P1's link set down mid-run: mpirun's keepalive
                         names P1, no rank left running afterwards
               slow      P1's link slowed 10x (tc change) mid-run: the run
                         finishes
  resume     6 iterations straight, or 3 with a checkpoint and 3 resumed
             with node P1's rank on P2 instead (a replacement host): every
             rank's final checkpoint byte-identical
  database   after all of it the profile database passes integrity_check,
             and the failed runs added no prediction rows
  adaptive   `live --policy simigrad --relaunch-every-epoch` with DIR/mpirun
             as its launcher: 3 ranks on the 3 hosts, relaunched once
  sweep      `mpirun -np 2 sweep` over two namespaces writes the same bytes
             as `sweep -j 1` on this host
and down leaves no namespace or link of the prefix.  The accuracy of the
predictions is not judged: the suite's other tests share the cores
(scripts/bench/live.sh measures that on a quiet host).

Prints one line per fault (outcome, seconds to the end of the run) for the
fault matrix.  Skipped (77) when not root, when `ip netns add` fails,
without mpirun, or when hetbatch was built without MPI.
"""
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

from netns_util import HETBATCH, ROOT, SCRIPT, names_with_prefix, require_netns, sh

SWEEP = os.path.join(ROOT, "examples", "sweep-demo.json")
PREFIX = "hbv%d" % (os.getpid() % 10000)  # unique per test run, <= 8 characters
RATE, BURST = "1gbit", "250000b"  # the script's tbf burst at 1gbit
N0, N1, N2 = PREFIX + "0", PREFIX + "1", PREFIX + "2"


def live_ranks_left():
    """hetbatch live processes of this test still running (by their plan path)."""
    r = sh(["pgrep", "-f", "hetbatch.* live --plan .*hb-netns-live"])
    return [l for l in r.stdout.split() if l.strip()]


failed = []


def main():
    require_netns(PREFIX, ("ip", "tc", "mpirun", "pgrep"))

    work = tempfile.mkdtemp(prefix="hb-netns-live.")
    cdir = os.path.join(work, "cluster")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")

    def down():
        r = sh([SCRIPT, "down", "--prefix", PREFIX, "--dir", cdir])
        if r.returncode != 0:
            failed.append("down: exit %d: %s" % (r.returncode, r.stderr))

    def hb(*args, timeout=120):
        return sh([HETBATCH, *args], cwd=work, timeout=timeout, env=env)

    def mpi(hosts, *args, fault=None, timeout=120, during=None):
        """DIR/mpirun -np 2 on hosts; during(t0) runs in a thread.  (exit, s, stderr)."""
        e = dict(env)
        cmd = [os.path.join(cdir, "mpirun"), "-np", str(len(hosts)), "--host", ",".join(hosts), "-x", "ASAN_OPTIONS"]
        if fault:
            e["HB_LIVE_FAULT"] = fault
            cmd += ["-x", "HB_LIVE_FAULT"]
        t0 = time.monotonic()
        th = threading.Thread(target=during, args=(t0,)) if during else None
        if th:
            th.start()
        try:
            r = subprocess.run(cmd + [HETBATCH, *args], cwd=work, capture_output=True, text=True, timeout=timeout,
                               env=e)
            rc, err = r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired as x:
            out = x.stderr or b""
            rc, err = "timeout", out.decode(errors="replace") if isinstance(out, bytes) else out
        if th:
            th.join()
        return rc, time.monotonic() - t0, err

    def predictions():
        with sqlite3.connect("file:%s?mode=ro" % os.path.join(work, "p.db"), uri=True) as c:
            return c.execute("SELECT count(DISTINCT run_id) FROM prediction").fetchone()[0]

    signal.signal(signal.SIGTERM, lambda *_: (down(), sys.exit(1)))
    try:
        r = sh([SCRIPT, "up", "3", "--rate", RATE, "--prefix", PREFIX, "--dir", cdir])
        if r.returncode != 0:
            failed.append("up: exit %d: %s" % (r.returncode, r.stderr))
            return
        # profiles of a small CIFAR-10 on this host's cpu device, the
        # analytic fits of the links, and a plan on two of the nodes
        for args in (("-q", "profile", "--backend", "cpu", "--models", "cifar10", "--scale", "0.05", "--local-bs",
                      "32,64", "--max-vsw", "1", "--iters", "3", "--warmup", "1", "--db", "p.db"),
                     ("-q", "profile", "--analytic", "--gpus", "cpu", "--models", "cifar10", "--db", "p.db")):
            r = hb(*args)
            if r.returncode != 0:
                failed.append("%s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
                return
        # the inter-node all-reduce fit the plan needs, measured across two
        # of the namespaces
        rc, _, err = mpi([N0, N1], "-q", "profile", "allreduce", "--backend", "cpu", "--cluster",
                         os.path.join(cdir, "cluster.json"), "--sizes", "64K,256K,1M", "--iters", "5", "--db", "p.db")
        if rc != 0:
            failed.append("profile allreduce across hosts: exit %s: %s" % (rc, err))
            return
        r = hb("-q", "plan", "--cluster", os.path.join(cdir, "cluster.json"), "--model", "cifar10", "--gbs", "128",
               "--db", "p.db", "--gpus", "%s:1,%s:1" % (N0, N1), "--json")
        if r.returncode != 0:
            failed.append("plan: exit %d: %s" % (r.returncode, r.stderr))
            return
        with open(os.path.join(work, "plan.json"), "w") as f:
            f.write(r.stdout)
        plan = os.path.join(work, "plan.json")
        both = "%s=%s,%s=%s" % (N0, N0, N1, N1)
        base = ["live", "--plan", plan, "--method", "ddp", "--warmup", "0"]

        # live across the two hosts
        rc, secs, err = mpi([N0, N1], *base, "--iters", "4", "--map", both, "--out", "run")
        if rc != 0:
            failed.append("live across hosts: exit %s: %s" % (rc, err))
            return
        rows = open(os.path.join(work, "run", "live.csv")).read().splitlines()
        nodes = sorted(l.split(",")[1] for l in rows[1:] if l.split(",")[1])  # not the critical path's
        if nodes != [N0, N1]:
            failed.append("live.csv: nodes %s, want %s" % (nodes, [N0, N1]))
        before = predictions()

        # the fault matrix
        def link_down(t0):
            time.sleep(3)
            sh(["ip", "netns", "exec", N1, "ip", "link", "set", "eth0", "down"])

        def slow_link(t0):
            time.sleep(2)
            for ns, dev in ((N1, "eth0"), (PREFIX + "br", "p1")):
                extra = ["handle", "1:"] if dev == "eth0" else []
                r = sh(["ip", "netns", "exec", ns, "tc", "qdisc", "change", "dev", dev, "root", *extra, "tbf", "rate",
                        "100mbit", "burst", BURST, "latency", "50ms"])
                if r.returncode != 0:
                    failed.append("tc change on %s %s: %s" % (ns, dev, r.stderr))

        trials = (
            ("kill", dict(fault="kill:1:3"), ["--iters", "100", "--timeout", "10"], 60,
             lambda rc, err: rc != 0 and "rank 1" in err),
            ("stop", dict(fault="stop:1:3"), ["--iters", "100", "--timeout", "4"], 60,
             lambda rc, err: rc != 0 and "rank 1 on %s" % N1 in err and "rank 0 waited for it" in err),
            ("link down", dict(during=link_down), ["--iters", "400", "--timeout", "5"], 40,
             lambda rc, err: rc not in (0, "timeout") and N1 in err),
            ("slow 10x", dict(during=slow_link), ["--iters", "40", "--timeout", "30"], 120,
             lambda rc, err: rc == 0),
        )
        for name, kw, extra, bound, ok in trials:
            rc, secs, err = mpi([N0, N1], *base, "--map", both, *extra, timeout=bound + 30, **kw)
            good = ok(rc, err) and secs <= bound
            print("fault %-9s exit %-7s %5.1f s (bound %d s)  %s" % (name, rc, secs, bound, "ok" if good else "FAILED"))
            if not good:
                failed.append("fault %s: exit %s after %.1f s (bound %d s):\n%s" % (name, rc, secs, bound, err[-3000:]))
            if name == "link down":
                sh(["ip", "netns", "exec", N1, "ip", "link", "set", "eth0", "up"])
                deadline = time.monotonic() + 15  # the cut-off rank's own watchdog: --timeout 5 and grace
                while live_ranks_left() and time.monotonic() < deadline:
                    time.sleep(0.5)
                if live_ranks_left():
                    failed.append("link down: ranks still running 15 s after the run ended: %s" % live_ranks_left())
        r = sh([SCRIPT, "up", "3", "--rate", RATE, "--prefix", PREFIX, "--dir", cdir])  # the shaping back
        if r.returncode != 0:
            failed.append("up again: exit %d: %s" % (r.returncode, r.stderr))

        # checkpoint and resume on a replacement host
        rc_a = mpi([N0, N1], *base, "--iters", "6", "--map", both, "--checkpoint", "ck-a")
        rc_b = mpi([N0, N1], *base, "--iters", "3", "--map", both, "--checkpoint", "ck-b")
        rc_c = mpi([N0, N2], *base, "--iters", "3", "--map", "%s=%s,%s=%s" % (N0, N0, N1, N2), "--checkpoint",
                   "ck-b", "--resume")
        for what, (rc, _, err) in (("straight", rc_a), ("first half", rc_b), ("resumed on %s" % N2, rc_c)):
            if rc != 0:
                failed.append("checkpoint run %s: exit %s: %s" % (what, rc, err))
        for rank in (0, 1):
            a, b = (os.path.join(work, d, "rank-%d.ckpt" % rank) for d in ("ck-a", "ck-b"))
            if not (os.path.exists(a) and os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read()):
                failed.append("rank %d: the checkpoint resumed on %s differs from the straight run's" % (rank, N2))

        # the database after it all: intact, and the failed runs wrote nothing
        with sqlite3.connect("file:%s?mode=ro" % os.path.join(work, "p.db"), uri=True) as c:
            ic = c.execute("PRAGMA integrity_check").fetchone()[0]
        if ic != "ok":
            failed.append("p.db: integrity_check says %s" % ic)
        after = predictions()
        # the slowed run and the three checkpoint runs finished, one run each
        if after - before != 4:
            failed.append("runs with prediction rows: %d before the faults, %d after; want 4 more (the runs that "
                          "finished)" % (before, after))

        # an adaptive run relaunched across the three hosts at every epoch
        r = hb("live", "--policy", "simigrad", "--model", "cifar10", "--cluster", os.path.join(cdir, "cluster.json"),
               "--db", "p.db", "--out", "adapt", "--epochs", "2", "--dataset-size", "1024", "--relaunch-every-epoch",
               "--launcher", os.path.join(cdir, "mpirun") + " -x ASAN_OPTIONS", timeout=300)
        if r.returncode != 0 or "1 relaunches" not in r.stdout + r.stderr:
            failed.append("live --policy simigrad across hosts: exit %d:\n%s%s" % (r.returncode, r.stdout, r.stderr))
        elif "3 ranks" not in r.stdout + r.stderr:
            failed.append("live --policy simigrad: not 3 ranks on the 3 hosts:\n%s%s" % (r.stdout, r.stderr))

        # a sweep over two hosts against -j 1 here
        r = hb("-q", "sweep", SWEEP, "-j", "1", "--out", "sw1", timeout=300)
        rc, secs, err = mpi([N0, N1], "-q", "sweep", SWEEP, "-j", "1", "--out", "sw2", timeout=300)
        if r.returncode != 0 or rc != 0:
            failed.append("sweep: exit %d here, %s across hosts: %s %s" % (r.returncode, rc, r.stderr, err))
        else:
            for name in sorted(os.listdir(os.path.join(work, "sw1"))):
                a, b = (os.path.join(work, d, name) for d in ("sw1", "sw2"))
                if not os.path.isfile(b) or open(a, "rb").read() != open(b, "rb").read():
                    failed.append("sweep: %s differs across hosts" % name)
            print("sweep across %s, %s: the same bytes as -j 1 (%.1f s)" % (N0, N1, secs))
    finally:
        down()
        left = names_with_prefix(PREFIX)
        if left:
            failed.append("after down: left %s" % left)
        if failed:
            print("FAILED:\n  " + "\n  ".join(failed))
        else:
            shutil.rmtree(work, ignore_errors=True)


main()
sys.exit(1 if failed else 0)
