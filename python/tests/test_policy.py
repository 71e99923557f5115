"""Policies written in Python (hetbatch.Policy, register_policy): the
example LAS gives the C plugin's results byte for byte in the same replay,
errors in a policy stop the run with a message and a cause, registration
is checked as a plugin file is, and threaded sweeps run it."""
import importlib.util
import json
import os
import re
import shutil
import subprocess

import pytest

import hetbatch
from hetbatch import _capi
from conftest import ROOT, source_file


def shared_file(*parts):
    p = os.path.join(os.path.dirname(ROOT), "shared", *parts)
    if not os.path.exists(p):
        pytest.skip("needs ../shared (%s)" % os.path.join(*parts))
    return p


def load_example():
    path = source_file("examples", "python", "las.py")
    spec = importlib.util.spec_from_file_location("las_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def las():
    mod = load_example()
    hetbatch.register_policy(mod.LAS)
    yield mod
    hetbatch.unregister_policy("las-py")


@pytest.fixture(scope="session")
def c_las(tmp_path_factory):
    """examples/policy-plugin/las.c built as a plugin, as its README says."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build the C las plugin")
    src = source_file("examples", "policy-plugin", "las.c")
    so = str(tmp_path_factory.mktemp("plugin") / "las.so")
    subprocess.run([cc, "-std=c11", "-O2", "-shared", "-fPIC", "-I", source_file("include"), "-o", so, src],
                   check=True)
    return so


WORKLOAD = ("data", "pollux", "workloads", "workload-1.csv")


def rows(res, table, policy):
    df = getattr(res, table)
    df = df[df["policy"] == policy].drop(columns=["policy", "run_id"], errors="ignore")
    return df.to_csv(index=False)


# ---- the header and the declarations -----------------------------------------

def struct_fields(text, name):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    m = re.search(r"struct %s \{(.*?)\n\};" % name, text, re.S)
    assert m, name
    return [re.sub(r"\s+", " ", f).strip() for f in m.group(1).split(";") if f.strip()]


@pytest.mark.parametrize("name", ["hb_arbiter_ops", "hb_plugin_policy", "hb_plugin", "hb_policy_api"])
def test_policy_cdef_matches_header(name):
    header = open(source_file("include", "hetbatch", "policy.h")).read()
    assert struct_fields(header, name) == struct_fields(_capi.POLICY_CDEF, name)


def test_api_version_matches_header():
    header = open(source_file("include", "hetbatch", "policy.h")).read()
    v = int(re.search(r"#define HB_POLICY_API_VERSION (\d+)", header).group(1))
    assert hetbatch.policy.API_VERSION == v
    pk = hetbatch.policy
    for name, value in (("HB_PKNOB_FLAG", pk._FLAG), ("HB_PKNOB_DOUBLE", pk._DOUBLE), ("HB_PKNOB_INT", pk._INT)):
        assert int(re.search(r"\b%s = (\d+)" % name, header).group(1)) == value, name
    assert int(re.search(r"#define HB_PKNOB_SHARED_ONLY (\d+)u", header).group(1)) == pk._SHARED_ONLY


# ---- the same rule in C and in Python ------------------------------------------

def test_python_las_equals_c_las(las, c_las):
    """One replay runs both; with 64 T4 the workload contends, so LAS
    preempts (the comparison means something)."""
    df = hetbatch.sim("pollux-t4", trace=shared_file(*WORKLOAD), policies="las,las-py",
                      opts=["--policy-plugin", c_las])
    res = df.attrs["results"]
    assert list(df["policy"]) == ["las", "las-py"]
    assert (df["preemptions_per_job"] > 1).all() and (df["completed"] == 160).all()
    for table in ("jobs", "events", "timeseries", "cluster_jobs"):
        c, py = rows(res, table, "las"), rows(res, table, "las-py")
        assert c.count("\n") > 100, table
        assert c == py, table
    summ = df.drop(columns=["policy", "run_id"]).to_csv(index=False).splitlines()
    assert summ[1] == summ[2]
    plugins = res.meta["policy_plugins"].splitlines()
    assert c_las in plugins and "python:las_example.LAS" in plugins


def test_sweep_on_threads(las, tmp_path):
    conf = json.load(open(source_file("examples", "sweep-demo.json")))
    conf["policies"] = ["fifo", "las-py"]
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(conf))
    one = hetbatch.sweep(path, tmp_path / "one")
    three = hetbatch.sweep(path, tmp_path / "three", opts=["-j", "3"])
    assert "las-py" in set(one.points["policy"])
    assert one.points.to_csv(index=False) == three.points.to_csv(index=False)
    assert one.jobs.to_csv(index=False) == three.jobs.to_csv(index=False)


def test_every_callback_and_sim_call(tmp_path):
    """A policy that uses every Sim and Job call and notes what it saw."""
    seen = {}

    class Probe(hetbatch.Policy):
        name = "probe-py"
        round_s = 600.0

        def __init__(self, sim):
            seen["init"] = (sim.nnodes, sim.cluster_gpus, list(sim.node_gpus), len(sim.jobs))
            self.queue = []

        def on_arrival(self, sim, job):
            assert job.state == hetbatch.policy.PENDING and job.held == 0 and job.progress == 0
            assert sim.job(job.id) is job and sim.now >= job.arrival_s
            self.queue.append(job)
            self.on_finish(sim, None)

        def on_finish(self, sim, job):
            if job is not None:
                seen["finished"] = seen.get("finished", 0) + 1
                assert job.state == hetbatch.policy.DONE and job.progress == 1
            while self.queue:
                grant = sim.place(self.queue[0].gpus)
                if grant is None:
                    break
                assert sum(grant) == self.queue[0].gpus and len(grant) == sim.nnodes
                assert all(g <= sim.node_free(i) for i, g in enumerate(grant))
                j = self.queue.pop(0)
                sim.start(j, grant)
                sim.note(j, "probe", "started on %s" % grant)

        def on_round(self, sim):
            seen["rounds"] = seen.get("rounds", 0) + 1
            seen["online"] = sim.online_gpus
            for j in sim.jobs:
                if j.holds:
                    assert j.attained_gpu_s >= 0 and j.held == j.gpus

    hetbatch.register_policy(Probe)
    try:
        df = hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5}, policies="probe-py,fifo",
                          out=tmp_path / "out")
    finally:
        hetbatch.unregister_policy("probe-py")
    res = df.attrs["results"]
    n = int(df["jobs"].iloc[0])
    assert seen["init"][0] == 2 and seen["init"][1] == 4 and seen["init"][3] == n
    assert seen["finished"] == n and seen["rounds"] > 0 and seen["online"] == 4
    ev = res.events
    probe = ev[(ev["policy"] == "probe-py") & (ev["kind"] == "probe")]
    assert len(probe) == n and probe["detail"].str.startswith("started on [").all()
    # probe-py is FIFO with gang placement, so it equals the built-in fifo
    assert rows(res, "jobs", "probe-py") == rows(res, "jobs", "fifo")


# ---- errors --------------------------------------------------------------------

def test_exception_stops_the_run_with_its_cause(las):
    class Faulty(las.LAS):
        name = "faulty-py"

        def on_round(self, sim):
            if sim.now > 3000:
                raise ZeroDivisionError("the policy's own bug")

    hetbatch.register_policy(Faulty)
    try:
        with pytest.raises(hetbatch.Error) as e:
            hetbatch.sim("pollux-t4", trace=shared_file(*WORKLOAD), policies="faulty-py")
    finally:
        hetbatch.unregister_policy("faulty-py")
    assert "faulty-py: on_round: ZeroDivisionError: the policy's own bug" in str(e.value)
    assert isinstance(e.value.__cause__, ZeroDivisionError)


def test_engine_refusal_keeps_the_engine_message():
    class Twice(hetbatch.Policy):
        name = "twice-py"

        def on_arrival(self, sim, job):
            grant = sim.place(job.gpus)
            sim.start(job, grant)
            sim.start(job, grant)

    hetbatch.register_policy(Twice)
    try:
        with pytest.raises(hetbatch.Error, match="started twice"):
            hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5}, policies="twice-py")
        with pytest.raises(hetbatch.Error, match="one entry per node"):
            class Short(Twice):
                name = "short-py"

                def on_arrival(self, sim, job):
                    sim.start(job, [1])
            hetbatch.register_policy(Short)
            hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5}, policies="short-py")
    finally:
        hetbatch.unregister_policy("twice-py")
        if "short-py" in hetbatch.policy._registered:
            hetbatch.unregister_policy("short-py")


def test_bad_round_s_fails_the_run():
    class BadRound(hetbatch.Policy):
        name = "bad-round-py"
        round_s = "often"

        def on_arrival(self, sim, job):
            pass

    hetbatch.register_policy(BadRound)
    try:
        with pytest.raises(hetbatch.Error, match="bad-round-py: __init__: ValueError: round_s must be"):
            hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5}, policies="bad-round-py")
    finally:
        hetbatch.unregister_policy("bad-round-py")


def test_no_call_from_inside_a_callback():
    class Reentrant(hetbatch.Policy):
        name = "reentrant-py"

        def on_arrival(self, sim, job):
            hetbatch.catalog("gpus")

    hetbatch.register_policy(Reentrant)
    try:
        with pytest.raises(hetbatch.Error, match="from inside a running call") as e:
            hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5}, policies="reentrant-py")
    finally:
        hetbatch.unregister_policy("reentrant-py")
    assert isinstance(e.value.__cause__, hetbatch.InputError)


def test_registration_checks():
    class Clash(hetbatch.Policy):
        name = "fifo"

        def on_arrival(self, sim, job):
            pass

    with pytest.raises(hetbatch.InputError, match="'fifo' is already defined"):
        hetbatch.register_policy(Clash)

    class BadAgent(Clash):
        name = "bad-agent-py"
        agent = "no-such-agent"

    with pytest.raises(hetbatch.InputError, match="agent_of 'no-such-agent'"):
        hetbatch.register_policy(BadAgent)

    class BadName(Clash):
        name = "Has Space"

    with pytest.raises(hetbatch.InputError, match="lower-case"):
        hetbatch.register_policy(BadName)

    class NoArrival(hetbatch.Policy):
        name = "no-arrival-py"

    with pytest.raises(hetbatch.InputError, match="on_arrival"):
        hetbatch.register_policy(NoArrival)
    with pytest.raises(hetbatch.InputError, match="subclass"):
        hetbatch.register_policy(object)
    with pytest.raises(hetbatch.InputError, match="no Python policy"):
        hetbatch.unregister_policy("never-registered")


def test_register_again_replaces(las):
    hetbatch.register_policy(las.LAS)  # a notebook cell run twice
    df = hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5}, policies="las-py")
    assert list(df["policy"]) == ["las-py"]

    class Temp(las.LAS):
        name = "temp-py"

    hetbatch.register_policy(Temp)
    hetbatch.unregister_policy("temp-py")
    with pytest.raises(hetbatch.InputError, match="unknown policy 'temp-py'"):
        hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5}, policies="temp-py")


def test_options_are_sim_options(las, c_las):
    """las-py's Knob is `sim --las-py-round`: the same round as the C
    plugin's --las-round gives the same jobs; bad values are refused as a
    built-in option's are; results record it among the knobs."""
    df = hetbatch.sim("pollux-t4", trace=shared_file(*WORKLOAD), policies="las,las-py",
                      opts=["--policy-plugin", c_las, "--las-round", "900", "--las-py-round", "900"])
    res = df.attrs["results"]
    assert rows(res, "jobs", "las") == rows(res, "jobs", "las-py")
    default = hetbatch.sim("pollux-t4", trace=shared_file(*WORKLOAD), policies="las-py")
    assert df["sched_rounds"].iloc[1] < default["sched_rounds"].iloc[0]
    knobs = json.loads(res.meta["knobs_json"])
    assert knobs["las_py_round_s"] == 900 and knobs["las_round_s"] == 900
    with pytest.raises(hetbatch.InputError, match="las-py-round"):
        hetbatch.sim("pollux-t4", trace=shared_file(*WORKLOAD), policies="las-py", opts=["--las-py-round", "0"])
    with pytest.raises(hetbatch.InputError, match="las-py-round"):
        hetbatch.sim("pollux-t4", model="resnet50", policies="fifo", opts=["--las-py-round", "60"])


def test_knob_checks():
    with pytest.raises(ValueError, match="min <= default <= max"):
        hetbatch.Knob(5.0, "x", min=10, max=20)
    with pytest.raises(TypeError):
        hetbatch.Knob("five", "x")

    class BadOpt(hetbatch.Policy):
        name = "bad-opt-py"
        options = {"round": 300}

        def on_arrival(self, sim, job):
            pass

    with pytest.raises(hetbatch.InputError, match="not a hetbatch.Knob"):
        hetbatch.register_policy(BadOpt)

    class Clash(BadOpt):
        name = "clash-opt-py"
        options = {"load": hetbatch.Knob(1.0, "clashes with sim --load", min=0, max=9)}

    with pytest.raises(hetbatch.InputError, match="load"):
        hetbatch.register_policy(Clash)
        hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5}, policies="clash-opt-py")
    if "clash-opt-py" in hetbatch.policy._registered:
        hetbatch.unregister_policy("clash-opt-py")


def test_capacity_callbacks(las, tmp_path):
    """on_revoke gets the GPUs needed per node, on_capacity runs when
    GPUs come back: a capacity series that takes every GPU of the demo
    cluster away for an hour, half an hour in, and returns them."""
    seen = {"revoke": [], "capacity": 0}

    class Elastic(las.LAS):
        name = "capacity-py"

        def on_revoke(self, sim, need):
            seen["revoke"].append(list(need))
            assert len(need) == sim.nnodes and all(n >= 0 for n in need)

        def on_capacity(self, sim):
            seen["capacity"] += 1

    cap = tmp_path / "cap.csv"
    cap.write_text("time_s,gpu,available\n1800,v100,0\n1800,t4,0\n5400,v100,2\n5400,t4,2\n")
    hetbatch.register_policy(Elastic)
    try:
        df = hetbatch.sim("demo", synthetic="poisson", synth={"rate": 12, "hours": 0.5}, policies="capacity-py",
                          opts=["--capacity", str(cap)])
    finally:
        hetbatch.unregister_policy("capacity-py")
    assert df["completed"].iloc[0] == df["jobs"].iloc[0]
    assert seen["capacity"] >= 1
    assert seen["revoke"] and all(sum(n) > 0 for n in seen["revoke"])
