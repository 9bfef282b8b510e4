"""Notebooks and pandas: Report.to_dict / to_pandas / _repr_html_, gmprof.load giving Reports
back from a saved run (every count, packed or not), failed checks as gmprof.CheckWarning, and
backend=/device= meaning the same in every API function. Expected counts are derived by hand
in each test."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import gmprof
from gmprof.errors import Diagnostic, InputError, OptionError
from gmprof.report.document import document, dumps
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats

pd = pytest.importorskip("pandas")

SAXPY = """
__global__ void saxpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"""


def hand_report(n=4, kernel="k"):
    run = RunInfo(kernel, "cpu", "CPU backend", "default", (1, 1, 1), (32, 1, 1), 0)
    a = ArrayStats("a", "device", "int", (n,), 4, 4, np.arange(n, dtype=np.int64),
                   reads=n * (n - 1) // 2, writes=0)
    s = SiteStats(0, "k.cu:2:5", "a[i]", kernel, "a", "read", n * (n - 1) // 2, "measured")
    return Report(run, [a], [s])


@pytest.fixture(scope="module")
def saxpy_report():
    y, x = np.ones(100, np.float32), np.arange(100, dtype=np.float32)
    return gmprof.profile(SAXPY, "saxpy", grid=(1,), block=(128,),
                          args=[y, x, np.float32(2), np.int32(100)], device="cpu")


def test_to_pandas_per_array_site_line_and_counter(saxpy_report):
    frames = saxpy_report.to_pandas()
    arrays = frames["arrays"].set_index("name")
    # 128 threads, 100 pass i < n: y read and written once each (200), x read once (100)
    assert arrays.loc["y", "accesses"] == 200 and arrays.loc["y", "reads"] == 100
    assert arrays.loc["x", "accesses"] == 100 and arrays.loc["x", "label"] == "exact"
    sites = frames["sites"]
    assert sorted(sites["executions"]) == [100, 100, 100]
    lines = frames["lines"]
    assert lines["line"].tolist() == [4]  # every access is on the `if (i < n)` line
    assert int(lines["reads"].iloc[0]) == 200 and int(lines["writes"].iloc[0]) == 100
    counts = saxpy_report.to_pandas("counts")
    y = counts[counts["array"] == "y"]
    assert y["count"].tolist() == [2] * 100 and y["counter"].tolist() == list(range(100))


def test_to_pandas_refuses_an_unknown_kind(saxpy_report):
    with pytest.raises(OptionError, match="kind='site'"):
        saxpy_report.to_pandas("site")


def test_to_dict_and_repr_html():
    r = hand_report()
    d = r.to_dict()
    assert d["kernel"] == "k" and d["arrays"][0]["counts"] == [0, 1, 2, 3]
    html = r._repr_html_()
    # 0 + 1 + 2 + 3 = 6 accesses
    assert html.startswith("<div class='gmprof-report'>") and "<td>6</td>" in html
    assert "<td>a</td>" in html and "exact" in html


@pytest.mark.parametrize("n", [4, 70_000])  # a list, and packed above 65,536 counters
def test_load_gives_the_report_back_with_every_count(tmp_path, n):
    r = hand_report(n)
    path = tmp_path / "run.json"
    path.write_text(dumps(document([r])))
    back = gmprof.load(path)
    assert isinstance(back, Report)
    assert (back.array("a").counts == np.arange(n)).all()
    assert back.array("a").accesses == n * (n - 1) // 2  # the sum 0 + 1 + ... + n-1
    assert back.to_dict() == r.to_dict()
    assert str(back) == str(r)


def test_load_several_kernels_and_choose_one(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(dumps(document([hand_report(kernel="k1"), hand_report(kernel="k2")])))
    both = gmprof.load(path)
    assert [r.run.kernel for r in both] == ["k1", "k2"]
    assert gmprof.load(path, kernel="k2").run.kernel == "k2"
    with pytest.raises(InputError, match="no kernel named 'k3'"):
        gmprof.load(path, kernel="k3")


def test_load_a_run_saved_without_large_counts(tmp_path):
    # runs saved before every count was kept have null counts above 65,536 counters
    r = hand_report(70_000)
    path = tmp_path / "old.json"
    path.write_text(dumps(document([r], include_counts=False)))
    back = gmprof.load(path)
    assert back.array("a").summary()["accesses"] == 70_000 * 69_999 // 2
    assert any("were not saved" in n for n in back.notes)


def test_failed_checks_are_python_warnings():
    code = "__global__ void over(int *a) { a[threadIdx.x + 4] = 1; }"
    a = np.zeros(4, np.int32)
    with pytest.warns(gmprof.CheckWarning, match="out of range"):
        gmprof.profile(code, "over", grid=(1,), block=(4,), args=[a], device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", gmprof.CheckWarning)
        with pytest.raises(gmprof.CheckWarning) as caught:
            gmprof.RawKernel(code, "over", device="cpu")((1,), (4,), (a,))
    assert isinstance(caught.value.diagnostic, Diagnostic)


def test_backend_means_the_same_in_every_api_function():
    y = np.ones(4, np.float32)
    args = [y, np.ones(4, np.float32), np.float32(1), np.int32(4)]
    for kw in ({"backend": "cpu"}, {"device": "cpu"}, {"backend": "nvrtc", "device": "cpu"}):
        assert gmprof.profile(SAXPY, "saxpy", 1, 4, list(args), **kw).run.backend == "cpu"
        assert gmprof.RawKernel(SAXPY, "saxpy", **kw).device == "cpu"
        assert gmprof.RawModule(code=SAXPY, **kw).device == "cpu"
    for call in (lambda: gmprof.profile(SAXPY, "saxpy", 1, 4, list(args), backend="cpu",
                                        device="gpu"),
                 lambda: gmprof.RawKernel(SAXPY, "saxpy", backend="cpu", device="gpu")):
        with pytest.raises(OptionError, match="disagree"):
            call()


def test_to_pandas_without_pandas_is_a_plain_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    with pytest.raises(OptionError, match="needs pandas: python3 -m pip install pandas"):
        hand_report().to_pandas()
    assert hand_report().to_dict()["kernel"] == "k"  # the rest needs no pandas


PROGRAM = r"""#include <cstdio>
__global__ void twice(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2 * a[i];
}
int main() {
  const int n = 100;
  int h[n], *d;
  for (int i = 0; i < n; ++i) h[i] = i;
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  twice<<<4, 32>>>(d, n);
  twice<<<4, 32>>>(d, n);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d\n", h[99]);
  return 0;
}
"""


def test_load_reads_a_whole_programs_report_files(tmp_path):
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), GMPROF_BACKEND="cpu")
    (tmp_path / "main.cu").write_text(PROGRAM)
    subprocess.run([sys.executable, "-m", "gmprof", "nvcc", "main.cu", "-o", "app"],
                   cwd=tmp_path, env=env, check=True, capture_output=True)
    for run in (1, 2):  # two processes, two report files: merged
        subprocess.run(["./app"], cwd=tmp_path, check=True, capture_output=True,
                       env=dict(env, GMPROF_OUTPUT=str(tmp_path / f"r{run}.json")))
    r = gmprof.load([tmp_path / "r1.json", tmp_path / "r2.json"])
    # 2 processes x 2 launches; each launch reads and writes a[0..99] once: 4 x 2 = 8 each
    assert r.run.kernel == "twice" and r.run.launches == 4
    assert r.array("a").counts.tolist() == [8] * 100
    assert gmprof.load(tmp_path / "r1.json").array("a").counts.tolist() == [4] * 100
