#!/usr/bin/env python3
"""The trace utilisation figure (issue 39, item 6), read back from its data
and from the SVG gnuplot draws.

1. The Philly window of `sim --help` (philly.csv --from 3024000 --to 3038400
   --load 2) on jabas-a, a cluster of four GPU types: trace-util.dat's time
   is in hours since the window start (every block starts within the first
   hour, none before 0), it has one column per GPU type, named in its
   header, and per row the types sum to the GPUs held, which is
   util_pct / 100 x the cluster's 16 GPUs.
2. With gnuplot: trace-util.svg's x axis starts at 0 and is labelled, the
   legend names the four types, and neither the title's two lines nor the
   legend reach down into the panels' titles.
3. On pollux-t4 (one type, no --from) the data keep one type column and the
   hours since the trace origin.
Skipped (77) without ../shared's philly.csv.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HB = os.environ["HETBATCH"]
SHARED = os.environ.get("HB_SHARED", "")
PHILLY = os.path.join(SHARED, "data", "pollux", "philly.csv")
SMALL = os.path.join(os.environ.get("HB_SOURCE_ROOT", "."), "tests", "trace_replay", "small.csv")
TYPES = ["v100", "p100", "titan-rtx", "rtx-3090"]


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def run(*args):
    p = subprocess.run([HB, "-q", *args], capture_output=True, text=True)
    check(p.returncode == 0, "%s -> %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


def read_dat(path):
    """(header lines, {policy: [rows of floats]})."""
    head, blocks, cur = [], {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("# ") and cur is None and not blocks and ("columns" in line or "t_h:" in line):
                head.append(line)
            elif line.startswith("# "):
                cur = line[2:]
                blocks[cur] = []
            elif line:
                blocks[cur].append([float(x) for x in line.split()])
    return head, blocks


def check_dat(path, types, gpus, window_h):
    head, blocks = read_dat(path)
    check(len(head) == 2, "%s: two header lines, got %r" % (path, head))
    check(head[0].endswith("then GPUs held of each type: " + " ".join(types)), "%s: types header %r" % (path, head[0]))
    check("hours since the window start, %g h" % window_h in head[1], "%s: window header %r" % (path, head[1]))
    check(blocks, "%s: no blocks" % path)
    for pol, rows in blocks.items():
        check(rows[0][0] >= 0 and rows[0][0] < 1.0, "%s %s: starts at %g h, not at the window" % (path, pol, rows[0][0]))
        check(all(b[0] >= a[0] for a, b in zip(rows, rows[1:])), "%s %s: time goes back" % (path, pol))
        for r in rows:
            check(len(r) == 3 + len(types), "%s %s: %d columns, want %d" % (path, pol, len(r), 3 + len(types)))
            check(abs(sum(r[3:]) - r[2]) < 1e-6, "%s %s: types %r do not sum to %g held" % (path, pol, r[3:], r[2]))
            check(abs(r[1] / 100 * gpus - r[2]) < 1e-6, "%s %s: util %g%% is not %g of %d GPUs" % (path, pol, r[1], r[2], gpus))
        if len(types) > 1:
            check(any(sum(1 for x in r[3:] if x > 0) > 1 for r in rows), "%s %s: never two types held" % (path, pol))
    return blocks


def texts(svg):
    """[(x, y, text)] of every text element gnuplot wrote."""
    out = []
    pat = re.compile(r'<g transform="translate\(([-\d.]+),([-\d.]+)\)[^>]*>\s*<text>([^<]*)</text>')
    for m in pat.finditer(open(svg).read()):
        out.append((float(m.group(1)), float(m.group(2)), m.group(3).strip()))
    return out


def check_svg(svg, policies):
    t = texts(svg)
    titles = [y for x, y, s in t if s in policies]
    check(len(titles) == len(policies), "%s: panel titles %r" % (svg, [s for _, _, s in t][:20]))
    panel_top = min(titles)
    head = [y for x, y, s in t if s.startswith("philly.csv on jabas-a") or s.startswith("GPUs held by type")]
    check(len(head) == 2, "%s: the title's two lines, got %r" % (svg, head))
    check(max(head) + 12 < panel_top, "%s: title at y %g runs into the panel titles at %g" % (svg, max(head), panel_top))
    legend = [y for x, y, s in t if s in TYPES]
    check(len(legend) == len(TYPES), "%s: legend %r" % (svg, legend))
    check(max(legend) + 12 < panel_top, "%s: legend at y %g runs into the panel titles at %g" % (svg, max(legend), panel_top))
    check(sum(1 for _, _, s in t if s.startswith("hours since the window start")) >= 1, "%s: no x label" % svg)
    # the x tick labels of the first panel: the leftmost is 0
    ylab = max(y for x, y, s in t if s.startswith("hours since the window start"))
    ticks = sorted((x, s) for x, y, s in t if re.fullmatch(r"\d+", s) and ylab - 40 < y < ylab)
    check(ticks and ticks[0][1] == "0", "%s: the x axis starts at %r, not 0" % (svg, ticks[:3]))


def main():
    if not os.path.exists(PHILLY):
        print("SKIP: no %s" % PHILLY)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "w")
        run("sim", "--cluster", "jabas-a", "--trace", PHILLY, "--from", "3024000", "--to", "3038400", "--load", "2",
            "--policy", "fifo,tiresias", "--no-fairness", "--out", out, "--plot")
        check_dat(os.path.join(out, "trace-util.dat"), TYPES, 16, 420)
        if shutil.which("gnuplot"):
            check_svg(os.path.join(out, "trace-util.svg"), ["fifo", "tiresias"])
        out = os.path.join(tmp, "t4")
        run("sim", "--cluster", "pollux-t4", "--trace", SMALL, "--policy", "fifo", "--no-fairness", "--out", out, "--plot")
        check_dat(os.path.join(out, "trace-util.dat"), ["t4"], 64, 0)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
