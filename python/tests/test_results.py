"""read_results: the frames' schemas against docs/outputs.md, and a set
written by the CLI read as one written by the package."""
import os
import re
import subprocess

import pandas as pd
import pytest

import hetbatch
from conftest import source_file

ADDED = {"policy", "model"}  # from `runs`, as the CSVs have them


def doc_columns(table):
    """The names in backquotes of docs/outputs.md's section on results.db
    table TABLE (sim)."""
    text = open(source_file("docs", "outputs.md")).read()
    m = re.search(r"^### sim results.db table `%s`\n(.*?)^#" % re.escape(table), text, re.S | re.M)
    assert m, "docs/outputs.md has no section on table %s" % table
    return set(re.findall(r"`([a-z_][a-z0-9_]*)`", m.group(1)))


def frame_columns(df, doc):
    """df's columns as the docs name them: the package's t_s is the table's t."""
    return {"t" if c == "t_s" and "t_s" not in doc else c for c in df.columns}


@pytest.mark.parametrize("table", ["jobs", "events", "timeseries", "summary", "runs"])
def test_job_schema(job_set, table):
    r = hetbatch.read_results(job_set[0])
    df = r.tables[table]
    assert len(df) > 0
    doc = doc_columns(table)
    undocumented = frame_columns(df, doc) - doc - ADDED
    assert not undocumented, "columns of %s not in docs/outputs.md: %s" % (table, undocumented)


@pytest.mark.parametrize("table", ["jobs", "events", "cluster_summary", "cluster_jobs", "utilisation"])
def test_trace_schema(trace_set, table):
    r = hetbatch.read_results(trace_set[0])
    df = r.tables[table]
    assert len(df) > 0
    doc = doc_columns(table)
    undocumented = frame_columns(df, doc) - doc - ADDED
    assert not undocumented, "columns of %s not in docs/outputs.md: %s" % (table, undocumented)


def test_events_and_jobs_columns(job_set):
    r = hetbatch.read_results(job_set[0])
    assert list(r.events.columns) == ["run_id", "policy", "model", "seq", "t_s", "job", "kind", "detail"]
    assert list(r.jobs.columns[:6]) == ["run_id", "policy", "job", "name", "model", "arrival_s"]
    for col in ("policy", "model", "kind"):
        assert isinstance(r.events[col].dtype, pd.CategoricalDtype), col
    assert r.events["t_s"].dtype == float and (r.events["t_s"] >= 0).all()
    assert r.jobs["time_s"].notna().all() and (r.jobs["done"] == 1).all()
    assert r.meta["format"] == "hetbatch-sim-results/1"


def test_units_in_names(job_set, trace_set):
    """Every float column is a unit-named measure or a documented unitless one."""
    unitless = {"iterations", "mean_gbs", "mean_gpus", "samples", "progress", "target", "phi", "similarity",
                "progress_frac", "time_rel", "cost_rel", "util", "util_mean", "restarts_per_job",
                "preemptions_per_job", "rho", "rho_median", "rho_p99", "rho_max", "javg",
                "sched_ms_per_round", "gpu_hours"}
    for out in (job_set[0], trace_set[0]):
        for name, df in hetbatch.read_results(out).tables.items():
            for c in df.columns:
                if df[c].dtype == float:
                    assert re.search(r"_(s|h|usd|bytes|frac|hours)$", c) or c in unitless, (name, c)


def test_cli_set_reads_the_same(cli_binary, job_set, tmp_path):
    out = tmp_path / "cli"
    subprocess.run([cli_binary, "-q", "sim", "--cluster", "jabas-a", "--model", "resnet50",
                    "--policy", "jabas,static", "--out", str(out)], check=True)
    cli = hetbatch.read_results(out)
    py = hetbatch.read_results(job_set[0])
    assert set(cli.tables) == set(py.tables)
    pd.testing.assert_frame_equal(cli.summary, py.summary)
    pd.testing.assert_frame_equal(cli.jobs, py.jobs)
    assert len(cli.events) == len(py.events)


def test_csv_only_set(job_set, tmp_path):
    """A set without results.db (CSVs alone) still loads."""
    import shutil
    d = tmp_path / "csv"
    shutil.copytree(job_set[0], d)
    os.remove(d / "results.db")
    r = hetbatch.read_results(d)
    assert "summary" in r.tables and len(r.summary) == 2
    if os.path.exists(d / "events.csv"):  # written only with --csv once results are compact
        assert "t_s" in r.events.columns
