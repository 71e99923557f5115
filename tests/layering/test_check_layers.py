#!/usr/bin/env python3
"""test_check_layers.py: check_layers.py on small fake trees.

Each case writes a tree into a temporary directory (a few headers in the
folders of the map plus the files under test), runs the check on it and
expects its exit status and, for a failure, the file:line and include it
must name.  Exit status 0 when every case passes.
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_layers.py")

# A tree that passes: one header per folder and a legal include or two.
BASE = {
    "common/error.h": "",
    "models/catalog.h": '#include "error.h"\n',
    "profiler/profdb.h": '#include "catalog.h"\n',
    "profiler/device.h": "",
    "solver/iidp.h": '#include "catalog.h"\n',
    "forecast/forecast.h": '#include "error.h"\n',
    "traces/jobspec.h": '#include "catalog.h"\n',
    "sim/sim.h": '#include "iidp.h"\n#include "jobspec.h"\n',
    "sim/policies/policy.h": '#include "sim.h"\n',
    "sim/policies/policy.c": '#include "policy.h"\n#include "fifo.h"\n',   # the registry names policies
    "sim/policies/fifo/fifo.h": '#include "policy.h"\n',
    "sim/policies/fifo/fifo.c": '#include "fifo.h"\n#include "sim.h"\n',
    "sim/policies/tiresias/tiresias.c": '#include "policy.h"\n#include "iidp.h"\n',
    "sim/results/results.h": '#include "policy.h"\n',
    "sim/results/results_priv.h": '#include "results.h"\n',
    "sim/results/results.c": '#include "results_priv.h"\n',
    "sim/study/sweep.h": '#include "results.h"\n',
    "live/live.h": '#include "policy.h"\n',
    "cli/cli.h": '#include "sweep.h"\n#include "live.h"\n',
    "tests/cli_run.h": "",
    "tests/sim/test_sim.c": '#include "../cli_run.h"\n#include "sweep.h"\n',
    "hb_build/build.ninja": "",                       # a build directory: skipped
    "hb_build/cli/x.c": '#include "nothing.h"\n',
}


def run(extra, args=()):
    with tempfile.TemporaryDirectory(prefix="layers-") as root:
        for rel, text in {**BASE, **extra}.items():
            if text is None:
                continue
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, CHECK, "--root", root, *args], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


FAILURES = []


def case(name, extra, rc, want=(), args=()):
    got_rc, out = run(extra, args)
    missing = [w for w in want if w not in out]
    if got_rc != rc or missing:
        FAILURES.append(f"{name}: exit {got_rc} (want {rc}), missing {missing!r}\n{out}")
        print(f"FAIL {name}")
    else:
        print(f"ok   {name}")


def main():
    case("the base tree passes", {}, 0)
    case("models/ including a sim header fails", {"models/x.c": '#include "error.h"\n\n#include "sim.h"\n'}, 1,
         ['models/x.c:3: #include "sim.h": models may not include sim (sim/sim.h)'])
    case("the engine including a policy header fails", {"sim/sim.c": '#include "sim.h"\n#include "policy.h"\n'}, 1,
         ['sim/sim.c:2: #include "policy.h": sim may not include sim/policies'])
    case("policies including results fail", {"sim/policies/p.c": '#include "results.h"\n'}, 1,
         ['sim/policies/p.c:1: #include "results.h"'])
    case("a policy folder including another's header fails",
         {"sim/policies/tiresias/t2.c": '#include "fifo.h"\n'}, 1,
         ['sim/policies/tiresias/t2.c:1: #include "fifo.h": sim/policies/tiresias may not include '
          'sim/policies/fifo'])
    case("a policy folder including results fails", {"sim/policies/fifo/f2.c": '#include "results.h"\n'}, 1,
         ['sim/policies/fifo/f2.c:1: #include "results.h": sim/policies/fifo may not include sim/results'])
    case("results including a policy folder's header fail", {"sim/results/r2.c": '#include "fifo.h"\n'}, 1,
         ['sim/results/r2.c:1: #include "fifo.h": sim/results may not include sim/policies/fifo'])
    case("tests may include a policy folder's header", {"tests/p/t.c": '#include "fifo.h"\n'}, 0)
    case("results including the study fail", {"sim/results/r.c": '#include "sweep.h"\n'}, 1,
         ['sim/results/r.c:1: #include "sweep.h"'])
    case("live including the study fails", {"live/l.c": '#include "sweep.h"\n'}, 1, ['live/l.c:1: #include "sweep.h"'])
    case("tests including a cli header fail", {"tests/t.c": '#include "cli.h"\n'}, 1,
         ['tests/t.c:1: #include "cli.h": tests may not include cli (cli/cli.h)'])
    case("scripts including a cli header fail", {"scripts/bench/b.c": '#include "cli.h"\n'}, 1,
         ['scripts/bench/b.c:1: #include "cli.h"'])
    case("solver may include profdb.h", {"solver/s.c": '#include "profdb.h"\n'}, 0)
    case("solver may not include the rest of profiler", {"solver/s.c": '#include "profdb.h"\n#include "device.h"\n'}, 1,
         ['solver/s.c:2: #include "device.h": solver may not include profiler (profiler/device.h)'])
    case("a private header outside its folder fails", {"sim/study/s.c": '#include "results_priv.h"\n'}, 1,
         ['sim/study/s.c:1: #include "results_priv.h": sim/results/results_priv.h is private to sim/results/'])
    case("a file outside the map fails", {"newdir/x.c": ""}, 1, ["newdir/x.c: not in a folder of the layering map"])
    case("a header name used twice fails", {"sim/error.h": ""}, 1, ["header name error.h"])
    case("an include of a missing header fails", {"traces/t.c": '#include "nowhere.h"\n'}, 1,
         ['traces/t.c:1: #include "nowhere.h": no such header in the tree'])
    case("generated headers are allowed", {"common/c.c": '#include "hb_config.h"\n'}, 0)
    case("'#  include' with spaces is read too", {"models/y.c": '#  include "policy.h"\n'}, 1,
         ['models/y.c:1: #include "policy.h": models may not include sim/policies'])

    # The documented pending moves: such a file counts as its future folder;
    # --strict fails once it has moved and the exception stayed behind.
    spec = importlib.util.spec_from_file_location("check_layers", CHECK)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for path, layer in sorted(mod.PENDING_MOVES.items()):
        target = {"sim/policies": "policy.h"}.get(layer)
        if target:
            case(f"{path} counts as {layer}", {path: f'#include "{target}"\n'}, 0)
        case(f"--strict: {path} gone, its exception stale", {}, 1, [f"{path}: listed in PENDING_MOVES"], ["--strict"])
    if FAILURES:
        print("\n".join(FAILURES), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
