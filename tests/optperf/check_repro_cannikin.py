#!/usr/bin/env python3
"""Run scripts/repro/cannikin --fast --tsv and check its output format:
only tab-separated rows, 7 fields each, verdict pass or fail, and the
checks --fast promises (CIFAR-10's Fig. 7 and Fig. 10 rows)."""
import subprocess
import sys

script, build = sys.argv[1], sys.argv[2]
p = subprocess.run([sys.executable, script, "--fast", "--tsv", "--build", build], stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, text=True)
if p.returncode != 0:
    sys.exit("repro exited %d: %s" % (p.returncode, p.stderr))
rows = [ln.split("\t") for ln in p.stdout.splitlines()]
if not rows:
    sys.exit("no rows on stdout")
for r in rows:
    if len(r) != 7:
        sys.exit("row with %d fields, want 7: %r" % (len(r), r))
    if r[0] != "Cannikin" or r[6] not in ("pass", "fail") or not all(r):
        sys.exit("malformed row: %r" % (r,))
figs = {(r[1], r[2].split(",")[0]) for r in rows}
for want in (("Fig. 7", "CIFAR-10 convergence time vs AdaptDL"), ("Fig. 10", "OptPerf vs DDP batch time")):
    if want not in figs:
        sys.exit("missing row %r in %r" % (want, sorted(figs)))
print("%d rows, %d pass" % (len(rows), sum(r[6] == "pass" for r in rows)))
