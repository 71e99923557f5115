"""What the netns tests share: running a command, the skip (77) when this
host cannot make network namespaces, and what a cluster of a prefix left."""
import os
import subprocess
import sys

ROOT = os.environ.get("HB_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "netns-cluster")
HETBATCH = os.environ.get("HETBATCH", os.path.join(ROOT, "build", "cli", "hetbatch"))


def skip(why):
    print("skipped: " + why)
    sys.exit(77)


def sh(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def names_with_prefix(prefix):
    """Namespaces and links whose names start with prefix."""
    ns = [l.split()[0] for l in sh(["ip", "netns", "list"]).stdout.splitlines() if l.strip()]
    links = [l.split(":")[1].strip() for l in sh(["ip", "-o", "link"]).stdout.splitlines()]
    return [n for n in ns + links if n.startswith(prefix)]


def require_netns(prefix, tools=("ip", "tc", "mpirun")):
    """Skip unless root, with tools on PATH, and `ip netns add` works."""
    if os.geteuid() != 0:
        skip("not root: network namespaces need root")
    for tool in tools:
        if sh(["sh", "-c", "command -v " + tool]).returncode != 0:
            skip("no '%s' on PATH" % tool)
    probe = prefix + "p"
    if sh(["ip", "netns", "add", probe]).returncode != 0:
        skip("'ip netns add' fails here")
    sh(["ip", "netns", "del", probe])
