#!/usr/bin/env python3
"""check_docs.py: every table, column, CSV column, JSON key and event kind
the code writes, every field the catalog parser accepts and every table and
column of the profile database is named in the documentation (issue 17 item
8): docs/outputs.md, docs/catalog.md, docs/profiles.md.

What the code writes is taken from the code twice over:
  - by running it: `sim --out` (single job and trace replay), `sweep --out`,
    `profile --analytic` (a fresh and the default database) and `catalog
    --json`, then reading the SQLite schemas (sqlite3 module), CSV headers
    and JSON keys of what they wrote;
  - from the sources, for what a small run may not write: the meta keys
    (db_meta calls), the event kinds (hb_sim_note calls), the JSON keys the
    writers add (cJSON_Add*ToObject, hb_json_add_*, knob names, the keys
    of the policies' knob tables), the catalog parser's key lists
    (models/catalog*.c).
A name is documented when it appears in backquotes (`name`) in the section
of the page that covers it: the section is found by its heading (see
SECTIONS use below), so a column documented under another table does not
count.

--self-test: after the real check passes, runs it again on copies of the
pages with one name removed from each, and fails unless every removal is
reported (the check cannot pass vacuously).

Environment (tests/meson.build): HETBATCH, HB_SOURCE_ROOT.
"""
import csv
import glob
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import shutil

ROOT = os.environ.get("HB_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXE = os.environ.get("HETBATCH", os.path.join(ROOT, "build", "cli", "hetbatch"))


# ---- the pages ----------------------------------------------------------------------------------

class Page:
    """A markdown page split into sections by heading."""

    def __init__(self, name, text):
        self.name = name
        self.sections = []  # (level, heading, body)
        lines = text.split("\n")
        heads = [(i, len(m.group(1)), m.group(2)) for i, line in enumerate(lines)
                 for m in [re.match(r"^(#+)\s+(.*)$", line)] if m]
        in_fence = False
        fenced = set()
        for i, line in enumerate(lines):
            if line.startswith("```"):
                in_fence = not in_fence
            if in_fence:
                fenced.add(i)
        heads = [h for h in heads if h[0] not in fenced]
        # code blocks are examples, not documentation (and their ``` fences
        # would pair with the backquotes of the text)
        lines = ["" if i in fenced or line.startswith("```") else line for i, line in enumerate(lines)]
        for k, (i, level, title) in enumerate(heads):
            end = len(lines)
            for j, lv, _ in heads[k + 1:]:
                if lv <= level:
                    end = j
                    break
            self.sections.append((level, title, "\n".join(lines[i + 1:end])))
        self.all = "\n".join(lines)

    def section(self, *needles):
        for level, title, body in self.sections:
            if all(n in title for n in needles):
                return title, body
        return None, None


def ticked(text):
    """The names in backquotes; a backquoted list ("`a`, `b`") gives each."""
    return set(" ".join(t.split()) for t in re.findall(r"`([^`]+)`", text))


class Checker:
    def __init__(self, pages):
        self.pages = pages
        self.missing = []

    def need(self, page, needles, names, what):
        """Every name in names appears in backquotes in page's section whose
        heading holds all needles."""
        title, body = self.pages[page].section(*needles)
        if title is None:
            self.missing.append("%s: no section headed with %s (for %s)" % (page, " + ".join(needles), what))
            return
        have = ticked(body)
        for n in sorted(set(names)):
            if n not in have:
                self.missing.append("%s, section '%s': %s `%s` is not documented" % (page, title, what, n))

    def need_anywhere(self, page, names, what):
        have = ticked(self.pages[page].all)
        for n in sorted(set(names)):
            if n not in have:
                self.missing.append("%s: %s `%s` is not documented" % (page, what, n))


# ---- what the code writes -----------------------------------------------------------------------

def run(args, cwd, env=None):
    p = subprocess.run([EXE, "-q"] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=env, timeout=900)
    if p.returncode != 0:
        raise SystemExit("check_docs: hetbatch %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr[-2000:]))
    return p.stdout


def db_schema(path):
    """{table: [columns]} and user_version."""
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        # views too: `events` is a view over the integer-coded `event` (issue 43)
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                                            "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        schema = {t: [r[1] for r in con.execute("PRAGMA table_info(\"%s\")" % t)] for t in tables}
        version = con.execute("PRAGMA user_version").fetchone()[0]
        meta = [r[0] for r in con.execute("SELECT key FROM meta")] if "meta" in schema else []
        kinds = [r[0] for r in con.execute("SELECT DISTINCT kind FROM events")] if "events" in schema else []
    finally:
        con.close()
    return schema, version, meta, kinds


def csv_header(path):
    with open(path, newline="") as f:
        return next(csv.reader(f))


def json_keys(x, skip=()):
    """Every key of every object in x (recursively), but below the keys in skip."""
    out = set()
    if isinstance(x, dict):
        for k, v in x.items():
            out.add(k)
            if k not in skip:
                out |= json_keys(v, skip)
    elif isinstance(x, list):
        for v in x:
            out |= json_keys(v, skip)
    return out


def source(*rel):
    text = ""
    for r in rel:
        for p in sorted(glob.glob(os.path.join(ROOT, r))):
            text += open(p).read() + "\n"
    return text


def static_meta_keys(text):
    return set(re.findall(r'db_meta\(\s*[^,]+,\s*[^,]+,\s*"([a-z_0-9]+)"', text))


def static_json_keys(text):
    keys = set(re.findall(r'(?:cJSON_Add\w*ToObject|hb_json_add_\w+|hb_jw_\w+)\(\s*[^,()]+,\s*"([A-Za-z_0-9]+)"',
                          text))
    keys |= set(re.findall(r'\bknob\(\s*[^,]+,\s*[^,]+,\s*"([a-z_0-9]+)"', text))
    return keys


def policy_knob_keys(field):
    """The knobs of the policies' knob tables (sim/policies/NAME/*.c,
    sim/policy_knob.h): their results keys (field "key", rows of knobs_json
    and summary.json) or their sweep keys (field "sweep")."""
    return set(re.findall(r'\.%s\s*=\s*"([a-z_0-9]+)"' % field, source("sim/policies/*/*.c")))


def static_event_kinds():
    text = source("sim/*.c", "sim/policies/*.c", "sim/policies/*/*.c", "sim/results/*.c", "traces/*.c")
    kinds = set()
    for m in re.finditer(r'hb_sim_note\w*\(\s*[^,]+,\s*[^,]+,\s*([^;]*?)(?:,\s*"[^"]*%|,\s*"[^"]*"\s*[,)])', text):
        kinds |= set(re.findall(r'"([a-z_]+)"', m.group(1)))
    kinds |= set(re.findall(r'\bkind\s*=\s*"([a-z_]+)"', source("sim/sim.c")))
    return kinds


def catalog_key_lists():
    """{what: keys} from the parser's key lists."""
    gpu = source("models/catalog_gpu.c")
    model = source("models/catalog_model.c")
    cluster = source("models/catalog_cluster.c")
    top = source("models/catalog.c")

    def arr(text, name):
        m = re.search(r"\b%s\[\]\s*=\s*\{(.*?)\};" % re.escape(name), text, re.S)
        if not m:
            raise SystemExit("check_docs: key list %s[] not found in models/: update check_docs.py" % name)
        return set(re.findall(r'"([a-z_0-9]+)"', m.group(1)))

    out = {
        "gpu": arr(gpu, "base_keys") | arr(gpu, "variant_keys"),
        "model": arr(model, "model_keys"),
        "overrides": set(re.findall(r'"([a-z_0-9]+)"', re.search(
            r"parse_overrides.*?keys\[\]\s*=\s*\{(.*?)\};", model, re.S).group(1))),
        "cluster": arr(cluster, "cluster_keys"),
        "groups": arr(cluster, "group_keys"),
        "file": set(re.findall(r'"([a-z_0-9]+)"', re.search(r"keys\[\]\s*=\s*\{([^}]*\"gpus\"[^}]*)\};",
                                                             top, re.S).group(1))),
    }
    arch = set(["class", "source", "comment"])
    block = re.search(r"arch_classes\[\]\s*=\s*\{(.*?)\n\};", model, re.S)
    if not block:
        raise SystemExit("check_docs: arch_classes[] not found in models/catalog_model.c: update check_docs.py")
    for m in re.finditer(r'\{\s*"([a-z]+)",\s*\{(.*?)\}', block.group(1), re.S):
        arch |= set(re.findall(r'"([a-z_0-9]+)"', m.group(2)))
    out["arch"] = arch
    return out


def gather(tmp):
    """Everything the code writes, by where the docs must name it."""
    env = dict(os.environ)
    env["HETBATCH_CACHE"] = os.path.join(tmp, "cache")
    env["HETBATCH_DATA"] = os.path.join(tmp, "data")
    env.pop("XDG_CACHE_HOME", None)
    env.pop("XDG_DATA_HOME", None)
    g = {}
    run(["sim", "--cluster", "demo", "--model", "resnet50", "--out", "single"], tmp, env)
    run(["sim", "--cluster", "pollux-t4", "--trace", os.path.join(ROOT, "tests", "trace_replay", "small.csv"),
         "--out", "trace"], tmp, env)
    run(["sweep", os.path.join(ROOT, "examples", "sweep-demo.json"), "--out", "sweep"], tmp, env)
    g["files"] = set()
    for d in ("single", "trace", "sweep"):
        g["files"] |= set(os.listdir(os.path.join(tmp, d)))
    for mode in ("single", "trace"):
        schema, _, meta, kinds = db_schema(os.path.join(tmp, mode, "results.db"))
        g.setdefault("sim_tables", {}).update(schema)
        g.setdefault("sim_meta", set()).update(meta)
        g.setdefault("kinds", set()).update(kinds)
        for p in glob.glob(os.path.join(tmp, mode, "*.csv")):
            g.setdefault("sim_csv", {})[os.path.basename(p)] = csv_header(p)
        g.setdefault("sim_json", set()).update(json_keys(json.load(open(os.path.join(tmp, mode, "summary.json")))))
    schema, _, meta, _ = db_schema(os.path.join(tmp, "sweep", "results.db"))
    g["sweep_tables"], g["sweep_meta"] = schema, set(meta)
    g["sweep_csv"] = {os.path.basename(p): csv_header(p) for p in glob.glob(os.path.join(tmp, "sweep", "*.csv"))}
    doc = json.load(open(os.path.join(tmp, "sweep", "summary.json")))
    g["sweep_json"] = json_keys(doc, skip=("config",))
    g["sweep_config"] = json_keys(doc.get("config", {}))
    # from the sources
    g["sim_meta"] |= static_meta_keys(source("sim/results/*.c"))
    g["sweep_meta"] |= static_meta_keys(source("sim/study/*.c"))
    g["sim_json"] |= static_json_keys(source("sim/results/results_json.c", "sim/results/results.c"))
    g["sim_json"] |= policy_knob_keys("key")
    g["sweep_config"] |= policy_knob_keys("sweep")
    g["sweep_json"] |= static_json_keys(source("sim/study/sweep_write.c"))
    g["kinds"] |= static_event_kinds()
    # profile databases: a fresh one and the default (analytic) one
    run(["profile", "--analytic", "--gpus", "v100", "--models", "resnet50", "--db", "p.db"], tmp, env)
    schema, version, _, _ = db_schema(os.path.join(tmp, "p.db"))
    run(["profile", "--analytic", "--default-db"], tmp, env)
    for p in glob.glob(os.path.join(tmp, "cache", "**", "*.db"), recursive=True):
        s, _, _, _ = db_schema(p)
        for t, cols in s.items():
            schema.setdefault(t, cols)
    g["prof_tables"], g["prof_version"] = schema, version
    # the catalog: the parser's lists and what `catalog --json` writes
    cat = catalog_key_lists()
    gpus = json.loads(run(["catalog", "gpus", "--json"], tmp, env))
    models = json.loads(run(["catalog", "models", "--json"], tmp, env))
    clusters = json.loads(run(["catalog", "clusters", "--json"], tmp, env))
    for o in gpus["gpus"]:
        cat["gpu"] |= set(o)
    for o in models["models"]:
        cat["model"] |= set(k for k in o)
        for ov in o.get("overrides", []):
            cat["overrides"] |= set(ov)
        if "arch" in o:
            cat["arch"] |= set(o["arch"])
    for o in clusters["clusters"]:
        cat["cluster"] |= set(o)
        for gr in o.get("groups", []):
            cat["groups"] |= set(gr)
    g["catalog"] = cat
    return g


# ---- the check ----------------------------------------------------------------------------------

def check(g, pages):
    c = Checker(pages)
    out = "outputs.md"
    for t, cols in sorted(g["sim_tables"].items()):
        c.need(out, ("sim results.db table", "`%s`" % t), cols, "sim results.db column of %s" % t)
    c.need(out, ("sim results.db table", "`meta`"), g["sim_meta"], "sim meta key")
    for name, cols in sorted(g["sim_csv"].items()):
        c.need(out, ("sim", "`%s`" % name), cols, "%s column" % name)
    c.need(out, ("sim", "`summary.json`"), g["sim_json"], "sim summary.json key")
    c.need(out, ("Event kinds",), g["kinds"], "event kind")
    for t, cols in sorted(g["sweep_tables"].items()):
        c.need(out, ("sweep results.db table", "`%s`" % t), cols, "sweep results.db column of %s" % t)
    c.need(out, ("sweep results.db table", "`meta`"), g["sweep_meta"], "sweep meta key")
    for name, cols in sorted(g["sweep_csv"].items()):
        c.need(out, ("sweep", "`%s`" % name), cols, "%s column" % name)
    c.need(out, ("sweep", "`summary.json`"), g["sweep_json"], "sweep summary.json key")
    c.need_anywhere("sweep.md", g["sweep_config"], "sweep configuration key (summary.json config)")
    for f in sorted(g["files"]):
        if f not in pages[out].all:
            c.missing.append("%s: the file %s that sim or sweep --out writes is not named" % (out, f))
    prof = "profiles.md"
    for t, cols in sorted(g["prof_tables"].items()):
        c.need(prof, ("table", "`%s`" % t), cols, "profile database column of %s" % t)
    if "schema version %d" % g["prof_version"] not in pages[prof].all:
        c.missing.append("%s: does not say 'schema version %d' (PRAGMA user_version of a new database)" %
                         (prof, g["prof_version"]))
    cat = "catalog.md"
    heads = {"gpu": ("GPU fields",), "model": ("model fields",), "overrides": ("`overrides`",),
             "arch": ("`arch`",), "cluster": ("cluster fields",), "groups": ("`groups`",),
             "file": ("catalog files",)}
    for what, keys in sorted(g["catalog"].items()):
        c.need(cat, heads[what], keys, "%s field" % what)
    return c.missing


def load_pages():
    pages = {}
    for name in ("outputs.md", "catalog.md", "profiles.md", "sweep.md"):
        path = os.path.join(ROOT, "docs", name)
        pages[name] = Page(name, open(path).read() if os.path.exists(path) else "")
    return pages


def self_test(g, pages):
    """Remove one documented name from each page; each removal must be caught."""
    cases = [("outputs.md", "rho_p99"), ("outputs.md", "autoscale"), ("outputs.md", "point_rows"),
             ("outputs.md", "config_json"), ("profiles.md", "fwd_s"), ("catalog.md", "mem_bw"),
             ("catalog.md", "gpus_per_node"), ("catalog.md", "ffn_ratio")]
    bad = 0
    for page, name in cases:
        mutated = dict(pages)
        mutated[page] = Page(page, pages[page].all.replace("`%s`" % name, name))
        missing = check(g, mutated)
        if not any("`%s`" % name in m for m in missing):
            print("SELF-TEST FAIL: removing `%s` from %s was not noticed" % (name, page))
            bad += 1
    return bad


def main():
    tmp = tempfile.mkdtemp(prefix="hb-docs-")
    try:
        g = gather(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pages = load_pages()
    missing = check(g, pages)
    for m in missing:
        print("UNDOCUMENTED: " + m)
    counts = (sum(len(v) for v in g["sim_tables"].values()) + sum(len(v) for v in g["sweep_tables"].values()),
              sum(len(v) for v in g["sim_csv"].values()) + sum(len(v) for v in g["sweep_csv"].values()),
              len(g["sim_json"]) + len(g["sweep_json"]), len(g["kinds"]),
              sum(len(v) for v in g["prof_tables"].values()), sum(len(v) for v in g["catalog"].values()))
    print("checked %d result columns, %d CSV columns, %d JSON keys, %d event kinds, %d profile columns, "
          "%d catalog fields" % counts)
    if missing:
        print("%d name(s) undocumented: add them to docs/ (see the section named)" % len(missing))
        return 1
    if "--self-test" in sys.argv[1:]:
        bad = self_test(g, pages)
        if bad:
            return 1
        print("self-test: every removed name was reported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
