#!/usr/bin/env python3
"""test_readme_check.py: scripts/readme-check's own logic, on small made-up
READMEs and outputs (no hetbatch needed for the pure parts; the end-to-end
part runs `hetbatch catalog clusters` through it and expects a README with
a changed row to fail and --update to repair it)."""
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import tempfile
import types

ROOT = os.environ.get("HB_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
path = os.path.join(ROOT, "scripts", "readme-check")
loader = importlib.machinery.SourceFileLoader("readme_check", path)
spec = importlib.util.spec_from_loader(loader.name, loader)
rc = importlib.util.module_from_spec(spec)
rc.__file__ = path
loader.exec_module(rc)

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL: " + what)


norm = rc.Normaliser(["/tmp/sandbox/main", "/tmp/sandbox"])
hdr = "policy   time(h)  cost($)  wall(s)"
check(rc.matches(norm, [hdr, "jabas  1.00  2.00  0.643"], [hdr, "jabas  1.00  2.00  9.9"]),
      "a wall(s) column differing is masked")
check(not rc.matches(norm, [hdr, "jabas  1.00  2.00  0.643"], [hdr, "jabas  1.01  2.00  0.643"]),
      "a changed number is a mismatch")
check(rc.matches(norm, ["a", "...", "z"], ["a", "b", "c", "z"]), "'...' stands for lines")
check(rc.matches(norm, ["a", "...", "z"], ["a", "z"]), "'...' stands for no line")
check(not rc.matches(norm, ["a", "...", "z"], ["a", "b"]), "the line after '...' must come")
check(rc.matches(norm, ["cluster x, seed 1; ..."], ["cluster x, seed 1; interval=100 (model)"]),
      "a line ending in ' ...' is a prefix")
check(not rc.matches(norm, ["a"], ["a", "b"]), "an extra line is a mismatch")
check(rc.matches(norm, ["a    b"], ["a b"]), "runs of spaces compare equal")
check(rc.matches(norm, ["profiles: /root/.cache/hetbatch/p.db"], ["profiles: /tmp/sandbox/home/.cache/hetbatch/p.db"]),
      "the cache directory is masked")
check(rc.matches(norm, ["done in 0.80 s"], ["done in 12.5 s"]), "'in N s' is masked")

# regenerate keeps unchanged lines (their wall times) and the elisions
new = rc.regenerate(norm, ["head ...", hdr, "jabas  1.00  2.00  0.643", "..."],
                    ["head line", hdr, "jabas  1.50  2.00  0.700", "more", "lines"], lambda s: s)
check(new == ["head ...", hdr, "jabas  1.50  2.00  0.700", "..."], "regenerate: %r" % new)
new = rc.regenerate(norm, [hdr, "jabas  1.00  2.00  0.643"], [hdr, "jabas  1.00  2.00  0.7", "", "tail"],
                    lambda s: s)
check(new == [hdr, "jabas  1.00  2.00  0.643", "", "tail"], "regenerate keeps a matching line: %r" % new)

# README parsing: sessions, directives
text = "x\n<!-- readme-check: slow -->\n```\n$ a\nout\n\n$ b\n```\n```sh\nnot a session\n```\n```\n$ c\n```\n"
blocks = rc.parse_readme(text.split("\n"))
check(len(blocks) == 2, "two session blocks (got %d)" % len(blocks))
check(blocks[0].directive == ("slow", ""), "the slow directive: %r" % (blocks[0].directive,))
check([s[0] for s in blocks[0].sessions] == ["a", "b"] and blocks[0].sessions[0][1] == ["out"],
      "sessions: %r" % blocks[0].sessions)
check(blocks[1].directive is None, "no directive on the second block")

# --help examples: continuations, notes in parentheses, blank lines between groups
helptext = ("Usage: x\n\nExamples:\n  hetbatch a \\\n      --b c\n  (a note that\n  goes on)\n\n"
            "  hetbatch d > out.json\n\nExit status: 0\n")
ex = rc.help_examples(helptext)
check(ex == ["hetbatch a --b c", "hetbatch d > out.json"], "help examples: %r" % ex)
ins, outs = rc.file_arguments("hetbatch sim --trace tests/x.csv --db p.db --out runs/a > o.json")
check(ins == ["tests/x.csv"] and set(outs) == {"p.db", "runs/a", "o.json"}, "file arguments: %r %r" % (ins, outs))

# end to end, when a binary is there: a changed row fails, --update repairs it
exe = os.environ.get("HETBATCH")
if exe and os.access(exe, os.X_OK):
    tmp = tempfile.mkdtemp(prefix="hb-rc-")
    try:
        box = rc.Sandbox(os.path.abspath(exe), os.path.join(ROOT, "..", "shared"))
        code, out, err, _ = box.run("hetbatch catalog clusters")
        out = [line for line in out]
        while out and not out[-1]:
            out.pop()
        check(code == 0 and len(out) > 3, "catalog clusters ran")
        bad = list(out)
        bad[1] = bad[1].replace("16", "17", 1)
        readme = os.path.join(tmp, "README.md")
        open(readme, "w").write("# t\n\n```\n$ hetbatch catalog clusters\n" + "\n".join(bad) + "\n```\n")
        rc.README = readme
        args = types.SimpleNamespace(only=None, list=False, slow=False, update=False)
        fails, ran = rc.check_readme(args, box, rc.Normaliser([box.main, box.dir, box.home]))
        check(fails == 1 and ran == 1, "a changed row is reported (%d failures)" % fails)
        args.update = True
        rc.check_readme(args, box, rc.Normaliser([box.main, box.dir, box.home]))
        args.update = False
        fails, _ = rc.check_readme(args, box, rc.Normaliser([box.main, box.dir, box.home]))
        check(fails == 0, "--update repaired the block")
        box.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print("%d failure(s)" % failures)
    sys.exit(1)
print("readme-check self-test: ok")
