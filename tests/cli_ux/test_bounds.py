#!/usr/bin/env python3
"""Issue 40 items 6 and 8 end to end: small inputs that asked for unbounded
work are refused before anything is allocated, with the limit in the
message and exit 2, and lenient parsing is gone.

Every run is capped at 2 GB of address space and 60 s, so a regression fails
here instead of exhausting the machine:

- forecast: horizon / --interval above 100000 query points (--origin
  99999999999, --interval 0.00001); at the limit it still runs; 1e300
  values give a non-finite forecast, refused naming the file; hex in CSV.
- sim --synthetic: rate x hours above 1,000,000 jobs; nothing written.
- plan --gbs N --force above 2^20; --gbs 2147483647 names [1, 2^30].
- a 100,000-GPU cluster file: plan (16384) and sim (8192) refuse it.
- catalog clusters --from-philly on 100,000 machines: seconds, not a
  minute (gpu_mix was quadratic), with the types in order of appearance.
- duplicate keys in a job spec, the Philly log, a cluster file, JABAS
  cluster_info.json and nccl-tests JSON; a plan with a second object;
  a corrupt profile database (exit 2); a Philly row dated 0001-01-01.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HB = os.environ["HETBATCH"]
FIX = os.environ["HB_FIXTURES"]
LIMIT_AS = 2_000_000_000


def cap():
    if CAP_AS:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def can_cap():
    """AddressSanitizer reserves terabytes of address space for its shadow
    memory, so a sanitizer build cannot start under RLIMIT_AS: there the
    runs are bounded by the timeout alone."""
    def probe():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))
    p = subprocess.run([HB, "--version"], capture_output=True, text=True, preexec_fn=probe, timeout=60)
    return p.returncode == 0


CAP_AS = True


def run(*args, cwd=None):
    t0 = time.monotonic()
    p = subprocess.run([HB, "-q", *args], capture_output=True, text=True, preexec_fn=cap, timeout=60, cwd=cwd)
    p.wall = time.monotonic() - t0
    return p


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def refused(p, *needles, code=2):
    """Exit code, one line on stderr holding every needle."""
    what = " ".join(p.args[1:])
    check(p.returncode == code, "%s: exit %d, want %d\n%s" % (what, p.returncode, code, p.stderr))
    # a usage error adds "Try 'hetbatch CMD --help'."
    lines = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith("Try '")]
    check(len(lines) == 1, "%s: one line on stderr, got %r" % (what, p.stderr))
    for n in needles:
        check(n in p.stderr, "%s: message lacks %r: %s" % (what, n, p.stderr))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def test_forecast(tmp):
    traj = os.path.join(FIX, "forecast", "traj_plain.csv")  # steps 100..3000
    refused(run("forecast", traj, "--origin", "99999999999"), "--origin 99999999999", "limit of 100000")
    refused(run("forecast", traj, "--origin", "3000", "--interval", "0.00001"), "--interval 1e-05",
            "limit of 100000")
    refused(run("forecast", traj, "--origin", "3000", "--epoch-steps", "99999999999"), "--epoch-steps",
            "limit of 100000")
    p = run("forecast", traj, "--origin", "3000", "--interval", "0.03")  # exactly 100000 points
    check(p.returncode == 0, "100000 query points run: %s" % p.stderr)
    big = write(os.path.join(tmp, "big.csv"),
                "step,global_batch\n" + "".join("%d,%g\n" % (100 * i, 1e300 * (1 + i % 3)) for i in range(1, 31)))
    refused(run("forecast", big), "big.csv", "not a finite number", "global_batch")
    hexf = write(os.path.join(tmp, "hex.csv"), "step,global_batch\n100,0x10\n200,20\n300,30\n")
    refused(run("forecast", hexf), "hex.csv:2: field 'global_batch': value '0x10' is not a number")


def test_synthetic(tmp):
    out = os.path.join(tmp, "synth-out")
    p = run("sim", "--cluster", "pollux-t4", "--synthetic", "poisson", "--synth", "rate=1000000",
            "--synth", "hours=100000", "--out", out)
    refused(p, "rate 1e+06 jobs/h", "100000 hours", "limit of 1000000 jobs")
    check(p.wall < 10, "refused at once (%.1f s)" % p.wall)
    check(not os.path.exists(out), "nothing written")
    refused(run("sim", "--cluster", "pollux-t4", "--synthetic", "poisson", "--synth", "hours=0",
                "--synth", "jobs=1000001", "--out", out), "jobs 1000001", "limit of 1000000")


def test_plan_gbs():
    p = run("plan", "--cluster", "jabas-a", "--model", "resnet50", "--gbs", "1073741824", "--force")
    refused(p, "--gbs 1073741824 --force", "at most 1048576")
    check(p.wall < 10, "refused at once (%.1f s)" % p.wall)
    refused(run("plan", "--cluster", "jabas-a", "--model", "resnet50", "--gbs", "2147483647"),
            "--gbs: '2147483647' is not an integer in [1, 1073741824]")
    refused(run("plan", "--cluster", "jabas-a", "--model", "resnet50", "--gbs", "65536"),
            "--force plans it anyway, up to 1048576")
    p = run("plan", "--cluster", "jabas-a", "--model", "resnet50", "--gbs", "1048576", "--force")
    check(p.returncode == 0, "--gbs 2^20 --force plans: %s" % p.stderr)


def test_cluster_size(tmp):
    doc = {"name": "huge", "storage_bw": 1e9, "restart_latency_s": 20, "intra_link": "pcie3-x16",
           "intra_bw": 15.75e9, "inter_link": "ib-100g", "inter_bw": 12.5e9,
           "groups": [{"name": "a", "gpu": "v100", "nodes": 12500, "gpus_per_node": 8}], "source": "test"}
    huge = write(os.path.join(tmp, "huge.json"), json.dumps(doc))
    out = os.path.join(tmp, "huge-out")
    for args, limit in ((("plan", "--gbs", "32768"), "16384 GPUs for plan"),
                        (("sim", "--policy", "jabas", "--out", out), "8192 GPUs for sim")):
        p = run(args[0], "--cluster", huge, "--model", "resnet50", *args[1:])
        refused(p, "cluster 'huge' has 100000 GPUs on 12500 nodes", "limit of " + limit)
        check(p.wall < 10, "%s refused at once (%.1f s)" % (args[0], p.wall))
    check(not os.path.exists(out), "nothing written")


def test_from_philly(tmp):
    types = ["24GB", "12GB"]
    rows = ["machineId,number of GPUs,single GPU mem"]
    rows += ["m%d,%d,%s" % (i, 8 if i % 3 else 4, types[(i // 7) % 2]) for i in range(100000)]
    ml = write(os.path.join(tmp, "machines.csv"), "\n".join(rows) + "\n")
    p = run("catalog", "clusters", "--from-philly", ml)
    check(p.returncode == 0, "from-philly: %s" % p.stderr)
    check(p.wall < 30, "100,000 machines in %.1f s (was over 60 s)" % p.wall)
    p40 = sum(8 if i % 3 else 4 for i in range(100000) if (i // 7) % 2 == 0)
    p100 = sum(8 if i % 3 else 4 for i in range(100000) if (i // 7) % 2 == 1)
    check("%d p40, %d p100" % (p40, p100) in p.stdout, "GPU mix in order of appearance:\n%s" % p.stdout[:600])


def test_duplicate_keys(tmp):
    jobs = write(os.path.join(tmp, "jobs.json"),
                 '{"jobs": [{"name": "a", "arrival_s": 0, "arrival_s": 50, "model": "resnet50", "gpus": 4}]}')
    refused(run("sim", "--cluster", "pollux-t4", "--trace", jobs, "--out", os.path.join(tmp, "o1")),
            "jobs.json:1", "field 'arrival_s': value 50: duplicate key")
    with open(os.path.join(FIX, "traces", "philly_log_good.json")) as f:
        log = f.read()
    i = log.index('"user"')
    log = write(os.path.join(tmp, "log.json"), log[:i] + '"user": "x", ' + log[i:])
    refused(run("sim", "--cluster", "philly", "--trace", log, "--format", "philly-log", "--out",
                os.path.join(tmp, "o2")), "log.json:", "element 1: field 'user'", "duplicate key")
    cl = write(os.path.join(tmp, "cl.json"),
               '{"name": "lab", "storage_bw": 1e9, "restart_latency_s": 20, "restart_latency_s": 30,'
               ' "intra_link": "pcie3-x16", "intra_bw": 15.75e9, "inter_link": "eth-10g", "inter_bw": 1.25e9,'
               ' "groups": [{"name": "box", "gpu": "t4", "nodes": 1, "gpus_per_node": 4}], "source": "dup"}')
    refused(run("catalog", "clusters", cl), "cl.json: field 'restart_latency_s': value 30: duplicate key")
    jd = os.path.join(tmp, "jabas")
    shutil.copytree(os.path.join(FIX, "jabas", "good"), jd)
    ci = os.path.join(jd, "cluster_info.json")
    with open(ci) as f:
        text = f.read().replace('"node1"', '"node0"')
    write(ci, text)
    db = os.path.join(tmp, "j.db")
    refused(run("import", "jabas", jd, "--db", db), "cluster_info.json: field 'node0'", "duplicate key")
    with open(os.path.join(FIX, "nccl", "allreduce-2node.json")) as f:
        text = f.read().replace('"version": 2,', '"version": 2, "version": 3,', 1)
    nj = write(os.path.join(tmp, "nccl.json"), text)
    refused(run("import", "nccl-tests", nj, "--link", "ib-100g", "--db", os.path.join(tmp, "n.db")),
            "nccl.json: field 'version': value 3: duplicate key")


def test_plan_trailing_text(tmp):
    plan = os.path.join(tmp, "plan.json")
    p = run("plan", "--cluster", "jabas-a", "--model", "resnet50", "--gbs", "1024", "--out", plan)
    check(p.returncode == 0, "plan --out: %s" % p.stderr)
    with open(plan) as f:
        text = f.read()
    two = write(os.path.join(tmp, "two.json"), text + '{"format": "hetbatch-plan/1"}\n')
    refused(run("live", "--plan", two, "--method", "iidp"), "two.json:", "trailing text after the JSON value")


def test_corrupt_db(tmp):
    bad = os.path.join(tmp, "bad.db")
    with open(bad, "wb") as f:
        f.write(b"SQLite format 3\0" + bytes(range(256)) * 8)
    refused(run("plan", "--cluster", "jabas-a", "--model", "resnet50", "--gbs", "1024", "--db", bad),
            "bad.db", "not a database")


def test_philly_date(tmp):
    with open(os.path.join(FIX, "traces", "philly_good.csv")) as f:
        rows = f.read().splitlines()[:3]
    csv = write(os.path.join(tmp, "p.csv"), "\n".join(rows + ["0001-01-01 00:00:00,600,1,600,c1"]) + "\n")
    p = run("sim", "--cluster", "philly", "--trace", csv, "--out", os.path.join(tmp, "o3"))
    refused(p, "p.csv:4: field 'timestamp': value '0001-01-01 00:00:00': not a date between 1970 and 2099")


def main():
    global CAP_AS
    CAP_AS = can_cap()
    if not CAP_AS:
        print("note: %s does not start under RLIMIT_AS (a sanitizer build); timeouts only" % HB)
    tmp = tempfile.mkdtemp(prefix="hb-bounds-")
    try:
        test_forecast(tmp)
        test_synthetic(tmp)
        test_plan_gbs()
        test_cluster_size(tmp)
        test_from_philly(tmp)
        test_duplicate_keys(tmp)
        test_plan_trailing_text(tmp)
        test_corrupt_db(tmp)
        test_philly_date(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
