#!/usr/bin/env python3
"""The PyTorch worker (profiler/torch_worker.py) where torch is absent (CI):
it compiles, imports without importing torch, its NVTX phase names are
ktrace.h's (the C side attributes by these exact names), its models are
catalog models, its argument parser accepts and refuses what it should,
and without torch main() says so and exits 4.  What it does with torch and
a GPU is scripts/gpu/issue12.sh's."""
import argparse
import importlib.util
import json
import os
import py_compile
import re
import sys
import tempfile

root = os.environ.get("HB_SOURCE_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")
worker_path = os.path.join(root, "profiler", "torch_worker.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


py_compile.compile(worker_path, doraise=True, cfile=os.path.join(tempfile.mkdtemp(), "w.pyc"))
had_torch = "torch" in sys.modules
spec = importlib.util.spec_from_file_location("torch_worker", worker_path)
w = importlib.util.module_from_spec(spec)
spec.loader.exec_module(w)
check(had_torch or "torch" not in sys.modules, "importing the worker imported torch")

# phase names: the line of ktrace.h the worker must match
hdr = open(os.path.join(root, "profiler", "ktrace.h")).read()
m = re.search(r'#define HB_KTRACE_PHASE_NAMES (.*)', hdr)
check(m is not None, "ktrace.h has no HB_KTRACE_PHASE_NAMES line")
c_names = tuple(re.findall(r'"([^"]*)"', m.group(1))) if m else ()
check(c_names == w.PHASES, "worker PHASES %r != ktrace.h %r" % (w.PHASES, c_names))
m = re.search(r'#define HB_KTRACE_ITER_NAME "([^"]*)"', hdr)
check(m is not None and m.group(1) == w.ITER_RANGE, "worker ITER_RANGE != ktrace.h HB_KTRACE_ITER_NAME")
src = open(worker_path).read()
for name in w.PHASES:
    check(('range_push("%s")' % name) in src, "no NVTX range '%s' in the worker" % name)
check("range_push(ITER_RANGE)" in src, "the worker pushes no '%s' range" % w.ITER_RANGE)

# models are catalog models
cat = json.load(open(os.path.join(root, "models", "data", "models.json")))
names = {mm["name"] for mm in cat["models"]}
for mod in w.MODELS:
    check(mod in names, "worker model '%s' is not in the catalog" % mod)

# the parser
p = w.build_parser()
a = p.parse_args(["--model", "resnet50", "--points", "32x1,64x2", "--out-dir", "/tmp/x"])
check(a.points == [(32, 1), (64, 2)], "points parsed as %r" % (a.points,))
check(a.ga == 1 and a.precision == "fp32" and a.scale == 1.0, "defaults")
for bad in ("32", "32x0", "x2", "32x1,", "0x1", "32x65", "3.5x1"):
    try:
        w.parse_points(bad)
        check(False, "points '%s' accepted" % bad)
    except argparse.ArgumentTypeError:
        pass


def usage_exit(argv):
    pp = w.build_parser()
    try:
        args = pp.parse_args(argv)
        w.check_args(pp, args)
    except SystemExit as e:
        return e.code
    return 0


saved, sys.stderr = sys.stderr, open(os.devnull, "w")
try:
    check(usage_exit(["--model", "nope", "--points", "1x1", "--out-dir", "d"]) == 2, "unknown model accepted")
    check(usage_exit(["--model", "resnet50", "--out-dir", "d"]) == 2, "missing --points accepted")
    check(usage_exit(["--model", "resnet50", "--points", "1x1", "--out-dir", "d", "--scale", "0.5"]) == 2,
          "--scale on resnet50 accepted")
    check(usage_exit(["--model", "llama2-7b", "--points", "1x1", "--out-dir", "d", "--scale", "0"]) == 2,
          "--scale 0 accepted")
    check(usage_exit(["--model", "bert-large", "--points", "1x1", "--out-dir", "d", "--iters", "0"]) == 2,
          "--iters 0 accepted")
    check(usage_exit(["--model", "bert-large", "--points", "1x1", "--out-dir", "d", "--precision", "fp8"]) == 2,
          "--precision fp8 accepted")
    check(usage_exit(["--model", "llama2-7b", "--points", "1x1", "--out-dir", "d", "--scale", "0.1"]) == 0,
          "a good command refused")
finally:
    sys.stderr.close()
    sys.stderr = saved
check(w.scaled_layers("llama2-7b", 0.1) == 3 and w.scaled_layers("vit", 1.0) == 14 and
      w.scaled_layers("resnet50", 1.0) is None, "scaled_layers")
check(w.point_name("gpt3-xl", 4, 2) == "gpt3-xl-b4-v2", "point_name")

# without torch, main() says so (exit 4); with torch it is not this test's
if importlib.util.find_spec("torch") is None:
    saved, sys.stderr = sys.stderr, open(os.devnull, "w")
    try:
        rc = w.main(["--model", "resnet50", "--points", "32x1", "--out-dir", tempfile.mkdtemp()])
    finally:
        sys.stderr.close()
        sys.stderr = saved
    check(rc == w.EXIT_NO_TORCH, "main() without torch returned %r, not %d" % (rc, w.EXIT_NO_TORCH))

if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("torch worker: all checks passed")
