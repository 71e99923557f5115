#!/usr/bin/env python3
"""A stand-in for `python3 torch_worker.py` (tests/torch/check_profile_torch.py):
answers --check like the worker on an H100, and for a run writes each
point's result JSON and, as its trace, a copy of the hand-made fixture
named by $FAKE_KTRACE (tests/fixtures/ktrace/), so the C side of
`profile --backend torch` runs end to end without torch or a GPU."""
import json
import os
import shutil
import sys

args = sys.argv[1:]
if "--check" in args:
    print(json.dumps({"torch": "2.11.0-fake", "cuda": "13.0", "host": "fakehost",
                      "device": "NVIDIA H100 80GB HBM3", "driver": "580.0"}))
    sys.exit(0)
opt = {args[i]: args[i + 1] for i in range(0, len(args) - 1, 2)}
assert os.environ.get("CUDA_INJECTION64_PATH"), "no CUDA_INJECTION64_PATH"
assert os.environ.get("HETBATCH_TRACE_OUT"), "no HETBATCH_TRACE_OUT"
for item in opt["--points"].split(","):
    b, n = (int(x) for x in item.split("x"))
    base = os.path.join(opt["--out-dir"], "%s-b%d-v%d" % (opt["--model"], b, n))
    oom = n == int(os.environ.get("FAKE_OOM_VSW", "0"))
    res = {"model": opt["--model"], "local_bs": b, "n_vsw": n, "status": "oom" if oom else "ok",
           "peak_mem_bytes": 1048576 * b}
    if not oom:
        shutil.copy(os.environ["FAKE_KTRACE"], base + ".ktrace")
    with open(base + ".json", "w") as f:
        json.dump(res, f)
sys.exit(0)
