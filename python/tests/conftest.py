"""Shared fixtures of the package's tests: the source tree (for docs/ and
the CLI binary, when the tests run from a checkout) and small result sets
made once per session."""
import os
import shutil

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the repository, when run from a checkout

# A trace replay that runs in about a second (sweep-demo.json's trace).
SYNTH = {"rate": 12, "hours": 0.5}


def source_file(*parts):
    p = os.path.join(ROOT, *parts)
    if not os.path.exists(p):
        pytest.skip("needs the source tree (%s)" % os.path.join(*parts))
    return p


@pytest.fixture(scope="session")
def cli_binary():
    """The hetbatch executable: $HETBATCH, else build/cli/hetbatch of the checkout."""
    for p in (os.environ.get("HETBATCH"), os.path.join(ROOT, "build", "cli", "hetbatch"), shutil.which("hetbatch")):
        if p and os.access(p, os.X_OK):
            return p
    pytest.skip("no hetbatch executable ($HETBATCH or build/cli/hetbatch)")


@pytest.fixture(scope="session")
def job_set(tmp_path_factory):
    import hetbatch
    out = tmp_path_factory.mktemp("job") / "out"
    df = hetbatch.sim("jabas-a", model="resnet50", policies="jabas,static", out=out)
    return out, df


@pytest.fixture(scope="session")
def trace_set(tmp_path_factory):
    import hetbatch
    out = tmp_path_factory.mktemp("trace") / "out"
    df = hetbatch.sim("demo", synthetic="poisson", synth=SYNTH, policies="fifo,tiresias", out=out)
    return out, df
