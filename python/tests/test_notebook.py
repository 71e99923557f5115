"""examples/notebooks/compare-policies.ipynb runs headless (nbclient), every
cell without error, and its two figures are drawn: PNGs with lines in
them, not blank canvases."""
import base64
import io
import time

import pytest

from conftest import source_file


def test_compare_policies_notebook():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    import matplotlib.image as mpimg
    import numpy as np

    path = source_file("examples", "notebooks", "compare-policies.ipynb")
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    # CellExecutionError names the failing cell and its traceback
    nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": source_file("examples", "notebooks")}}).execute()
    print("compare-policies.ipynb executed in %.1f s" % (time.perf_counter() - t0))
    pngs, errors = [], []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors.append(out)
            png = out.get("data", {}).get("image/png")
            if png:
                pngs.append(mpimg.imread(io.BytesIO(base64.b64decode(png)), format="png"))
    assert not errors
    assert len(pngs) == 2  # the JCT CDF and GPUs over time
    for img in pngs:
        rgb = img[..., :3].reshape(-1, 3)
        ink = np.any(rgb < 0.9, axis=1).mean()  # pixels that are not (near) white
        colours = len(np.unique((rgb * 255).astype(np.uint8), axis=0))
        assert img.shape[0] > 200 and img.shape[1] > 300
        assert ink > 0.02 and colours > 20, (ink, colours)
