#!/usr/bin/env python3
"""scripts/netns-cluster up 2 at 100mbit, `hetbatch profile allreduce
--backend cpu` across the two namespaces, then down.

Checks: the cluster file loads and names the link class tcp-netns-100mbit
at 12.5e6 B/s; the sweep sees 2 ranks on 2 hosts (scope inter) and stores
its rows and Eq. 3 fit under that link; busbw at the largest size is within
[0.60, 1.05] x the shaped rate K, the best of up to three sweeps (tbf counts header bytes, so TCP payload
tops out near 0.94 K at MTU 1500; 0.60 leaves room for a loaded 2-core host
and still fails the halved bandwidth of one TCP connection per pair, 0.45-0.5
K, and an unshaped link, 20x K); up twice is fine; down leaves no namespace
and no link with the prefix, and runs even when a check fails.

Skipped (77) when not root, when `ip netns add` fails, without mpirun, or
when hetbatch was built without MPI (the sweep sees one rank).
"""
import json
import os
import shutil
import signal
import sys
import tempfile

from netns_util import HETBATCH, SCRIPT, names_with_prefix, require_netns, sh, skip

PREFIX = "hbq%d" % (os.getpid() % 100000)  # unique per test run, <= 8 characters
RATE, K = "100mbit", 12.5e6
LO, HI = 0.60, 1.05


def main():
    require_netns(PREFIX)

    work = tempfile.mkdtemp(prefix="hb-netns-test.")
    cdir = os.path.join(work, "cluster")
    failed = []

    def down():
        r = sh([SCRIPT, "down", "--prefix", PREFIX, "--dir", cdir])
        if r.returncode != 0:
            failed.append("down: exit %d: %s" % (r.returncode, r.stderr))

    # meson's timeout sends SIGTERM: still take the cluster down
    signal.signal(signal.SIGTERM, lambda *_: (down(), sys.exit(1)))
    try:
        for attempt in (1, 2):  # up twice: idempotent
            r = sh([SCRIPT, "up", "2", "--rate", RATE, "--prefix", PREFIX, "--dir", cdir])
            if r.returncode != 0:
                failed.append("up (%d): exit %d: %s" % (attempt, r.returncode, r.stderr))
                return
        c = json.loads(sh([HETBATCH, "catalog", "clusters", os.path.join(cdir, "cluster.json"), "--json"]).stdout)
        links = {(g.get("inter_link"), g.get("inter_bw")) for g in c["groups"]}
        if links != {("tcp-netns-" + RATE, K)} or len(c["groups"]) != 2:
            failed.append("cluster.json: groups %s, want 2 nodes on tcp-netns-%s at %g B/s" % (c["groups"], RATE, K))
        db = os.path.join(work, "ar.db")
        # Open MPI's own allocations are never freed: under ASan, leak
        # checks stay off for the ranks, as in the other MPI tests
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")
        # A loaded host only lowers what the link delivers, so the link's
        # rate is the best of up to three sweeps: a sweep below the band
        # is repeated (the suite's other tests share the 2 cores), while
        # the halved rate the band catches stays halved in every sweep.
        best = None
        for attempt in range(3):
            r = sh([os.path.join(cdir, "mpirun"), "-np", "2", "-x", "ASAN_OPTIONS", HETBATCH, "-q", "profile",
                    "allreduce", "--backend", "cpu", "--cluster", os.path.join(cdir, "cluster.json"), "--sizes", "2,4",
                    "--warmup", "1", "--iters", "2", "--db", db, "--json"], timeout=240, env=env)
            if r.returncode != 0:
                failed.append("profile allreduce: exit %d: %s%s" % (r.returncode, r.stdout, r.stderr))
                return
            one = json.loads(r.stdout)
            print("sweep %d: busbw at the largest size %.4g B/s" % (attempt + 1, one["points"][-1]["busbw"]))
            if best is None or one["points"][-1]["busbw"] > best["points"][-1]["busbw"]:
                best = one
            if best["points"][-1]["busbw"] >= LO * K:
                break
        out = best
        if out["n_gpus"] == 1:
            skip("hetbatch sees one rank under mpirun (built without MPI?)")
        if (out["n_gpus"], out["hosts"], out["scope"], out["link"]) != (2, 2, "inter", "tcp-netns-" + RATE):
            failed.append("sweep: %d ranks on %d hosts, scope %s, link %s; want 2 on 2, inter, tcp-netns-%s"
                          % (out["n_gpus"], out["hosts"], out["scope"], out["link"], RATE))
        if not out.get("fit"):
            failed.append("no Eq. 3 fit stored")
        busbw = out["points"][-1]["busbw"]
        print("busbw at %d B: %.4g B/s = %.3f x K (K = %g B/s; accepted %.2f to %.2f)"
              % (out["points"][-1]["bytes"], busbw, busbw / K, K, LO, HI))
        if not LO * K <= busbw <= HI * K:
            failed.append("busbw %.4g B/s is %.3f x the shaped rate, outside [%.2f, %.2f]" % (busbw, busbw / K, LO, HI))
    finally:
        down()
        left = names_with_prefix(PREFIX)
        if left:
            failed.append("after down: left %s" % left)
        if os.path.exists(cdir):
            failed.append("after down: %s still exists" % cdir)
        shutil.rmtree(work, ignore_errors=True)
        for f in failed:
            print("FAIL: " + f)
        print("%d failed" % len(failed))
        if failed:
            sys.exit(1)


if __name__ == "__main__":
    main()
