#!/usr/bin/env python3
"""dry_check.py: check the commands a GPU script would run, without running them.

issue12.sh --dry-run records every stage's command (NUL-separated: the
stage name, the argument count, the arguments) and hands the record to this
checker, so that a typo costs seconds on the CPU machine rather than a stage
of a GPU session's 15 minutes.  Per command:

  hetbatch          the global options are in `hetbatch --help`, the
                    subcommand is one it lists, every option given is in
                    `hetbatch SUB --help` and one that takes a value has
                    one; --model/--models name catalog models (`hetbatch
                    catalog models NAME`), --cluster a catalog cluster or a
                    file the catalog loads (`hetbatch catalog clusters
                    FILE`), --backend/--method/--sync/--precision a value
                    the subcommand's help names
  files             every input (--plan, --cluster FILE, --worker, --inject,
                    --db of plan and live) exists or is written by an earlier
                    stage (profile --db, plan --out); every output's folder
                    exists
  plan              rehearsed for real on the analytic profiles (its --db
                    dropped, its --out moved to the work folder): the same
                    options on the built-in database must give a plan, and
                    the row `live --method` then reads must be in it
  sh -c SCRIPT      `sh -n` parses it; its simple commands (split at &&, ||,
                    ;, |) are checked as above
  python3 -c CODE   CODE compiles; python3 FILE: FILE exists and compiles
  anything else     named in the summary as not checked (nvidia-smi)

Errors name the stage, the command and what is wrong; all are printed, the
first first.  Exit status: 0 all good, 1 something is wrong, 2 usage.

usage: dry_check.py --hetbatch PATH --cmds FILE --work DIR [--allow-missing PATH]...
       dry_check.py --self-test --hetbatch PATH
"""
import json
import os
import py_compile
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# options whose value is a file or folder the command reads, per subcommand
INPUTS = {"plan": {"--db", "--cluster"}, "live": {"--db", "--plan", "--cluster"},
          "profile": {"--worker", "--inject"}}
# and those it writes
OUTPUTS = {"profile": {"--db", "--trace-dir"}, "plan": {"--out"}, "live": {"--out"}}
# options whose value must be one of the words the help lists
ENUMS = {"--backend", "--method", "--sync", "--precision"}
OPS = {"&&", "||", ";", "|", "&", ";;"}


class Checker:
    def __init__(self, hetbatch, work, allow_missing=()):
        self.h = hetbatch
        self.work = work
        self.allow_missing = set(os.path.abspath(p) for p in allow_missing)
        self.help = {}
        self.catalog = {}
        self.produced = {}     # absolute path -> stage that writes it
        self.rehearsed = {}    # plan --out path -> the rehearsal's plan file
        self.errors, self.notes = [], []
        self.ncommands = 0
        self.nfiles = 0
        self.nrehearsed = 0

    # ---- hetbatch's own words ----------------------------------------------

    def run(self, args):
        p = subprocess.run([self.h] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def help_of(self, sub):
        if sub not in self.help:
            rc, out, err = self.run(([sub] if sub else []) + ["--help"])
            self.help[sub] = out if rc == 0 else None
        return self.help[sub]

    def subcommands(self):
        text = self.help_of("") or ""
        subs, inside = set(), False
        for line in text.split("\n"):
            if line.startswith("Subcommands:"):
                inside = True
            elif inside and line.startswith("  ") and line.split():
                subs.add(line.split()[0])
            elif inside and line.strip() and not line.startswith(" "):
                inside = False
        return subs

    @staticmethod
    def options_in(text):
        """{option: takes a value} from a help text: `--db FILE`, `[--iters N]`,
        `--sync auto|ows|sws` take one; `--no-cupti` does not."""
        opts = {}
        for m in re.finditer(r"(?<![\w-])(--?[A-Za-z][\w-]*)(?:( |=)(\S+))?", text):
            name, value = m.group(1), m.group(3) or ""
            value = value.strip("[](),.;")
            takes = bool(m.group(2)) and bool(re.match(r"^[A-Z][A-Z0-9_]*(\.json)?$|^\S+\|\S+$", value))
            opts[name] = opts.get(name, False) or takes
        return opts

    def in_catalog(self, kind, name):
        key = (kind, name)
        if key not in self.catalog:
            rc, _, err = self.run(["catalog", kind, name])
            self.catalog[key] = (rc == 0, err.strip().split("\n")[-1] if err.strip() else "")
        return self.catalog[key]

    # ---- files ----------------------------------------------------------------

    def need_file(self, where, opt, path):
        a = os.path.abspath(path)
        self.nfiles += 1
        if os.path.exists(a):
            return True
        if a in self.produced:
            return True
        if a in self.allow_missing:
            self.notes.append("%s: %s %s: missing, allowed (--allow-missing)" % (where, opt, path))
            return False
        self.error("%s: %s %s: no such file, and no earlier stage writes it" % (where, opt, path))
        return False

    def will_write(self, where, opt, path, stage):
        a = os.path.abspath(path)
        parent = os.path.dirname(a)
        if not os.path.isdir(parent) and parent not in self.produced:
            self.error("%s: %s %s: folder %s does not exist" % (where, opt, path, parent))
        self.produced[a] = stage

    def error(self, msg):
        self.errors.append(msg)

    # ---- commands -------------------------------------------------------------

    def check(self, stage, argv):
        if not argv:
            self.error("stage %s: an empty command" % stage)
            return
        self.ncommands += 1
        prog = os.path.basename(argv[0])
        if argv[0] == self.h or prog == "hetbatch":
            self.check_hetbatch(stage, argv)
        elif prog in ("sh", "bash") and len(argv) >= 3 and argv[1] == "-c":
            self.check_shell(stage, argv[0], argv[2])
        elif prog.startswith("python3"):
            self.check_python(stage, argv)
        else:
            where = "stage %s" % stage
            found = shutil.which(argv[0]) is not None
            self.notes.append("%s: %s: not checked (an external program%s)"
                              % (where, argv[0], "" if found else ", absent here"))

    def check_shell(self, stage, shell, script):
        p = subprocess.run([shell, "-n", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if p.returncode != 0:
            self.error("stage %s: %s -c: does not parse: %s" % (stage, shell, p.stderr.strip()))
            return
        try:
            lex = shlex.shlex(script, posix=True, punctuation_chars=";&|")
            lex.whitespace_split = True
            toks = list(lex)
        except ValueError as e:
            self.error("stage %s: %s -c: cannot split into commands: %s" % (stage, shell, e))
            return
        cmd = []
        for t in toks + [";"]:
            if t in OPS:
                if cmd:
                    self.check(stage, cmd)
                cmd = []
            else:
                cmd.append(t)

    def check_python(self, stage, argv):
        where = "stage %s: %s" % (stage, " ".join(argv[:2]))
        if len(argv) >= 3 and argv[1] == "-c":
            try:
                compile(argv[2], "<%s: python3 -c>" % stage, "exec")
            except SyntaxError as e:
                self.error("%s: the -c program does not compile: %s (line %s)" % (where, e.msg, e.lineno))
        elif len(argv) >= 2 and argv[1] == "-":
            self.error("%s: a program on stdin cannot be checked: write it to a file first" % where)
        elif len(argv) >= 2:
            if self.need_file("stage %s" % stage, "python3", argv[1]) and os.path.exists(argv[1]):
                try:
                    py_compile.compile(argv[1], cfile=os.path.join(self.work, "pycheck.pyc"), doraise=True)
                except py_compile.PyCompileError as e:
                    self.error("%s: does not compile: %s" % (where, e.msg.strip().split("\n")[-1]))

    def check_hetbatch(self, stage, argv):
        top = self.options_in(self.help_of("") or "")
        subs = self.subcommands()
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            opt = argv[i].split("=")[0]
            if opt not in top:
                self.error("stage %s: hetbatch: global option %s is not in 'hetbatch --help'" % (stage, opt))
            elif top[opt] and "=" not in argv[i]:
                i += 1
            i += 1
        if i >= len(argv):
            self.error("stage %s: hetbatch: no subcommand" % stage)
            return
        sub = argv[i]
        where = "stage %s: hetbatch %s" % (stage, sub)
        if sub not in subs:
            self.error("%s: no such subcommand (hetbatch --help lists %s)" % (where, ", ".join(sorted(subs))))
            return
        text = self.help_of(sub) or ""
        known = self.options_in(text)
        args = argv[i + 1:]
        given = []   # (option, value or None)
        k = 0
        while k < len(args):
            a = args[k]
            if a.startswith("-") and len(a) > 1 and not a[1].isdigit():
                opt, eq, val = a.partition("=")
                if opt not in known:
                    self.error("%s: option %s is not in 'hetbatch %s --help'" % (where, opt, sub))
                    k += 1
                    continue
                if known[opt] and not eq:
                    if k + 1 >= len(args) or (args[k + 1].startswith("--")):
                        self.error("%s: option %s needs a value" % (where, opt))
                        k += 1
                        continue
                    val = args[k + 1]
                    k += 1
                given.append((opt, val if known[opt] else None))
            k += 1
        for opt, val in given:
            self.check_value(stage, where, sub, text, opt, val, dict(given))
        if sub == "plan":
            self.rehearse_plan(stage, where, argv[:i], args, given)

    def check_value(self, stage, where, sub, text, opt, val, opts):
        if val is None:
            return
        if opt in ("--model", "--models"):
            for name in val.split(","):
                if name.endswith(".json") or "/" in name:
                    self.need_file(where, opt, name)
                    continue
                ok, why = self.in_catalog("models", name)
                if not ok:
                    self.error("%s: %s %s: not a catalog model (%s)" % (where, opt, name, why))
        elif opt == "--cluster":
            if val.endswith(".json") or "/" in val:
                if self.need_file(where, opt, val) and os.path.exists(val):
                    ok, why = self.in_catalog("clusters", val)
                    if not ok:
                        self.error("%s: %s %s: the catalog does not load it: %s" % (where, opt, val, why))
            else:
                ok, why = self.in_catalog("clusters", val)
                if not ok:
                    self.error("%s: %s %s: not a catalog cluster (%s)" % (where, opt, val, why))
        elif opt in INPUTS.get(sub, ()):
            self.need_file(where, opt, val)
        if opt in OUTPUTS.get(sub, ()):
            self.will_write(where, opt, val, stage)
        if opt in ENUMS and not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(val), text):
            self.error("%s: %s %s: not a value 'hetbatch %s --help' names" % (where, opt, val, sub))
        if opt == "--plan" and sub == "live":
            self.check_live_method(where, val, opts)

    def rehearse_plan(self, stage, where, pre, args, given):
        """Run the plan on the built-in analytic profiles: its options are
        then checked by the planner itself, not only by name."""
        out = None
        cmd, k = [], 0
        while k < len(args):
            a = args[k]
            if a in ("--db", "--out"):
                if a == "--out" and k + 1 < len(args):
                    out = args[k + 1]
                k += 2
                continue
            cmd.append(a)
            k += 1
        os.makedirs(self.work, exist_ok=True)
        plan = os.path.join(self.work, "rehearsal-%s.json" % stage)
        rc, _, err = self.run(["-q", "plan"] + cmd + ["--out", plan])
        if rc != 0:
            self.error("%s: the rehearsal on the analytic profiles failed (exit %d): %s"
                       % (where, rc, err.strip().split("\n")[-1] if err.strip() else "no message"))
            return
        self.nrehearsed += 1
        if out:
            self.rehearsed[os.path.abspath(out)] = plan

    def check_live_method(self, where, plan, opts):
        method = opts.get("--method") or "iidp"
        reh = self.rehearsed.get(os.path.abspath(plan))
        if not reh:
            return
        with open(reh) as f:
            doc = json.load(f)
        if method == "iidp":
            ok = bool(doc.get("iidp", {}).get("found"))
        else:
            row = doc.get("baselines_on_requested_gpus", {}).get(method)
            ok = bool(row) and row.get("found", True) is not False
        if not ok:
            self.error("%s: --method %s: the rehearsed plan (%s) has no %s row" % (where, method, reh, method))

    def check_all(self, records):
        for stage, argv in records:
            self.check(stage, argv)
        return not self.errors


def read_records(path):
    with open(path, "rb") as f:
        fields = f.read().split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    recs, k = [], 0
    while k < len(fields):
        if k + 1 >= len(fields):
            raise ValueError("%s: record %d is cut short" % (path, len(recs) + 1))
        stage = fields[k].decode()
        try:
            n = int(fields[k + 1])
        except ValueError:
            raise ValueError("%s: record %d (%s): argument count %r is not a number"
                             % (path, len(recs) + 1, stage, fields[k + 1]))
        argv = [x.decode() for x in fields[k + 2:k + 2 + n]]
        if len(argv) != n:
            raise ValueError("%s: record %d (%s): %d arguments announced, %d found"
                             % (path, len(recs) + 1, stage, n, len(argv)))
        recs.append((stage, argv))
        k += 2 + n
    return recs


def check_records(hetbatch, records, work, allow_missing=(), out=sys.stdout):
    c = Checker(hetbatch, work, allow_missing)
    ok = c.check_all(records)
    for n in c.notes:
        out.write("note: %s\n" % n)
    for e in c.errors:
        out.write("dry run: %s\n" % e)
    out.write("dry run: %d commands in %d stages, %d files named, %d plans rehearsed: %s\n"
              % (c.ncommands, len(records), c.nfiles, c.nrehearsed,
                 "all good" if ok else "%d problems" % len(c.errors)))
    return ok, c


def self_test(hetbatch):
    """Broken command lists must each be caught, with the words that say why."""
    import io
    fails = []
    with tempfile.TemporaryDirectory() as d:
        cluster = os.path.join(d, "one.json")
        with open(cluster, "w") as f:
            json.dump({"name": "one", "display": "self-test", "storage_bw": 1e9, "restart_latency_s": 2,
                       "source": "dry_check.py self-test",
                       "groups": [{"name": "node0", "gpu": "h100-80gb", "nodes": 1, "gpus_per_node": 1,
                                   "intra_link": "nvlink4", "intra_bw": 450e9, "inter_link": "ib-400g",
                                   "inter_bw": 50e9}]}, f)
        db, plan = os.path.join(d, "cuda.db"), os.path.join(d, "plan.json")
        prof = ("cuda", [hetbatch, "-v", "profile", "--backend", "cuda", "--models", "resnet50",
                         "--local-bs", "32", "--warmup", "3", "--iters", "10", "--db", db])
        plan_cmd = [hetbatch, "-q", "plan", "--cluster", cluster, "--model", "resnet50", "--gbs", "64",
                    "--gpus", "node0:1", "--local-bs", "32", "--db", db, "--out", plan]
        live_cmd = [hetbatch, "live", "--plan", plan, "--method", "ddp", "--backend", "cuda", "--db", db]
        good = [prof, ("plan", plan_cmd), ("live", live_cmd),
                ("sh", ["sh", "-c", "nvidia-smi -L && python3 -c 'print(1)'"])]
        cases = [
            ("good", good, None),
            ("unknown subcommand", [("x", [hetbatch, "profil", "--backend", "cuda"])], "no such subcommand"),
            ("unknown option", [("x", prof[1][:-4] + ["--itres", "10"])], "option --itres is not in"),
            ("unknown global option", [("x", [hetbatch, "--verbos", "version"])], "global option --verbos"),
            ("missing value", [("x", prof[1][:-1])], "option --db needs a value"),
            ("unknown model", [("x", [hetbatch, "profile", "--backend", "cuda", "--models", "resnet50,resnet5"])],
             "resnet5: not a catalog model"),
            ("bad backend", [("x", [hetbatch, "profile", "--backend", "cudaa"])], "--backend cudaa: not a value"),
            ("db nobody writes", [("plan", plan_cmd)], "--db %s: no such file" % db),
            ("plan file nobody writes", [prof, ("live", live_cmd)], "--plan %s: no such file" % plan),
            ("output folder missing", [("x", prof[1][:-1] + [os.path.join(d, "nowhere", "x.db")])],
             "does not exist"),
            ("cluster file missing", [prof, ("plan", [a.replace(cluster, cluster + ".gone") for a in plan_cmd])],
             "one.json.gone: no such file"),
            ("plan the planner refuses", [prof, ("plan", [a if a != "node0:1" else "node7:1" for a in plan_cmd])],
             "rehearsal on the analytic profiles failed"),
            ("python syntax", [("x", ["sh", "-c", "python3 -c 'import os; print(os.getcwd()'"])],
             "does not compile"),
            ("shell syntax", [("x", ["sh", "-c", "nvidia-smi && && true"])], "does not parse"),
            ("hetbatch inside sh -c", [("x", ["sh", "-c", "'%s' -q plan --cluster '%s' --modle resnet50"
                                              % (hetbatch, cluster)])], "option --modle is not in"),
            ("stdin program", [("x", ["python3", "-", d])], "cannot be checked"),
        ]
        for name, recs, want in cases:
            buf = io.StringIO()
            ok, _ = check_records(hetbatch, recs, os.path.join(d, "work"), out=buf)
            text = buf.getvalue()
            if want is None and not ok:
                fails.append("%s: reported problems:\n%s" % (name, text))
            elif want is not None and (ok or want not in text):
                fails.append("%s: want a failure saying %r, got:\n%s" % (name, want, text))
        # the record format: a count that does not match is an error, not a guess
        bad = os.path.join(d, "bad.cmds")
        with open(bad, "wb") as f:
            f.write(b"cuda\0" + b"3\0" + b"hetbatch\0profile\0")
        try:
            read_records(bad)
            fails.append("a record cut short was read")
        except ValueError:
            pass
    for f in fails:
        print("self-test: " + f)
    if not fails:
        print("self-test: %d command lists, %d broken ones caught with their reason" % (len(cases), len(cases) - 1))
    return 1 if fails else 0


def main(argv):
    h = cmds = work = None
    allow, selftest = [], False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--hetbatch", "--cmds", "--work", "--allow-missing") and i + 1 < len(argv):
            v = argv[i + 1]
            if a == "--hetbatch":
                h = v
            elif a == "--cmds":
                cmds = v
            elif a == "--work":
                work = v
            else:
                allow.append(v)
            i += 2
            continue
        if a == "--self-test":
            selftest = True
        elif a in ("-h", "--help"):
            print(__doc__.split("usage:")[1].strip())
            return 0
        else:
            print("dry_check.py: unknown argument %s (see --help)" % a, file=sys.stderr)
            return 2
        i += 1
    if not h or not os.access(h, os.X_OK):
        print("dry_check.py: --hetbatch PATH: %s is not an executable" % h, file=sys.stderr)
        return 2
    if selftest:
        return self_test(h)
    if not cmds or not work:
        print("dry_check.py: --cmds FILE and --work DIR are required (see --help)", file=sys.stderr)
        return 2
    try:
        recs = read_records(cmds)
    except (OSError, ValueError) as e:
        print("dry_check.py: %s" % e, file=sys.stderr)
        return 2
    ok, _ = check_records(h, recs, work, allow)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
