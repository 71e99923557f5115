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


def gpus_series(r):
    """{policy: (t_s, gpus)}: GPUs held by all jobs at each sample time of
    each run, a job's count holding until its next sample."""
    r = _results(r)
    ts = r.timeseries
    out = {}
    if ts is None or len(ts) == 0:
        return out
    for pol, g in _by_policy(ts):
        wide = g.pivot_table(index="t_s", columns="job", values="ngpus", aggfunc="last").sort_index().ffill()
        out[pol] = (wide.index.to_numpy(), wide.fillna(0).sum(axis=1).to_numpy())
    return out


def gpus_over_time(r, ax=None):
    r = _results(r)
    ax = _ax(ax)
    series = gpus_series(r)
    if not series:
        raise ValueError("%s: no time series (written with --events summary?)" % r.dir)
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
