"""_frames: hetbatch's outputs as pandas DataFrames.

A result set (`--out DIR` of sim and sweep, docs/outputs.md) is read from
its results.db, the store every set has whatever CSVs --csv/--events chose
to write beside it; a folder with CSVs and no results.db (an older or
copied set) is read from the CSVs.  Columns keep the names of
docs/outputs.md, which carry their units (`time_s`, `cost_usd`,
`gpu_hours`), except a bare `t` (simulated seconds), which becomes `t_s`.
Columns that hold names (model, policy, kind, ...) are categorical.
"""
import json
import os
import sqlite3

import pandas as pd

# Columns whose values are names, made categorical wherever they appear.
NAME_COLUMNS = {
    "cluster", "model", "policy", "name", "kind", "status", "gpu", "ref_policy", "source", "file",
    "trace", "label", "plan", "node", "task", "dataset", "family", "weight_sync", "regime",
}
# Columns renamed to say their unit.
UNIT_RENAMES = {"t": "t_s"}


def frame(rows_or_df):
    """A DataFrame with the units renames and categorical name columns."""
    df = rows_or_df if isinstance(rows_or_df, pd.DataFrame) else pd.DataFrame(rows_or_df)
    df = df.rename(columns={k: v for k, v in UNIT_RENAMES.items() if k in df.columns})
    for c in df.columns:
        if c in NAME_COLUMNS and not isinstance(df[c].dtype, pd.CategoricalDtype) and (
                pd.api.types.is_string_dtype(df[c].dtype) or df[c].dtype == object):
            df[c] = df[c].astype("category")
    return df


class Results:
    """A result set: one DataFrame per table (results.db's, or a CSV's).

    Attributes: dir (the folder), format (meta.format, e.g.
    "hetbatch-sim-results/1"), kind ("sim", "trace" or "sweep"), meta
    (results.db's meta as a dict), summary_json (summary.json's document or
    None), tables (name -> DataFrame), and one attribute per table: jobs,
    events, timeseries, summary, runs, ... (None where the set has none;
    `summary` is cluster_summary for a trace replay).
    """

    def __init__(self, dir, tables, meta, summary_json):
        self.dir = dir
        self.tables = tables
        self.meta = meta
        self.format = meta.get("format")
        self.summary_json = summary_json
        if self.format and "sweep" in self.format:
            self.kind = "sweep"
        elif meta.get("mode") == "trace" or "cluster_summary" in tables:
            self.kind = "trace"
        else:
            self.kind = "sim"

    def __getattr__(self, name):
        tables = self.__dict__.get("tables", {})
        if name == "summary" and "cluster_summary" in tables:
            return tables["cluster_summary"]
        if name in tables:
            return tables[name]
        if name.startswith("_"):
            raise AttributeError(name)
        return None

    def __repr__(self):
        return "<hetbatch.Results %s %s: %s>" % (self.kind, self.dir, ", ".join(
            "%s (%d rows)" % (k, len(v)) for k, v in self.tables.items()))


def _read_db(path):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        # Tables and views: events is a view over the compact `event` rows
        # (with its kind's name from `event_kind`, its detail rebuilt from
        # `event_tpl` and `event_num`), which are read through
        # it rather than twice.
        names = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
            "AND name NOT IN ('event', 'event_kind', 'event_tpl', 'event_num') ORDER BY rowid")]
        tables = {}
        meta = {}
        for n in names:
            if n == "meta":
                meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
                continue
            tables[n] = frame(pd.read_sql_query('SELECT * FROM "%s"' % n.replace('"', '""'), con))
        _add_run_names(tables)
        return tables, meta
    finally:
        con.close()


def _add_run_names(tables):
    """Give the per-run tables their run's policy and model (from `runs`),
    as the CSVs have them, so a frame can be grouped by policy alone."""
    runs = tables.get("runs")
    if runs is None or "run_id" not in runs.columns:
        return
    names = runs[[c for c in ("run_id", "policy", "model") if c in runs.columns]]
    for n, df in list(tables.items()):
        if n == "runs" or "run_id" not in df.columns:
            continue
        add = [c for c in ("policy", "model") if c in names.columns and c not in df.columns]
        if add:
            merged = df.merge(names[["run_id"] + add], on="run_id", how="left")
            pos = list(df.columns).index("run_id") + 1
            cols = list(df.columns[:pos]) + add + list(df.columns[pos:])
            tables[n] = frame(merged[cols])


def _read_csvs(dir):
    tables = {}
    for f in sorted(os.listdir(dir)):
        if f.endswith(".csv"):
            tables[f[:-4]] = frame(pd.read_csv(os.path.join(dir, f)))
    return tables
