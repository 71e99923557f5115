#!/usr/bin/env python3
"""check_layers.py: no folder includes a header of a folder above it.

Every header of the source tree is mapped to its folder, then every
`#include "..."` of every .c, .h and .cu file is checked against the folder
map below (docs/architecture.md gives the same map in prose).  Includes are
flat (meson's include directories), so a header is found by its name; a
path relative to the including file ("../cli_run.h") is resolved first.

Failures name the file, the line and the forbidden include:

    models/x.c:12: #include "sim.h": models may not include sim (sim/sim.h)

Policy folders: every folder under sim/policies/ (sim/policies/NAME/, one
per policy, found by walking, so a new policy needs no line here) may
include what sim/policies may, and its own headers; its headers may be
included only by its own folder, the registry at the top of sim/policies/
(policy.c names every policy), tests, fuzz and scripts.  So policies never
reach into each other, and results, studies, cli and live see a policy only
through the registry (policy.h).

Also checked: a header name is not used twice (the flat includes would
pick one of them at random), *_priv.h headers are included only from their
own folder, every C file is in a folder of the map, and every quoted
include resolves to a header of the tree (or a generated one).

usage: check_layers.py [--root DIR] [--strict] [--list]
  --root DIR  the tree to check (default: the repository holding this file)
  --strict    a documented exception that no longer matches anything fails
              (run so by `meson test`; keeps the exception list honest)
  --list      print the folder map and the exceptions, then check
Exit status: 0 clean, 1 violations, 2 usage.
"""
import os
import re
import sys

# ---- the map ----------------------------------------------------------------

LIBRARY = ["common", "models", "profiler", "solver", "forecast", "traces", "sim",
                   "sim/policies", "sim/results", "sim/study", "live"]

# folder -> the folders whose headers it may include (its own always).
# include/ is the public API (include/hetbatch/policy.h, installed): the
# bottom layer, included by its path ("hetbatch/policy.h") from anywhere;
# examples/ are built outside the tree, against include/ alone.
ALLOWED = {
    "include": [],
    "examples": ["include"],
    "common": [],
    "models": ["common"],
    "profiler": ["common", "models"],
    "solver": ["common", "models"],           # + profiler/profdb.h (HEADERS)
    "forecast": ["common", "models"],
    "traces": ["common", "models"],
    "sim": ["common", "models", "profiler", "solver", "forecast", "traces"],
    "sim/policies": ["common", "models", "profiler", "solver", "forecast", "traces", "sim"],
    "sim/results": ["common", "models", "profiler", "solver", "forecast", "traces", "sim", "sim/policies"],
    "sim/study": ["common", "models", "profiler", "solver", "forecast", "traces", "sim", "sim/policies",
                  "sim/results"],
    # live runs plans and adaptive policies on devices: the simulator's
    # engine and policies (sim.h, agent_util.h, policy.h), never its
    # result writers or studies; no trace readers so far.
    "live": ["common", "models", "profiler", "solver", "forecast", "sim", "sim/policies"],
    "cli": LIBRARY,
    # the C API runs the subcommands in-process (api/hetbatch.c)
    "api": LIBRARY + ["cli"],
    "scripts": LIBRARY + ["tests"],
    "tests": LIBRARY + ["scripts", "fuzz", "api"],  # tests/api calls the C API
    "fuzz": LIBRARY + ["tests"],
}

# folder -> single headers of a folder it may not include otherwise.
HEADERS = {
    "solver": ["profiler/profdb.h"],  # the profile database: measured step times
}

# Files that sit in one folder but belong to another's layer.  Each one is
# a documented exception: delete its line when the file moves.
PENDING_MOVES = {
}

# Include arrows allowed against the map: (file, header path) -> why.
# Empty: every arrow found when the check was written was fixed.
EXCEPTIONS = {
    ("sim/policies/sia/arbiter_sia.c", "sim/policies/pollux/agent_pollux.h"):
        "Sia runs the Pollux agent and reads its goodput report; to go once that "
        "report moves to agent_util.h",
}

# Quoted includes of headers that are not in the tree.
GENERATED = {"hb_config.h"}  # meson configure_file, in the build directory

FOLDERS = sorted(ALLOWED, key=lambda f: -len(f))  # longest prefix first
SKIP_DIRS = {".git", "subprojects", "node_modules", "__pycache__"}
SOURCE_EXT = (".c", ".h", ".cu", ".cuh")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


POLICIES = "sim/policies"
PUBLIC = "include"  # the public headers' root: included by their path under it
# Folders that may include any policy folder's headers besides its own.
POLICY_READERS = {POLICIES, "tests", "fuzz", "scripts"}


def policy_folder(rel):
    """sim/policies/NAME for a path inside a policy folder, else None."""
    if not rel.startswith(POLICIES + "/"):
        return None
    rest = rel[len(POLICIES) + 1:]
    return POLICIES + "/" + rest.split("/")[0] if "/" in rest else None


def may_include(src, dst, target):
    """May a file of folder src include header target of folder dst?"""
    if dst == src or dst == PUBLIC:  # the public API is below every layer
        return True
    if policy_folder(dst + "/x"):  # dst is a policy folder, not src's own
        return src in POLICY_READERS
    base = POLICIES if policy_folder(src + "/x") else src
    return dst == base or dst in ALLOWED[base] or target in HEADERS.get(base, [])


def folder_of(rel):
    """The folder of the map a path is in (a policy folder counts as its
    own), or None."""
    pf = policy_folder(rel)
    if pf:
        return pf
    for f in FOLDERS:
        if rel == f or rel.startswith(f + "/"):
            return f
    return None


def layer_of(rel):
    return PENDING_MOVES.get(rel) or folder_of(rel)


def is_build_dir(path):
    """A meson (or any ninja) build directory, whatever its name."""
    return any(os.path.exists(os.path.join(path, m)) for m in ("meson-private", "meson-info", "build.ninja"))


def walk(root):
    """Relative paths of the source files, build directories left out."""
    out = []
    for dp, dn, fn in os.walk(root):
        rel_dir = os.path.relpath(dp, root)
        dn[:] = sorted(d for d in dn if d not in SKIP_DIRS and not d.startswith(".")
                       and not is_build_dir(os.path.join(dp, d)))
        for f in sorted(fn):
            if f.endswith(SOURCE_EXT):
                out.append(os.path.normpath(os.path.join(rel_dir, f)))
    return out


def check(root, strict=False, list_map=False):
    errors = []
    files = walk(root)
    headers = {}
    for rel in files:
        if rel.startswith(PUBLIC + "/"):
            headers.setdefault(rel[len(PUBLIC) + 1:], []).append(rel)  # by its path: "hetbatch/policy.h"
        elif rel.endswith((".h", ".cuh")):
            headers.setdefault(os.path.basename(rel), []).append(rel)
    for name, paths in sorted(headers.items()):
        if len(paths) > 1:
            errors.append(f"{paths[1]}: header name {name} is also {paths[0]}: flat includes cannot tell them apart")

    if list_map:
        for f in sorted(ALLOWED):
            extra = [h for h in HEADERS.get(f, [])]
            print(f"{f}: may include {', '.join(ALLOWED[f]) or 'nothing else'}"
                  + (f"; and just {', '.join(extra)}" if extra else ""))
        for p, f in sorted(PENDING_MOVES.items()):
            print(f"exception: {p} counts as {f} (pending move)")
        print(f"{POLICIES}/NAME: may include what {POLICIES} may; its headers only for "
              f"{', '.join(sorted(POLICY_READERS))}")
        for (p, h), why in sorted(EXCEPTIONS.items()):
            print(f"exception: {p} may include {h}: {why}")

    used_exceptions = set()
    for rel in files:
        src = layer_of(rel)
        if src is None:
            errors.append(f"{rel}: not in a folder of the layering map (tests/layering/check_layers.py)")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
        for lineno, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            inc = m.group(1)
            where = f"{rel}:{lineno}: #include \"{inc}\""
            # relative to the including file first, then by name
            cand = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
            if cand in set(headers.get(os.path.basename(inc), [])):
                target = cand
            elif "/" not in inc and inc in headers:
                target = headers[inc][0]
            elif os.path.join(PUBLIC, inc) in headers.get(inc, []):
                target = os.path.join(PUBLIC, inc)
            elif os.path.basename(inc) in GENERATED:
                continue
            else:
                errors.append(f"{where}: no such header in the tree")
                continue
            dst = folder_of(target)
            tfolder = os.path.dirname(target)
            if os.path.basename(target).endswith("_priv.h") and tfolder != os.path.dirname(rel):
                errors.append(f"{where}: {target} is private to {tfolder}/")
                continue
            if dst is None:
                continue  # reported above as a file outside the map
            if may_include(src, dst, target):
                continue
            if (rel, target) in EXCEPTIONS:
                used_exceptions.add((rel, target))
                continue
            errors.append(f"{where}: {src} may not include {dst} ({target})")

    if strict:
        present = set(files)
        for p in PENDING_MOVES:
            if p not in present:
                errors.append(f"{p}: listed in PENDING_MOVES but not there any more: delete the exception")
        for key in EXCEPTIONS:
            if key not in used_exceptions:
                errors.append(f"{key[0]}: exception for {key[1]} no longer needed: delete it")
    return errors


def main(argv):
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    strict = list_map = False
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--root" and args:
            root = args.pop(0)
        elif a == "--strict":
            strict = True
        elif a == "--list":
            list_map = True
        else:
            print(__doc__.split("\n\n")[-2], file=sys.stderr)
            return 2
    if not os.path.isdir(root):
        print(f"check_layers: {root}: not a directory", file=sys.stderr)
        return 2
    errors = check(root, strict, list_map)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} violation(s) of the layering (docs/architecture.md)", file=sys.stderr)
        return 1
    print(f"check_layers: {len(walk(root))} files, no include against the layering")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
