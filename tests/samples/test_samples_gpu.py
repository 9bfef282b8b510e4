"""Each sample's small size, run natively through CuPy, matches its reference (GPU only)."""
from __future__ import annotations

import pytest

from sample_support import sample_names

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", sample_names())
def test_small_size_matches_reference_on_gpu(name):
    from gpu_run import run

    result = run(name, "small", check=True)
    assert result["ok"], result["error"]
