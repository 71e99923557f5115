#!/usr/bin/env python3
"""The profile databases a user has, end to end (issue 17 items 1, 2, 13;
issue 16 items 3, 5, 7).

1. `import jabas DIR` with no --db writes the user database
   ($HETBATCH_DATA/profiles.db); `plan` with no --db then plans from the
   imported rows (the same plan as `plan --db` on the imported file alone),
   and -v names both files and, per GPU x model, the source and the file.
2. `import --db OTHER` warns that later commands read OTHER only with --db.
3. A failed import removes the database file it created, and only that.
4. Four imports at once into one new file all succeed, every run arrives.
5. No -wal, -shm or -journal file is left anywhere after a clean exit.
6. `sim --cluster demo --model llama2-7b` says the model does not fit the
   GPU's memory at any local batch, with the numbers, not "run profile".
7. `profile --analytic` needs --db FILE or --default-db.
Skips (77) when ../shared is absent.
"""
import glob
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

HB = os.environ["HETBATCH"]
SHARED = os.environ.get("HB_SHARED", "")
FIXTURES = os.environ.get("HB_FIXTURES", "")
QS = os.path.join(SHARED, "data/jabas/resnet50-quickstart")
PLAN = ["plan", "--cluster", "jabas-quickstart", "--model", "resnet50", "--gbs", "128"]


def run(*args, ok=True, env=None, cwd=None):
    p = subprocess.run([HB, *args], capture_output=True, text=True, env=env, cwd=cwd)
    if ok and p.returncode != 0:
        sys.exit("FAIL: %s -> %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def rows(db, table):
    with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
        return c.execute("SELECT count(*) FROM %s" % table).fetchone()[0]


def no_side_files(*dirs):
    for d in dirs:
        for suffix in ("-wal", "-shm", "-journal"):
            left = glob.glob(os.path.join(d, "*" + suffix))
            check(not left, "left behind after a clean exit: %s" % left)


def main():
    if not os.path.isdir(QS):
        print("skip: %s not found" % QS)
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="hb-story-")
    data = os.path.join(tmp, "data")
    os.environ["HETBATCH_DATA"] = data
    user_db = os.path.join(data, "profiles.db")
    # a cache of its own: the shared test cache may hold another test's
    # build in progress (its .tmp.PID journal) when this one checks it
    cache = os.path.join(tmp, "cache")
    os.environ["HETBATCH_CACHE"] = cache

    # 1. before any import: the analytic profiles, one file
    p = run("-v", *PLAN, cwd=tmp)
    check("import:jabas" not in p.stdout, "no import yet, but: " + p.stdout)
    check("profile v100 x resnet50: analytic" in p.stderr, "-v names the analytic source:\n" + p.stderr)

    # import with no --db: the user database, no warning
    p = run("import", "jabas", QS, cwd=tmp)
    check("into %s " % user_db in p.stdout, "import writes the user database: " + p.stdout)
    check("only when given --db" not in p.stderr, "no warning for the user database:\n" + p.stderr)
    check(os.path.exists(user_db), "user database created")
    check(not os.path.exists(os.path.join(tmp, "profiles.db")), "nothing written to ./profiles.db any more")

    p = run("-v", *PLAN, cwd=tmp)
    check("profiles: %s + %s/" % (user_db, cache) in p.stdout, "profiles line names both files:\n" + p.stdout)
    check("[v100: import:jabas, run 1; p100: import:jabas, run 1]" in p.stdout, "imported rows used:\n" + p.stdout)
    for gpu, n in (("v100", 6), ("p100", 8)):
        want = "profile %s x resnet50: import:jabas (run 1, %d rows) from %s" % (gpu, n, user_db)
        check(want in p.stderr, "-v says '%s':\n%s" % (want, p.stderr))
    check("profile database 1 of 2 (preferred where sources rank equal): " + user_db in p.stderr, p.stderr)

    # the same plan as on the imported file alone
    q = os.path.join(tmp, "q.db")
    p = run("import", "jabas", QS, "--db", q, cwd=tmp)
    check("warning: plan, sim and sweep read %s only when given --db %s; without --db they read %s" % (q, q, user_db)
          in p.stderr, "import --db elsewhere warns:\n" + p.stderr)
    layered = json.loads(run(*PLAN, "--json", cwd=tmp).stdout)
    alone = json.loads(run(*PLAN, "--db", q, "--json", cwd=tmp).stdout)
    check(layered.pop("profiles") == user_db and alone.pop("profiles") == q, "profiles fields")
    # the same rows read (same digests) from differently named files
    ls, als = layered.pop("profile_sources"), alone.pop("profile_sources")
    check([(u["gpu"], u["source"], u["digest"]) for u in ls] == [(u["gpu"], u["source"], u["digest"]) for u in als]
          and {u["file"] for u in ls} == {"profiles.db"} and {u["file"] for u in als} == {"q.db"},
          "profile_sources: %s against %s" % (ls, als))
    check(layered == alone, "plan on user + analytic == plan on the import alone")

    # a GPU the import does not cover keeps the analytic rows (cluster A has 4 types)
    p = run("-v", "plan", "--cluster", "jabas-a", "--model", "resnet50", "--gbs", "2048", cwd=tmp)
    check("profile v100 x resnet50: import:jabas" in p.stderr and "profile titan-rtx x resnet50: analytic" in p.stderr,
          "per-GPU sources on jabas-a:\n" + p.stderr)
    p = run("-v", "sim", "--cluster", "jabas-quickstart", "--model", "resnet50", "--policy", "jabas",
            "--interval", "1000", cwd=tmp)
    check("profile p100 x resnet50: import:jabas (run 1, 8 rows) from " + user_db in p.stderr,
          "sim -v names the source:\n" + p.stderr)

    # 3. a failed import removes the file it created, and only that
    bad = os.path.join(FIXTURES, "jabas/bad-comm")
    check(os.path.isdir(bad), "fixture %s" % bad)
    new = os.path.join(tmp, "new.db")
    p = run("import", "jabas", bad, "--db", new, ok=False, cwd=tmp)
    check(p.returncode == 2 and not os.path.exists(new), "failed import into a new file leaves no file")
    before = rows(q, "compute")
    p = run("import", "jabas", bad, "--db", q, ok=False, cwd=tmp)
    check(p.returncode == 2 and os.path.exists(q) and rows(q, "compute") == before, "existing file kept as it was")
    env = dict(os.environ, HETBATCH_DATA=os.path.join(tmp, "data2"))
    p = run("import", "jabas", bad, ok=False, env=env, cwd=tmp)
    check(p.returncode == 2 and not os.path.exists(os.path.join(tmp, "data2", "profiles.db")),
          "failed import into a new user database leaves no file")

    # 4. four imports at once into one new file
    conc = os.path.join(tmp, "conc.db")
    procs = [subprocess.Popen([HB, "-q", "import", "jabas", QS, "--db", conc], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=tmp) for _ in range(4)]
    for pr in procs:
        out, err = pr.communicate()
        check(pr.returncode == 0, "concurrent import failed (%d): %s" % (pr.returncode, err))
    check(rows(conc, "run") == 4 and rows(conc, "compute") == 14, "every import's run arrived")

    # 5. nothing beside any database
    no_side_files(tmp, data, cache)

    # 6. a model that does not fit
    p = run("sim", "--cluster", "demo", "--model", "llama2-7b", ok=False, cwd=tmp)
    err = p.stderr.strip()
    check(p.returncode == 2, "llama2-7b on demo: exit %d" % p.returncode)
    check(len(err.splitlines()) == 1, "one line:\n" + err)
    check("does not fit GPU" in err and "at any local batch" in err and " GB" in err, "says why:\n" + err)
    check("run `hetbatch profile`" not in err, "no hint that cannot help:\n" + err)

    # 7. profile --analytic needs a target
    p = run("profile", "--analytic", ok=False, cwd=tmp)
    check(p.returncode == 2 and "--default-db" in p.stderr, "profile --analytic without --db:\n" + p.stderr)
    print("ok")


if __name__ == "__main__":
    main()
