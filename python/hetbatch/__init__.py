"""hetbatch: plan, simulate and cost DNN training on heterogeneous GPU
clusters, from Python.

The calls run hetbatch's own C library (the code of the `hetbatch`
command) in this process, with the GIL released:

    import hetbatch
    hetbatch.catalog("gpus")                              # DataFrame, one row per GPU type
    hetbatch.plan("jabas-a", "resnet50", 1024)            # IIDP, DDP, OptPerf, LB-BSP rows
    s = hetbatch.sim("jabas-a", model="resnet50", policies="jabas,pollux")
    t = hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5},
                     policies="fifo,tiresias", out="runs/t")
    r = hetbatch.read_results("runs/t")                   # r.jobs, r.events, r.timeseries, r.summary
    hetbatch.plot.jct_cdf(r)
    hetbatch.register_policy(MyPolicy)                    # a hetbatch.Policy subclass (policy.py)

Errors raise hetbatch.Error (hetbatch.InputError, also a ValueError, for
bad input) whose message is the one the command prints.  Every call takes
opts=[...], further options of the subcommand as on the command line
(`hetbatch sim --help`), and seed=N (the global --seed, default 1).
"""
import json
import os
import tempfile

from . import _capi
from ._capi import Error, InputError
from ._frames import Results, frame, _read_db, _read_csvs
from .policy import Policy, Knob, Sim, Job, EngineError, register_policy, unregister_policy

__version__ = _capi.version()
__all__ = ["catalog", "plan", "sim", "sweep", "read_results", "command", "plot", "Error", "InputError",
           "Policy", "Knob", "Sim", "Job", "EngineError", "register_policy", "unregister_policy",
           "Results", "__version__"]


def _opts(opts, **named):
    """The command-line words for named options (None: not given, True: a
    flag) followed by opts."""
    words = []
    for name, val in named.items():
        if val is None or val is False:
            continue
        words.append("--" + name.replace("_", "-"))
        if val is not True:
            words.append(str(val))
    return words + [str(o) for o in (opts or [])]


def _names(v):
    return v if v is None or isinstance(v, str) else ",".join(v)


def catalog(kind="gpus", name=None):
    """The built-in GPU types, models or cluster presets ("gpus", "models",
    "clusters") as a DataFrame, one row per entry (`catalog KIND --json`);
    with name (a name, alias or JSON file), that entry alone.  A cluster's
    row adds nodes and gpus, its totals over `groups`."""
    text, _ = _capi.call("hetbatch_catalog", kind, name)
    doc = json.loads(text)
    rows = doc[kind] if isinstance(doc, dict) and kind in doc else [doc]
    if kind == "clusters":
        for r in rows:
            groups = r.get("groups", [])
            r["nodes"] = sum(g.get("nodes", 1) for g in groups)
            r["gpus"] = sum(g.get("nodes", 1) * g.get("gpus_per_node", 0) for g in groups)
    return frame(rows)


_PLAN_ROWS = (("iidp", "IIDP"), ("ddp", "DDP"), ("optperf", "OptPerf"), ("lbbsp", "LB-BSP"))


def plan(cluster, model, gbs, opts=None, seed=None, **options):
    """Plan one job (`plan --cluster C --model M --gbs N --json`): one row
    per method (IIDP, DDP, OptPerf, LB-BSP) with found, global_batch,
    local_batch, iter_s, throughput_samples_s, usd_per_h.  The whole plan
    document (docs/plan-format.md) is in df.attrs["plan"].  options: any
    plan option by name (db="q.db", gpus="v100", local_bs=32, sync="ows")."""
    text, _ = _capi.call("hetbatch_plan", cluster, model, int(gbs), opts=_opts(opts, **options), seed=seed)
    doc = json.loads(text)
    base = doc.get("baselines_on_requested_gpus", {})
    rows = []
    for key, label in _PLAN_ROWS:
        p = doc.get("iidp") if key == "iidp" else base.get(key)
        if not isinstance(p, dict):
            continue
        usd_h = p.get("usd_per_hour", base.get("usd_per_hour"))
        tput = p.get("throughput")
        if tput is None and p.get("iter_s"):  # LB-BSP's document gives its time only
            tput = p["global_batch"] / p["iter_s"]
        rows.append({
            "plan": label,
            "found": bool(p.get("found")),
            "global_batch": p.get("global_batch"),
            "local_batch": p.get("local_batch"),
            "iter_s": p.get("iter_s"),
            "throughput_samples_s": tput,
            "usd_per_h": usd_h,
            "why": p.get("why") or p.get("reason"),
        })
    df = frame(rows)
    df.attrs["plan"] = doc
    return df


def sim(cluster, model=None, trace=None, synthetic=None, policies=None, out=None, synth=None, load=None,
        opts=None, seed=None, **options):
    """Simulate policies (`hetbatch sim`), and return the summary rows.

    One job on a dedicated cluster: model="resnet50" (or a list); the rows
    are results.db's `summary` (time_h, cost_usd, gpu_hours, ... per
    policy).  A trace on a shared cluster: trace=FILE, or synthetic="poisson"
    with synth={"rate": 30, "hours": 4}; the rows are `cluster_summary`
    (jct_mean_h, makespan_h, ... per policy).  policies: a list or
    comma-separated names (default: the command's).  out: the result-set
    folder to keep (default: a temporary one, removed); df.attrs["results"]
    is the whole set read back (hetbatch.Results).  options: any sim option
    by name (events="summary", elastic_drop=True, max_jobs=20)."""
    synth_words = []
    for k, v in (synth or {}).items():
        synth_words += ["--synth", "%s=%s" % (k, v)]
    words = _opts(synth_words + list(opts or []), synthetic=synthetic, load=load, **options)
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="hetbatch-sim-")
        out = os.path.join(tmp.name, "out")
    try:
        if trace is None and synthetic is None:
            if model is None:
                raise InputError("sim: give model= (one job) or trace=/synthetic= (a trace replay)", 2)
            _capi.call("hetbatch_sim_job", cluster, _names(model), _names(policies), os.fspath(out), opts=words,
                       seed=seed)
        else:
            if model is not None:
                words = ["--model", _names(model)] + words
            _capi.call("hetbatch_sim_trace", cluster, None if trace is None else os.fspath(trace),
                       _names(policies), os.fspath(out), opts=words, seed=seed)
        res = read_results(out)
    finally:
        if tmp is not None:
            tmp.cleanup()
    df = res.summary.copy()
    df.attrs["results"] = res
    return df


def sweep(config, out, opts=None, seed=None, **options):
    """Run a sweep (`hetbatch sweep CONFIG --out DIR`, docs/sweep.md) and
    return its result set (hetbatch.Results: points, summary, jobs)."""
    _capi.call("hetbatch_sweep", os.fspath(config), os.fspath(out), opts=_opts(opts, **options), seed=seed)
    return read_results(out)


def read_results(dir):
    """Load a result set written by `sim --out` or `sweep --out` (by the
    CLI or by this package) as hetbatch.Results: one DataFrame per table
    (jobs, events, timeseries, summary, runs, ...), units in the column
    names, categorical name columns.  Raises hetbatch.InputError when dir
    is not a result set."""
    dir = os.fspath(dir)
    sj = None
    sjp = os.path.join(dir, "summary.json")
    if os.path.exists(sjp):
        with open(sjp) as f:
            sj = json.load(f)
    if not os.path.exists(os.path.join(dir, "results.db")) and os.path.isdir(dir) and any(
            f.endswith(".csv") for f in os.listdir(dir)):
        return Results(dir, _read_csvs(dir), {"format": (sj or {}).get("format")}, sj)
    _capi.call("hetbatch_results", dir)  # the library's check, and its message
    tables, meta = _read_db(os.path.join(dir, "results.db"))
    return Results(dir, tables, meta, sj)


def command(*argv):
    """Any subcommand with its options, as on the command line:
    command("forecast", "trace.csv").  Returns what it printed."""
    text, _ = _capi.call("hetbatch_command", opts=[str(a) for a in argv])
    return text


from . import plot  # noqa: E402  (plot uses the names above)
