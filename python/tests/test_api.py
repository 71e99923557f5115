"""Every call of the package: catalog, plan, sim (one job, a trace),
sweep, read_results, command, version; errors raise with hetbatch's message."""
import os
import threading

import pandas as pd
import pytest

import hetbatch
from conftest import SYNTH, source_file


def test_version():
    assert hetbatch.__version__.count(".") == 2


@pytest.mark.parametrize("kind,first", [("gpus", "v100"), ("models", None), ("clusters", "jabas-a")])
def test_catalog_lists(kind, first):
    df = hetbatch.catalog(kind)
    assert len(df) > 3
    assert isinstance(df["name"].dtype, pd.CategoricalDtype)
    if first:
        assert first in list(df["name"])
    if kind == "clusters":
        a = df[df["name"] == "jabas-a"].iloc[0]
        assert a["nodes"] == 4 and a["gpus"] == 16


def test_catalog_one_entry():
    df = hetbatch.catalog("gpus", "Tesla V100-PCIE-16GB")
    assert list(df["name"]) == ["v100"]
    assert df["fp32_tflops"].iloc[0] == pytest.approx(14.13)


def test_catalog_errors():
    with pytest.raises(hetbatch.InputError) as e:
        hetbatch.catalog("gpus", "no-such-gpu")
    assert "no-such-gpu" in str(e.value)
    with pytest.raises(hetbatch.InputError, match="gpuz"):
        hetbatch.catalog("gpuz")  # a misspelled kind


def test_plan():
    df = hetbatch.plan("jabas-a", "resnet50", 1024)
    assert list(df["plan"]) == ["IIDP", "DDP", "OptPerf", "LB-BSP"]
    iidp = df.iloc[0]
    assert iidp["found"] and iidp["global_batch"] == 1024 and iidp["local_batch"] == 32
    assert iidp["iter_s"] == pytest.approx(0.27589866975544275, rel=1e-12)
    assert (df["throughput_samples_s"] > 0).all() and (df["usd_per_h"] > 0).all()
    assert df.attrs["plan"]["format"] == "hetbatch-plan/1"


def test_plan_options_and_errors():
    df = hetbatch.plan("jabas-a", "resnet50", 512, gpus="v100")
    assert df.attrs["plan"]["request"]["gpus"][0]["gpu"] == "v100"
    with pytest.raises(hetbatch.InputError, match="no-such-model"):
        hetbatch.plan("jabas-a", "no-such-model", 1024)
    with pytest.raises(hetbatch.InputError, match="--gbs"):
        hetbatch.plan("jabas-a", "resnet50", 0)
    with pytest.raises(hetbatch.InputError, match="--bogus"):
        hetbatch.plan("jabas-a", "resnet50", 1024, opts=["--bogus"])


def test_sim_job(job_set):
    out, df = job_set
    assert list(df["policy"]) == ["jabas", "static"]
    assert (df["status"] == "ok").all()
    assert (df["time_h"] > 0).all() and (df["cost_usd"] > 0).all() and (df["gpu_hours"] > 0).all()
    assert df["time_rel"].iloc[0] == pytest.approx(1.0)
    assert os.path.exists(os.path.join(out, "results.db"))
    assert df.attrs["results"].kind == "sim"


def test_sim_job_temporary_out():
    df = hetbatch.sim("demo", model="resnet50", policies=["static"])
    assert len(df) == 1 and df["status"].iloc[0] == "ok"
    assert not os.path.exists(df.attrs["results"].dir)  # the temporary set is gone


def test_sim_seed_changes_trace():
    a = hetbatch.sim("demo", synthetic="poisson", synth=SYNTH, policies="fifo", seed=1)
    b = hetbatch.sim("demo", synthetic="poisson", synth=SYNTH, policies="fifo", seed=2)
    c = hetbatch.sim("demo", synthetic="poisson", synth=SYNTH, policies="fifo", seed=1)
    assert a["jct_mean_h"].iloc[0] == c["jct_mean_h"].iloc[0]
    assert a["jct_mean_h"].iloc[0] != b["jct_mean_h"].iloc[0]


def test_sim_trace(trace_set):
    out, df = trace_set
    assert list(df["policy"]) == ["fifo", "tiresias"]
    assert (df["jobs"] > 0).all() and (df["jct_mean_h"] > 0).all() and (df["makespan_h"] > 0).all()
    r = df.attrs["results"]
    assert r.kind == "trace" and r.meta["mode"] == "trace"
    assert len(r.tables["cluster_jobs"]) == 2 * df["jobs"].iloc[0]


def test_sim_trace_file(tmp_path):
    trace = source_file("tests", "fixtures", "traces", "philly_good.csv")
    df = hetbatch.sim("philly", trace=trace, policies="fifo", out=tmp_path / "p")
    assert df["jobs"].iloc[0] > 0


def test_sim_errors(tmp_path):
    with pytest.raises(hetbatch.InputError) as e:
        hetbatch.sim("jabas-a", model="resnet50", policies="no-such-policy", out=tmp_path / "x")
    assert "unknown policy 'no-such-policy'" in str(e.value)
    assert e.value.code == 2
    assert not os.path.exists(tmp_path / "x")  # bad input leaves no result set
    with pytest.raises(hetbatch.InputError, match="no-such-cluster"):
        hetbatch.sim("no-such-cluster", model="resnet50")
    with pytest.raises(hetbatch.InputError, match="model="):
        hetbatch.sim("jabas-a")
    with pytest.raises(hetbatch.InputError, match="nope.csv"):
        hetbatch.sim("demo", trace=tmp_path / "nope.csv")


def test_sweep(tmp_path):
    cfg = source_file("examples", "sweep-demo.json")
    r = hetbatch.sweep(cfg, tmp_path / "sw")
    assert r.kind == "sweep" and r.format == "hetbatch-sweep-results/1"
    assert len(r.points) == 8  # 2 clusters x 2 policies x 2 seeds
    assert len(r.summary) > 0


def test_sweep_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "clusters": 3}')
    with pytest.raises(hetbatch.InputError, match="bad.json"):
        hetbatch.sweep(bad, tmp_path / "o")


def test_read_results_errors(tmp_path):
    with pytest.raises(hetbatch.InputError, match="not a hetbatch result set"):
        hetbatch.read_results(tmp_path)
    (tmp_path / "results.db").write_text("not sqlite")
    with pytest.raises(hetbatch.Error):
        hetbatch.read_results(tmp_path)


def test_command():
    text = hetbatch.command("catalog", "clusters")
    assert "jabas-a" in text
    with pytest.raises(hetbatch.InputError, match="unknown subcommand"):
        hetbatch.command("frobnicate")


def test_threads_take_turns():
    """Calls from several threads (the GIL released) each get their own
    output and the right answer."""
    got = {}

    def work(i):
        got[i] = hetbatch.plan("jabas-a", "resnet50", 256 * (i + 1))["global_batch"].iloc[0]

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert got == {i: 256 * (i + 1) for i in range(4)}


def test_plot(job_set, trace_set, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    r = hetbatch.read_results(trace_set[0])
    assert hetbatch.plot.jct_cdf(r).get_lines()
    assert hetbatch.plot.gpus_over_time(r).get_lines()
    assert len(hetbatch.plot.save(r, tmp_path)) == 3
    series = hetbatch.plot.gpus_series(job_set[0])
    t, n = series["jabas"]
    assert n.max() <= 16 and n.max() > 0


def test_gpus_series_integrates_to_gpu_hours(trace_set, tmp_path):
    """The step function of GPUs held is exact: its integral is every job's
    GPU-hours and it never exceeds the cluster (demo: 4 GPUs)."""
    import numpy as np
    r = hetbatch.read_results(trace_set[0])
    series = hetbatch.plot.gpus_series(r)
    assert set(series) == {"fifo", "tiresias"}
    for pol, (t, n) in series.items():
        gh = r.jobs[r.jobs["policy"] == pol]["gpu_hours"].sum()
        assert np.sum(n[:-1] * np.diff(t)) / 3600 == pytest.approx(gh, rel=1e-9)
        assert n.max() == 4 and n.min() == 0 and n[-1] == 0
    # --events summary writes no samples: the binned utilisation stands in
    df = hetbatch.sim("demo", synthetic="poisson", synth=SYNTH, policies="fifo", events="summary",
                      out=tmp_path / "s")
    t, n = hetbatch.plot.gpus_series(df.attrs["results"])["fifo"]
    assert len(t) > 10 and 0 < n.max() <= 4
