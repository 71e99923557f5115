#!/usr/bin/env python3
"""What a new user still tripped over (issue 39, item 9), end to end.

1. Error lines have one form: every error, usage or input or runtime, from
   several commands starts "hetbatch: error: " (usage ones name the command
   next: "hetbatch: error: sim: ...").
2. The top-level help says profile both computes (analytic) and measures
   (--backend), and the README lists the torch backend.
3. `profile --analytic --gpus cpu --models resnet50` (a pair the analytic
   model cannot fit) says so as a note, not as a failure, and exits 0.
4. live --help's examples: the plan example is in the model's global batch
   bounds (no "below ... bounds" warning) after the analytic example, and it
   plans (exit 0).
5. The sim tables (trace replay and single job) size the policy column from
   the longest name: every row's numbers start where the header's do.
"""
import os
import re
import subprocess
import sys
import tempfile

HB = os.environ["HETBATCH"]
ROOT = os.environ.get("HB_SOURCE_ROOT", ".")
SMALL = os.path.join(ROOT, "tests", "trace_replay", "small.csv")


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def run(args, cwd=None):
    return subprocess.run([HB, *args], capture_output=True, text=True, cwd=cwd)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        bad = [
            ["sim", "--polcy", "fifo"],
            ["profile", "--analytic", "--gpus", "nope", "--db", os.path.join(tmp, "x.db")],
            ["forecast", os.path.join(tmp, "missing.csv")],
            ["plan", "--cluster", "demo", "--model", "nope", "--gbs", "64"],
            ["sim", "--cluster", "nope", "--model", "resnet50"],
            ["catalog", "gpus", "--from-philly", "x.csv"],
        ]
        for args in bad:
            p = run(args)
            first = p.stderr.splitlines()[0] if p.stderr else ""
            check(p.returncode != 0 and first.startswith("hetbatch: error: "),
                  "%s: exit %d, first line %r" % (" ".join(args), p.returncode, first))
        p = run(["sim", "--polcy", "fifo"])
        check(p.stderr.startswith("hetbatch: error: sim: unknown option"), p.stderr)

        top = run(["--help"]).stdout
        line = [l for l in top.splitlines() if l.strip().startswith("profile ")]
        check(line and "analytic" in line[0] and "--backend" in line[0], "top-level help: %r" % line)
        readme = open(os.path.join(ROOT, "README.md")).read()
        check("--backend cuda|cpu|torch" in readme and "- `torch`:" in readme, "README lacks the torch backend")

        db = os.path.join(tmp, "cpu.db")
        p = run(["profile", "--analytic", "--gpus", "cpu", "--models", "resnet50", "--db", db])
        check(p.returncode == 0, "profile --analytic: exit %d" % p.returncode)
        lines = p.stdout.splitlines()
        check(len(lines) == 2 and lines[1].startswith("note: by the analytic model, 1 of the 1 GPU x model pair is "
                                                      "too big"), "profile note: %r" % p.stdout)
        check("cannot" not in p.stdout and "error" not in p.stdout.lower(), "reads like a failure: %r" % p.stdout)

        helptext = run(["live", "--help"]).stdout
        ex = [l.strip()[len("hetbatch "):] for l in helptext.splitlines() if l.strip().startswith("hetbatch ")]
        an = [e for e in ex if e.startswith("profile --analytic")]
        pl = [e for e in ex if e.startswith("plan ")]
        check(an and pl, "live --help examples: %r" % ex)
        p = run(an[0].split(), cwd=tmp)
        check(p.returncode == 0, "%s: %s" % (an[0], p.stderr))
        cmd = pl[0].split(" > ")[0].split()
        p = run(cmd, cwd=tmp)
        check(p.returncode == 0 and "bounds" not in p.stderr, "%s: exit %d %r" % (pl[0], p.returncode, p.stderr))

        def aligned(text, head_word):
            rows = text.splitlines()
            hi = [i for i, l in enumerate(rows) if l.startswith("policy ")]
            check(hi, "no table header in %r" % text)
            h = rows[hi[0]]
            col = h.index(head_word) + len(head_word)  # right-aligned numbers end here
            body = []
            for l in rows[hi[0] + 1:]:
                if not l.strip() or "cannot run" in l:
                    break
                body.append(l)
            check(body, "no rows under %r" % h)
            for l in body:
                check(len(l) >= col and l[col - 1] != " " and (len(l) == col or l[col] == " "),
                      "column %r moved in %r (header %r)" % (head_word, l, h))
            return body

        p = run(["-q", "sim", "--cluster", "pollux-t4", "--trace", SMALL, "--policy",
                 "fifo,elastic-fixed-random,easyscale-homo", "--no-fairness"])
        check(p.returncode == 0, p.stderr)
        body = aligned(p.stdout, "jobs")
        check(any(l.startswith("elastic-fixed-random ") for l in body), "long name missing: %r" % body)
        p = run(["-q", "sim", "--cluster", "jabas-a", "--model", "resnet50", "--policy", "jabas,easyscale-homo"])
        aligned(p.stdout, "time(h)")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
