#!/usr/bin/env python3
"""Readers after a killed writer (issue 40 item 3).

A writer SIGKILLed inside its transaction leaves DB-journal, a hot journal
that only a connection allowed to write may roll back.  Read-only openers
(plan, sim, live, profile --compare) used to fail with "attempt to write a
readonly database" (exit 1) until some writer opened the file.  Now:

1. a writer process is SIGKILLed mid-transaction (its changes spilled into
   the file, the journal left behind); `plan --db`, `sim --db` and
   `profile --compare` right after it exit 0, read the old rows, and the
   journal is gone;
2. the same for the user profile database, which every command without
   --db reads;
3. where the reader may not write the file's directory (run as another
   user, or a read-only directory), it exits 2 with one line that says what
   happened and which command repairs it, and the file is untouched;
4. a real `profile --analytic --db` killed at random points: the next
   reader never fails.
"""
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HB = os.environ["HETBATCH"]
PLAN = ["plan", "--cluster", "demo", "--model", "resnet50", "--gbs", "256"]
SIM = ["sim", "--cluster", "demo", "--model", "resnet50", "--policy", "jabas"]


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def run(args, cwd, env=None, preexec=None):
    return subprocess.run([HB, "-q", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          preexec_fn=preexec, timeout=300)


KILLED_WRITER = r"""
import os, signal, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA journal_mode=DELETE")
con.execute("PRAGMA cache_size=1")   # spill the changed pages into the file
con.execute("BEGIN IMMEDIATE")
con.execute("DELETE FROM compute")
con.execute("DELETE FROM memory")
con.execute("UPDATE run SET notes = 'half-written'")
os.kill(os.getpid(), signal.SIGKILL)
"""


def kill_writer(db):
    """A writer SIGKILLed inside its transaction; returns the row count it
    must not leave."""
    before = count(db)
    p = subprocess.run([sys.executable, "-c", KILLED_WRITER, db])
    check(p.returncode == -signal.SIGKILL, "the writer was killed (%d)" % p.returncode)
    check(os.path.getsize(db + "-journal") > 0, "a hot journal left beside " + db)
    return before


def hot(db):
    """A journal SQLite would play back: one whose header SQLite completed.
    A writer killed before it synced the journal leaves the header's magic
    zero (the file itself not yet changed); that one is not hot, readers
    ignore it, and the next writer removes it."""
    try:
        with open(db + "-journal", "rb") as f:
            return f.read(1) not in (b"", b"\0")
    except FileNotFoundError:
        return False


def count(db):
    # immutable: reads the file as it is, plays back nothing, writes nothing
    with sqlite3.connect("file:%s?immutable=1" % db, uri=True) as c:
        return c.execute("SELECT count(*) FROM compute").fetchone()[0]


def fresh(tmp, name):
    db = os.path.join(tmp, name)
    p = run(["profile", "--analytic", "--models", "resnet50", "--db", db], tmp)
    check(p.returncode == 0, "profile --analytic: " + p.stderr)
    return db


def readers_recover(tmp):
    db = fresh(tmp, "hot.db")
    for args in (PLAN + ["--db", db], SIM + ["--db", db], ["profile", "--compare", "--db", db]):
        rows = kill_writer(db)
        check(count(db) != rows, "the killed writer changed the file itself")
        p = run(args, tmp)
        check(p.returncode == 0, "%s after a killed writer: %d %s" % (args[0], p.returncode, p.stderr))
        check(not os.path.exists(db + "-journal"), "%s rolled the journal back" % args[0])
        check(count(db) == rows, "%s: the old rows are back (%d, want %d)" % (args[0], count(db), rows))


def user_db_recovers(tmp):
    data = os.path.join(tmp, "data")
    os.makedirs(data)
    db = os.path.join(data, "profiles.db")
    shutil.copy(fresh(tmp, "user.db"), db)
    rows = kill_writer(db)
    env = dict(os.environ, HETBATCH_DATA=data)
    p = run(PLAN, tmp, env)
    check(p.returncode == 0, "plan without --db after a killed writer of the user database: " + p.stderr)
    check(not os.path.exists(db + "-journal") and count(db) == rows, "user database rolled back")


def as_nobody():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


def refused_where_not_writable(tmp):
    ro = os.path.join(tmp, "ro")
    os.makedirs(ro)
    db = os.path.join(ro, "hot.db")
    shutil.copy(fresh(tmp, "src.db"), db)
    kill_writer(db)
    with open(db, "rb") as f:
        image = f.read()
    os.chmod(ro, 0o555)
    os.chmod(db, 0o444)
    os.chmod(tmp, 0o755)
    # root may write anything: read as another user then
    preexec = as_nobody if os.geteuid() == 0 else None
    env = dict(os.environ, HETBATCH_CACHE=os.path.join(tmp, "nocache"), HETBATCH_DATA=os.path.join(tmp, "nodata"))
    try:
        for args in (PLAN + ["--db", db], ["profile", "--compare", "--db", db]):
            p = run(args, tmp, env, preexec)
            lines = p.stderr.strip().splitlines()
            check(p.returncode == 2, "%s on an unrecoverable hot journal: exit %d (want 2) %s"
                  % (args[0], p.returncode, p.stderr))
            check(len(lines) == 1, "one line: %r" % p.stderr)
            check("stopped mid-transaction" in lines[0] and db + "-journal" in lines[0] and
                  "PRAGMA quick_check" in lines[0], "says what happened and what repairs it: " + lines[0])
            check("readonly database" not in lines[0], "not SQLite's message: " + lines[0])
        with open(db, "rb") as f:
            check(f.read() == image and os.path.exists(db + "-journal"), "the file left as it was")
    finally:
        os.chmod(ro, 0o755)
        os.chmod(db, 0o644)
    # the repair the message names, then the reader works
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA quick_check").fetchone()
    check(not os.path.exists(db + "-journal"), "the repair rolled back")
    p = run(PLAN + ["--db", db], tmp)
    check(p.returncode == 0, "plan after the repair: " + p.stderr)


def killed_hetbatch(tmp):
    db = fresh(tmp, "killed.db")
    args = ["profile", "--analytic", "--models", "resnet50,gnmt,bert-large", "--db", db]
    t0 = time.time()
    p = run(args, tmp)
    clean = time.time() - t0
    check(p.returncode == 0, "profile: " + p.stderr)
    for i in range(6):
        w = subprocess.Popen([HB, "-q", *args], cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(clean * (i + 1) / 8)
        w.send_signal(signal.SIGKILL)
        w.wait()
        # a reader right after the kill
        p = run(PLAN + ["--db", db], tmp)
        check(p.returncode == 0, "plan right after a killed profile --analytic: %d %s" % (p.returncode, p.stderr))
        check(not hot(db), "no hot journal left after the reader")
        with sqlite3.connect(db) as c:
            check(c.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity")


def main():
    tmp = tempfile.mkdtemp(prefix="hb-hot-")
    try:
        readers_recover(tmp)
        user_db_recovers(tmp)
        refused_where_not_writable(tmp)
        killed_hetbatch(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
