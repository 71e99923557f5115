#!/usr/bin/env python3
"""check_plots.py: the --plot figures of `sim`, `sim --trace` and `sweep`
are drawn (every script of scripts/gnuplot runs on real data) and are
non-empty PNG and SVG files; the sweep data carries the seeds' range the
error bars need; no script falls back to gnuplot's own colours (its line 5
is a faint yellow).

Environment (tests/meson.build): HETBATCH, HB_SOURCE_ROOT, HETBATCH_CACHE.
Exit 77 (skip) when gnuplot is not on PATH.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.environ.get("HB_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
EXE = os.environ.get("HETBATCH", os.path.join(ROOT, "build", "cli", "hetbatch"))
GPDIR = os.path.join(ROOT, "scripts", "gnuplot")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(args, cwd):
    p = subprocess.run([EXE, "-q"] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=600)
    if p.returncode != 0:
        fail("hetbatch %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[-2000:]))
    return p


def check_figure(path_stem):
    for ext, magic in (("png", b"\x89PNG\r\n\x1a\n"), ("svg", b"<svg")):
        path = "%s.%s" % (path_stem, ext)
        if not os.path.isfile(path):
            fail("%s: not written" % path)
            continue
        data = open(path, "rb").read()
        if len(data) < 2000:
            fail("%s: %d bytes, too small for a figure" % (path, len(data)))
        if ext == "png" and not data.startswith(magic):
            fail("%s: not a PNG file" % path)
        if ext == "svg":
            text = data.decode("utf-8", "replace").lower()
            if magic.decode() not in text:
                fail("%s: not an SVG file" % path)
            # gnuplot's default line 5 (#f0e442) is the yellow the palette drops
            if "f0e442" in text or "rgb(240, 228,  66)" in text or "rgb(240, 228, 66)" in text:
                fail("%s: draws gnuplot's faint yellow (#f0e442)" % path)
            if "<path" not in text and "<polyline" not in text:
                fail("%s: draws no line" % path)


def main():
    if shutil.which("gnuplot") is None:
        print("gnuplot is not on PATH: skipped")
        return 77
    # Every line-drawing script takes its styles from palette.gp.
    for gp in sorted(glob.glob(os.path.join(GPDIR, "*.gp"))):
        name = os.path.basename(gp)
        text = open(gp).read()
        if name == "palette.gp":
            continue
        if 'load gpdir."/palette.gp"' not in text:
            fail("%s: does not load palette.gp" % name)
        if "yellow" in text.lower() or "#f0e442" in text.lower():
            fail("%s: uses yellow" % name)
    tmp = tempfile.mkdtemp(prefix="hb-plots-")
    try:
        run(["sim", "--cluster", "demo", "--model", "resnet50", "--out", "single", "--plot"], tmp)
        for what in ("batch", "gpus", "bars"):
            check_figure(os.path.join(tmp, "single", "resnet50-" + what))
        run(["sim", "--cluster", "pollux-t4", "--trace", os.path.join(ROOT, "tests", "trace_replay", "small.csv"),
             "--out", "trace", "--plot"], tmp)
        for what in ("jct", "util", "rho"):
            check_figure(os.path.join(tmp, "trace", "trace-" + what))
        run(["sweep", os.path.join(ROOT, "examples", "sweep-demo.json"), "--out", "sweep", "--plot"], tmp)
        for what in ("jct", "cost"):
            check_figure(os.path.join(tmp, "sweep", "sweep-load1-" + what))
        # the error bars: min <= mean <= max over the seeds, in columns 6-9;
        # column 10 the censored jobs (demo's 4 GPUs cannot run an 8-GPU job
        # of seed 2: 0.5 on average; none on demo+4 t4)
        dat = os.path.join(tmp, "sweep", "sweep-load1.dat")
        rows = 0
        for line in open(dat) if os.path.isfile(dat) else []:
            if not line.strip() or line.startswith("#"):
                continue
            head, tail = line.partition('"')[0], line.rsplit('"', 1)[1]
            f = [float(x) for x in head.split()] + [float(x) for x in tail.split()]
            if len(f) != 9:
                fail("%s: %r: expected 4 numbers, the label and 5 numbers" % (dat, line))
                continue
            label = line.split('"')[1]
            if f[8] != {"demo": 0.5, "demo+4 t4": 0.0}.get(label, -1):
                fail("%s: %r: censored jobs %g" % (dat, line, f[8]))
            jct, cost, jlo, jhi, clo, chi = f[2], f[3], f[4], f[5], f[6], f[7]
            if not (jlo <= jct + 1e-9 and jct <= jhi + 1e-9 and clo <= cost + 1e-9 and cost <= chi + 1e-9):
                fail("%s: %r: the mean is not inside the seeds' range" % (dat, line))
            rows += 1
        if rows != 4:
            fail("%s: %d data rows, expected 4 (2 clusters x 2 policies)" % (dat, rows))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("plots: all figures drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
