#!/usr/bin/env python3
"""scripts/netns-cluster's argument errors: each exits 2 with a message that
names the option and the value, before anything is made (so this runs as
any user); --help exits 0.  As root, also: a non-root user is refused (exit
2, "needs root"), and a PATH without ip is refused (exit 2, naming 'ip')."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.environ.get("HB_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "netns-cluster")
D = ["--dir", os.path.join(tempfile.gettempdir(), "hb-netns-args-never-made")]

CASES = [  # arguments, words the message must contain
    ([], ["no command"]),
    (["start", "2"], ["unknown command", "'start'"]),
    (["up"], ["up needs N"]),
    (["up", "0"], ["N:", "'0'"]),
    (["up", "254"], ["N:", "'254'", "253"]),
    (["up", "two"], ["N:", "'two'"]),
    (["up", "2", "3"], ["unexpected argument", "'3'"]),
    (["up", "2", "--rate"], ["--rate needs a value"]),
    (["up", "2", "--rate", "1gbps"], ["--rate:", "'1gbps'"]),
    (["up", "2", "--rate", "100kbit"], ["--rate:", "'100kbit'", "1mbit"]),
    (["up", "2", "--delay", "20"], ["--delay:", "'20'", "us"]),
    (["up", "2", "--delay", "11s"], ["--delay:", "'11s'"]),
    (["up", "2", "--mtu", "100"], ["--mtu:", "'100'"]),
    (["up", "2", "--slots", "0"], ["--slots:", "'0'"]),
    (["up", "2", "--prefix", "Hb"], ["--prefix:", "'Hb'"]),
    (["up", "2", "--prefix", "-x"], ["--prefix:", "'-x'"]),
    (["up", "2", "--prefix", "waytoolong"], ["--prefix:", "'waytoolong'", "8"]),
    (["up", "2", "--fast"], ["unknown option", "'--fast'"]),
    (["down", "2"], ["takes no N", "'2'"]),
    (["status", "1"], ["takes no N", "'1'"]),
]


def run(args, **kw):
    return subprocess.run(["sh", SCRIPT] + args, capture_output=True, text=True, **kw)


def main():
    bad = []
    for args, words in CASES:
        # --dir after the others, but not where the case is about what comes last
        r = run(args if not args or args[-1] == "--rate" else args + D)
        if r.returncode != 2 or not all(w in r.stderr for w in words):
            bad.append("%s: exit %d, stderr %r; want exit 2 naming %s" % (args, r.returncode, r.stderr, words))
    r = run(["--help"])
    if r.returncode != 0 or "usage" not in r.stdout.lower() and "up N" not in r.stdout:
        bad.append("--help: exit %d, %r" % (r.returncode, r.stdout[:200]))
    if os.geteuid() == 0:
        if shutil.which("setpriv"):
            r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", SCRIPT, "up",
                                "1", "--prefix", "hbnone"] + D, capture_output=True, text=True)
            if r.returncode != 2 or "needs root" not in r.stderr:
                bad.append("as nobody: exit %d, %r; want 2, 'needs root'" % (r.returncode, r.stderr))
        else:
            print("no setpriv: the non-root check is not run")
        # A PATH with what the script needs before its tool check, but no ip.
        tools = tempfile.mkdtemp(prefix="hb-netns-path.")
        try:
            for t in ("awk", "id", "sed", "grep", "mkdir"):
                p = shutil.which(t)
                if p:
                    os.symlink(p, os.path.join(tools, t))
            r = subprocess.run([shutil.which("sh"), SCRIPT, "up", "1", "--prefix", "hbnone"] + D, capture_output=True,
                               text=True, env=dict(os.environ, PATH=tools))
            if r.returncode != 2 or "'ip' not found" not in r.stderr:
                bad.append("without ip: exit %d, %r; want 2, \"'ip' not found\"" % (r.returncode, r.stderr))
        finally:
            shutil.rmtree(tools)
    for b in bad:
        print("FAIL: " + b)
    print("%d cases, %d failed" % (len(CASES) + 3, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
