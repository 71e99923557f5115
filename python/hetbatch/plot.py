"""hetbatch.plot: the standard figures of a result set with matplotlib.

Each function takes a hetbatch.Results (or a result-set folder), draws
into ax (a new figure's when None) and returns ax:

    jct_cdf(r)          CDF of job completion times, one line per policy
                        (a trace replay's cluster_jobs.jct_s; one job's
                        jobs.time_s)
    gpus_over_time(r)   GPUs held over simulated time, one line per policy
                        (the sum of every job's ngpus in timeseries)
    utilisation(r)      a trace replay's binned utilisation (the utilisation table)
    save(r, dir)        all of them that the set has data for, as DIR/*.png
"""
import os

import numpy as np


def _results(r):
    from . import read_results
    return read_results(r) if isinstance(r, (str, os.PathLike)) else r


def _ax(ax):
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def _by_policy(df):
    if "policy" in df.columns:
        for pol, g in df.groupby("policy", observed=True, sort=False):
            yield str(pol), g
    else:
        yield "all", df


def jct_cdf(r, ax=None):
    r = _results(r)
    ax = _ax(ax)
    cj = r.tables.get("cluster_jobs")
    df, col = (cj, "jct_s") if cj is not None else (r.jobs, "time_s")
    if df is None:
        raise ValueError("%s: no jobs to draw a JCT CDF of" % r.dir)
    for pol, g in _by_policy(df):
        x = np.sort(g[col].dropna().to_numpy() / 3600.0)
        if len(x):
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=pol)
    ax.set_xlabel("job completion time (h)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title("JCT CDF")
    return ax


# Events after which a job holds no GPUs until its next time-series sample.
_RELEASES = {"preempt": 0, "revoke": 0, "done": 2, "drop": 2}


def gpus_series(r):
    """{policy: (t_s, gpus)}: GPUs held by all jobs, a step function that
    changes at each t_s.  A job holds the ngpus of its latest `timeseries`
    sample (one is written at every start, restart, resize and resume)
    until a preempt, revoke, done or drop event; at one instant a release
    comes before a sample, except a job's done, which comes after its last
    sample.  Its integral is the jobs' GPU-hours (jobs.gpu_hours).  A set
    written with --events summary has no samples: then the binned
    `utilisation` times summary.json's cluster_gpus."""
    import pandas as pd
    r = _results(r)
    ts, ev = r.timeseries, r.events
    out = {}
    if ts is not None and len(ts) and ev is not None:
        rel = ev[ev["kind"].astype(str).isin(list(_RELEASES)) & (ev["job"] >= 0)]
        for pol, g in _by_policy(ts):
            e = rel[rel["policy"] == pol] if "policy" in rel.columns else rel
            steps = pd.concat([
                pd.DataFrame({"t_s": g["t_s"].to_numpy(), "job": g["job"].to_numpy(), "order": 1,
                              "n": g["ngpus"].to_numpy(dtype=float)}),
                pd.DataFrame({"t_s": e["t_s"].to_numpy(), "job": e["job"].to_numpy(),
                              "order": e["kind"].astype(str).map(_RELEASES).to_numpy(), "n": 0.0}),
            ]).sort_values(["job", "t_s", "order"], kind="stable")
            steps["delta"] = steps["n"] - steps.groupby("job")["n"].shift(fill_value=0.0)
            total = steps.groupby("t_s")["delta"].sum().sort_index().cumsum()
            out[pol] = (total.index.to_numpy(), total.to_numpy())
        return out
    u = r.tables.get("utilisation")
    gpus = (r.summary_json or {}).get("cluster_gpus") if hasattr(r, "summary_json") else None
    if u is not None and len(u) and gpus:
        for pol, g in _by_policy(u):
            out[pol] = (g["t_s"].to_numpy(), g["util"].to_numpy() * gpus)
    return out


def gpus_over_time(r, ax=None):
    r = _results(r)
    ax = _ax(ax)
    series = gpus_series(r)
    if not series:
        raise ValueError("%s: no time series and no utilisation table to draw GPUs over time from" % r.dir)
    for pol, (t, n) in series.items():
        ax.step(t / 3600.0, n, where="post", label=pol)
    ax.set_xlabel("simulated time (h)")
    ax.set_ylabel("GPUs held")
    ax.legend()
    ax.set_title("GPUs over time")
    return ax


def utilisation(r, ax=None):
    r = _results(r)
    ax = _ax(ax)
    u = r.tables.get("utilisation")
    if u is None:
        raise ValueError("%s: no utilisation table (a trace replay's)" % r.dir)
    for pol, g in _by_policy(u):
        ax.step(g["t_s"] / 3600.0, g["util"], where="post", label=pol)
    ax.set_xlabel("simulated time (h)")
    ax.set_ylabel("fraction of GPUs held")
    ax.set_ylim(0, 1.05)
    ax.legend()
    ax.set_title("Utilisation")
    return ax


def save(r, dir, fmt="png"):
    """Every figure the set has data for, as DIR/NAME.FMT; the paths."""
    import matplotlib.pyplot as plt
    r = _results(r)
    os.makedirs(dir, exist_ok=True)
    paths = []
    for name, fn in (("jct-cdf", jct_cdf), ("gpus", gpus_over_time), ("utilisation", utilisation)):
        try:
            ax = fn(r)
        except ValueError:
            continue
        p = os.path.join(dir, "%s.%s" % (name, fmt))
        ax.figure.savefig(p, dpi=120, bbox_inches="tight")
        plt.close(ax.figure)
        paths.append(p)
    return paths
