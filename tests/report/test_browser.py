"""The HTML page in a real browser: Playwright for Python driving the OS's Chromium
(`apt-get install -y chromium`, `pip install playwright`; `playwright install` is not used: it
downloads from a CDN that CI cannot reach). Loads a profiled sample's page and a whole
program's, sorts a table, zooms a heat map, reads the source view, and checks that the browser
logged no error.

Skipped, with the reason, where Chromium or Playwright is missing, unless the CI variable is
set: in CI (.ci/run installs both) a missing browser fails the test.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)),
                None)


def _missing() -> list[str]:
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("Playwright for Python (pip install playwright)")
    if CHROMIUM is None:
        missing.append("Chromium (apt-get install -y chromium)")
    return missing


def _env() -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), GMPROF_BACKEND="cpu")
    # the compile cache the whole-program tests use (tests/program/conftest.py): warm in CI
    env.setdefault("GMPROF_CACHE_DIR", str(Path(os.environ.get("TMPDIR", "/tmp")) /
                                           "gmprof-test-cache"))
    return env


def _run(args, cwd) -> None:
    proc = subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"{' '.join(map(str, args))}:\n{proc.stdout}\n{proc.stderr}"


@pytest.fixture(scope="module")
def browser():
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and the browser test lacks {', '.join(missing)}: .ci/run "
                        "installs them")
        pytest.skip(f"no {' and no '.join(missing)} on this machine (in CI the test runs)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _open(browser, path: Path):
    """A page loaded from the file, its script run, and the list its console errors go to."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("console", lambda m: errors.append(f"{m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    page.on("request", lambda r: errors.append(f"fetched {r.url}")
            if not r.url.startswith(("file:", "data:", "about:")) else None)
    page.goto(path.as_uri())
    page.wait_for_selector("html[data-ready=yes]", timeout=10_000)
    return page, errors


def _numbers(texts):
    return [float(t.replace(",", "").replace(">=", "")) for t in texts]


def test_a_profiled_sample_sorts_zooms_and_shows_its_source(browser, tmp_path):
    _run([sys.executable, "-m", "gmprof", "profile", str(ROOT / "samples" / "jcb_v1"),
          "--out", "page.html"], tmp_path)
    page, errors = _open(browser, tmp_path / "page.html")

    # sortable: a click on "accesses" orders the arrays by it, a second click the other way
    table = page.locator("table.arrays").first
    header = table.locator("thead th", has_text="accesses")
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    cells = table.locator("tbody tr td:nth-child(5)")
    up = _numbers(cells.all_inner_texts())
    assert up == sorted(up) and len(up) == 3  # out, in, otile
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    assert _numbers(cells.all_inner_texts()) == sorted(up, reverse=True)

    # jcb_v1 small: out is ny x nx = 42 x 70 (samples/jcb_v1/driver.py), each element a cell
    box = page.locator(".heatmap[data-name=out]").first
    data = page.evaluate("id => JSON.parse(document.getElementById(id).textContent)",
                         box.get_attribute("data-src"))
    assert (data["rows"], data["cols"], data["block"]) == (42, 70, [1, 1])
    view = box.locator(".heat-view")
    assert view.inner_text() == "rows 0..41, columns 0..69 of 42 x 70"
    canvas = box.locator("canvas")
    canvas.scroll_into_view_if_needed()
    bb = canvas.bounding_box()
    # heatsvg's layout: plot at (44, 6), square cells of min(640/70, 400/42) px
    cell = min(640 / 70, 400 / 42)
    page.mouse.move(bb["x"] + 44 + cell / 2, bb["y"] + 6 + cell / 2)
    assert box.locator(".heat-tip").inner_text() == "out[0][0]: 0"  # the boundary: never written
    canvas.click(position={"x": 44 + 30.5 * cell, "y": 6 + 20.5 * cell})
    # a click zooms 4 times around the cell: ceil(42/4) = 11 rows, ceil(70/4) = 18 columns
    m = re.fullmatch(r"zoomed: rows (\d+)\.\.(\d+), columns (\d+)\.\.(\d+) of 42 x 70",
                     view.inner_text())
    assert m, view.inner_text()
    r0, r1, c0, c1 = map(int, m.groups())
    assert (r1 - r0 + 1, c1 - c0 + 1) == (11, 18) and r0 <= 20 <= r1 and c0 <= 30 <= c1
    box.locator(".heat-reset").click()
    assert view.inner_text() == "rows 0..41, columns 0..69 of 42 x 70"

    # the source view: shaded by traffic, array names linked to their maps
    source = page.locator("table.source").first
    store = source.locator("tr", has_text="out[i * nx + j] = otile")
    assert "background" in (store.get_attribute("style") or "")
    store.locator("a", has_text="out").click()
    assert page.evaluate("location.hash") == "#" + box.get_attribute("id").rsplit("-map", 1)[0]
    cold = source.locator("tr", has_text="__syncthreads").first
    assert not cold.get_attribute("style")
    assert errors == []


def test_access_stats_in_the_source_view_and_the_arrays_panels(browser, tmp_path):
    _run([sys.executable, "-m", "gmprof", "profile", str(ROOT / "samples" / "transpose_naive"),
          "--access-stats", "--out", "page.html"], tmp_path)
    page, errors = _open(browser, tmp_path / "page.html")
    source = page.locator("table.source").first
    headers = source.locator("thead th").all_inner_texts()
    assert "warp requests" in headers
    col = headers.index("warp requests") + 1
    # the transposed read, shared_data[tx][ty] of a 16 x 16 tile (word 16 tx + ty): 8 distinct
    # words in each of 4 banks in the 72 warps with 16 columns on, 4 in the 36 warps of the
    # last block row (40 = 2*16 + 8): (72*8 + 36*4) / 108 = 6.67 wavefronts a request
    # (tests/report/test_warp_outputs.py walks the warps); odata's rows of 16 floats: 2
    # sectors each, 8 floats in the last block row: (72*4 + 36*2) / 108 = 3.33 sectors
    line = source.locator("tr", has_text="odata[index_out] = shared_data")
    cell = line.locator(f"td:nth-child({col})")
    assert cell.is_visible()
    assert cell.inner_text().splitlines() == ["odata: 3.33 sectors/req (ideal 3.33)",
                                              "shared_data: 6.67 wavefronts/req (up to 8-way)"]
    assert source.locator("tr", has_text="__syncthreads").locator(
        f"td:nth-child({col})").inner_text() == ""
    # shared_data's panel: its two sites, sortable by requests (100 writes, 108 reads)
    panel = page.locator("section.array", has_text="shared_data").locator(".warp-panel")
    assert "requests by wavefronts: 1: 100, 4: 36, 8: 72" in panel.inner_text()
    table = panel.locator("table.warps")
    table.locator("thead th", has_text="requests").click()
    assert table.locator("tbody tr td:nth-child(3)").all_inner_texts() == ["100", "108"]
    table.locator("thead th", has_text="requests").click()
    assert table.locator("tbody tr td:nth-child(3)").all_inner_texts() == ["108", "100"]
    assert errors == []


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("g++") is None,
                    reason="needs make and g++ (the CPU backend)")
def test_a_whole_programs_page(browser, tmp_path):
    for f in (ROOT / "samples" / "app_stencil").iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    _run(["make", f"NVCC={sys.executable} -m gmprof.cli nvcc"], tmp_path)
    _run([str(tmp_path / "app_stencil")], tmp_path)
    reports = sorted(p.name for p in tmp_path.glob("gmprof-report-*.json"))
    assert len(reports) == 1
    _run([sys.executable, "-m", "gmprof", "report", *reports, "--html", "w.html"], tmp_path)
    page, errors = _open(browser, tmp_path / "w.html")
    assert page.locator("#processes tbody tr").count() == 1  # one process ran
    breakdown = page.locator("#breakdown tbody tr")
    assert any("stencil" in row for row in breakdown.all_inner_texts())
    assert "not compared" in page.locator("#kernels").inner_text()
    page.locator("#breakdown thead th", has_text="kernel").click()
    # the source view: `tile` is linked in code, not in the comment above its declaration
    source = page.locator("table.source", has_text="__shared__ float tile").first
    comment = source.locator("tr", has_text="the block's tile with a one-element halo")
    assert comment.locator("a").count() == 0 and comment.locator(".comment").count() == 1
    assert source.locator("tr", has_text="__shared__ float tile").locator(
        "a", has_text="tile").count() == 1
    assert errors == []


def test_a_million_elements_each_drawn_and_a_dragged_region_zoomed(browser, tmp_path):
    import numpy as np

    from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats
    from gmprof.report.render import html_text

    # 1,000 x 1,000 = 1,000,000 elements, under the 1,048,576 cap: one cell each; one hot
    # element at [700][300], its neighbours 0
    counts = np.ones((1000, 1000), np.int64)
    counts[700, 300] = 50
    counts[699:702, 299:302][counts[699:702, 299:302] == 1] = 0
    run = RunInfo("k", "cpu", "CPU backend", "default", (1, 1, 1), (32, 1, 1), 0)
    report = Report(run, [ArrayStats("m", "device", "int", (1000, 1000), 4, 4, counts.ravel())],
                    [SiteStats(0, "k.cu:3:5", "m[i]", "k", "m", "read", 1_000_049, "measured")])
    (tmp_path / "big.html").write_text(html_text(report))
    page, errors = _open(browser, tmp_path / "big.html")
    box = page.locator(".heatmap").first
    view = box.locator(".heat-view")
    assert view.inner_text() == "rows 0..999, columns 0..999 of 1,000 x 1,000"
    canvas = box.locator("canvas")
    canvas.scroll_into_view_if_needed()
    bb = canvas.bounding_box()
    # the whole array in 400 x 400 px: 0.4 px a cell; drag over rows/columns ~690..710
    s = 400 / 1000
    page.mouse.move(bb["x"] + 44 + 290 * s, bb["y"] + 6 + 690 * s)
    page.mouse.down()
    page.mouse.move(bb["x"] + 44 + 310 * s, bb["y"] + 6 + 710 * s)
    page.mouse.up()
    m = re.fullmatch(r"zoomed: rows (\d+)\.\.(\d+), columns (\d+)\.\.(\d+) of 1,000 x 1,000",
                     view.inner_text())
    assert m, view.inner_text()
    r0, r1, c0, c1 = map(int, m.groups())
    assert r0 <= 700 <= r1 and c0 <= 300 <= c1 and r1 - r0 < 30 and c1 - c0 < 30
    # zoomed in, each element has its own square of pixels: hover the hot one
    cell = min(640 / (c1 - c0 + 1), 400 / (r1 - r0 + 1), 24)
    page.mouse.move(bb["x"] + 44 + (300 - c0 + 0.5) * cell, bb["y"] + 6 + (700 - r0 + 0.5) * cell)
    assert box.locator(".heat-tip").inner_text() == "m[700][300]: 50"
    page.mouse.move(bb["x"] + 44 + (301 - c0 + 0.5) * cell, bb["y"] + 6 + (700 - r0 + 0.5) * cell)
    assert box.locator(".heat-tip").inner_text() == "m[700][301]: 0"
    box.locator(".heat-out").click()
    assert view.inner_text().startswith("zoomed: ")
    assert errors == []
