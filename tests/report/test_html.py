"""The HTML page and its heat maps, from hand-made reports: shapes, aspect, ticks, hover text,
uniform arrays, labels, self-containment; and (where the OS has Chromium) that it renders
without console errors."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from gmprof.report.document import document, dumps
from gmprof.report.heatgrid import heat_grid
from gmprof.report.heatsvg import LEFT, RIGHT, svg
from gmprof.report.render import html_text
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats


def report_with(*arrays, source=None) -> Report:
    run = RunInfo("k", "cpu", "CPU backend", "default", (1, 1, 1), (32, 1, 1), 0)
    sites = [SiteStats(0, "k.cu:3:5", f"{arrays[0].name}[i]", "k", arrays[0].name, "read", 8,
                       "measured")]
    r = Report(run, list(arrays), sites)
    r.source = source
    return r


def arr(name, counts, shape, space="device", **kw) -> ArrayStats:
    counts = np.asarray(counts, np.int64).ravel()
    return ArrayStats(name, space, "float", shape, 4, 4, counts, **kw)


def heat_svgs(page: str) -> list[str]:
    return re.findall(r'<svg class="heat".*?</svg>', page, re.S)


def plot_size(s: str) -> tuple[float, float]:
    """The plot area: the outline rectangle drawn around the cells."""
    m = re.search(r'<rect x="0" y="0" width="([\d.]+)" height="([\d.]+)" fill="none"', s)
    return float(m.group(1)), float(m.group(2))


def test_a_2d_map_keeps_the_declared_aspect_and_integer_ticks():
    counts = np.arange(16 * 17).reshape(16, 17) % 7
    page = html_text(report_with(arr("tile", counts, (16, 17), space="shared")))
    (s,) = heat_svgs(page)
    w, h = plot_size(s)
    assert w / h == pytest.approx(17 / 16, rel=1e-3)
    ticks = re.findall(r'text-anchor="(?:middle|end)">([^<]*)</text>', s)
    assert ticks and all(re.fullmatch(r"\d+", t) for t in ticks)
    # hover: every element's index and count (runs of equal counts share a rectangle)
    assert "<title>tile[0][0]: 0</title>" in s and "<title>tile[15][16]: " in s
    assert f"tile[3][4]: {counts[3, 4]}" in s


def test_a_1d_array_is_a_strip_not_a_square():
    page = html_text(report_with(arr("v", np.arange(100) % 3, (100,))))
    (s,) = heat_svgs(page)
    w, h = plot_size(s)
    assert w > 10 * h  # one row
    assert "v[5]: 2" in s


def test_a_uniform_array_is_one_line():
    page = html_text(report_with(arr("ones", np.full(64, 6), (8, 8)),
                                 arr("other", np.arange(4), (4,))))
    assert "every element: 6" in page
    assert len(heat_svgs(page)) == 1  # only `other` has a map


def test_a_large_array_is_drawn_in_blocks_with_their_extremes():
    counts = np.zeros((1000, 300), np.int64)
    counts[999, 299] = 5
    hg = heat_grid(counts.reshape(1000, 300))
    assert hg["block"] == [16, 5] and len(hg["mean"]) == 63 and len(hg["mean"][0]) == 60
    s = svg(hg, "big", "u")
    assert "big[992..999][295..299]: mean 0.12, min 0, max 5" in s
    w, h = plot_size(s)
    assert w / h == pytest.approx(300 / 1000, rel=1e-3)


def test_three_dimensional_indices_on_hover():
    counts = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    (s,) = heat_svgs(html_text(report_with(arr("cube", counts, (2, 3, 4)))))
    assert "cube[1][2][3]: 23" in s and "leading dimensions" in html_text(
        report_with(arr("cube", counts, (2, 3, 4))))


def test_thresholded_counts_read_at_least_in_the_legend_and_tables():
    a = arr("t", [1, 2, 300, 255], (4,), threshold=255, label="thresholded")
    page = html_text(report_with(a))
    assert "&gt;=255" in page and "thresholded" in page
    assert "t[2..3]: &gt;=255 each" in page  # a run of equal (saturated) counts


def test_sampled_labels_carry_the_rate():
    a = arr("s", [100, 200, 0, 300], (4,), label="sampled", sampling=0.01)
    page = html_text(report_with(a))
    assert "sampled rate 0.01" in page and "sampled at rate 0.01" in page


def test_source_view_links_arrays():
    a = arr("tile", np.arange(4), (4,), space="shared")
    src = [{"function": "k", "file": "k.cu", "first_line": 1,
            "lines": ["__global__ void k(float *out) {", "  __shared__ float tile[4];",
                      "  out[0] = tile[threadIdx.x] < 1 ? 1 : 2;", "}"]}]
    r = report_with(a, source=src)
    r.sites[0].location = "k.cu:3:13"
    page = html_text(r)
    aid = re.search(r'<section class="array" id="([^"]+)"', page).group(1)
    assert f'<a href="#{aid}">tile</a>[threadIdx.x] &lt; 1' in page  # escaped, linked
    rows = re.findall(r"<tr[^>]*><td class=\"n\">(\d+)</td>", page)
    assert rows == ["1", "2", "3", "4"]


def test_a_page_is_self_contained_and_escapes_names():
    a = arr("<b>odd</b>", np.arange(4), (2, 2))
    page = html_text(report_with(a))
    assert "<b>odd</b>" not in page and "&lt;b&gt;odd&lt;/b&gt;" in page
    assert not re.search(r"https?://|<script[^>]*\ssrc=|<link|<img|@import|url\((?!#)", page)
    # scripts are inline: the page's own (report.js) and the heat maps' data, whose JSON
    # cannot close its element
    for body in re.findall(r"<script[^>]*>(.*?)</script>", page, re.S):
        assert "<b>" not in body


def test_every_kernel_of_a_run_is_on_one_page():
    r1, r2 = report_with(arr("x", np.arange(4), (4,))), report_with(arr("y", np.arange(4), (4,)))
    r2.run.kernel = "second"
    page = html_text(document([r1, r2]))
    assert page.count('<section id="k0">') == 1 and page.count('<section id="k1">') == 1
    assert ">second</a>" in page


CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome",
                                          "chrome") if shutil.which(n)), None)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium (the OS package) on this machine")
def test_renders_in_headless_chromium_without_console_errors(tmp_path):
    counts = np.arange(16 * 17).reshape(16, 17) % 7
    page = tmp_path / "r.html"
    page.write_text(html_text(report_with(arr("tile", counts, (16, 17)),
                                          arr("v", np.arange(100), (100,)))))
    run = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox",
                          "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0
    assert 'class="heat"' in run.stdout  # the DOM holds the maps
    console = [l for l in run.stderr.splitlines() if "CONSOLE" in l]
    assert console == []


def test_strip_width_fits_the_svg():
    s = svg(heat_grid(np.arange(1000)), "v", "u")
    width = float(re.search(r'<svg class="heat" width="(\d+)"', s).group(1))
    w, _ = plot_size(s)
    assert width == pytest.approx(LEFT + w + RIGHT, abs=1)


# -- the page to explore: every element up to the cap, labels, comments, whole programs -------

import json  # noqa: E402

from gmprof.report import heatgrid  # noqa: E402


def drawn(page: str) -> list[dict]:
    """The heat maps' data blocks, as the page's script reads them."""
    return [json.loads(t) for t in
            re.findall(r'<script type="application/json" id="[^"]+">(.*?)</script>', page, re.S)]


def unrle(cells) -> list:
    if "values" in cells:
        return cells["values"]
    out, runs = [], cells["runs"]
    for v, n in zip(runs[0::2], runs[1::2]):
        out += [v] * n
    return out


def test_a_42_by_70_array_is_drawn_element_by_element():
    counts = (np.arange(42 * 70).reshape(42, 70) * 7) % 11  # no two neighbours alike
    (d,) = drawn(html_text(report_with(arr("g", counts, (42, 70)))))
    assert (d["rows"], d["cols"], d["block"]) == (42, 70, [1, 1])
    assert d["mean"] == {"values": counts.ravel().tolist()} and d["min"] is None
    # runs where they are shorter: 4 rows of 0 then 38 of 1 -> two runs
    runs = np.repeat([0, 1], [4 * 70, 38 * 70]).reshape(42, 70)
    (d,) = drawn(html_text(report_with(arr("g", runs, (42, 70)))))
    assert d["mean"] == {"runs": [0, 280, 1, 2660]}


def test_above_the_cap_cells_are_bins_and_the_page_says_how_large():
    # 2,000 x 2,000 = 4,000,000 elements > 1,048,576: bins of 2 x 2 make 1,000,000 cells
    counts = np.zeros((2000, 2000), np.int64)
    counts[1999, 1998] = 9
    assert heatgrid.MAX_DRAWN == 1 << 20
    page = html_text(report_with(arr("big", counts, (2000, 2000))))
    (d,) = drawn(page)
    assert (d["rows"], d["cols"], d["block"]) == (1000, 1000, [2, 2])
    cells = unrle(d["mean"])
    assert cells[999 * 1000 + 999] == 9 / 4 and unrle(d["max"])[999 * 1000 + 999] == 9
    assert "4,000,000 elements: more than the 1,048,576 cells a map draws" in page
    assert "bin of 2 x 2 elements" in page


def test_a_long_strip_is_binned_to_a_canvas_width():
    # 100,000 elements: more than 32,768 a side, so bins of ceil(100,000 / 32,768) = 4
    page = html_text(report_with(arr("v", np.arange(100_000) % 3, (100_000,))))
    (d,) = drawn(page)
    assert d["one_d"] and d["block"] == [1, 4] and d["cols"] == 25_000
    assert "100,000 elements: more than the 32,768 cells a side a map draws one by one, so " \
        "each cell is a bin of 4 elements" in page
    # the legend is outside the static map: shown beside the script's map too
    assert re.search(r'</div>\s*<svg class="legend"', page)


def test_a_saved_run_without_counts_draws_its_reduced_map():
    counts = np.arange(300 * 300).reshape(300, 300) % 5
    doc = json.loads(dumps(document([report_with(arr("s", counts, (300, 300)))])))
    # runs saved before every count was kept had none above 65,536 counters (90,000 here)
    doc["kernels"][0]["arrays"][0]["counts"] = None
    page = html_text(doc)
    (d,) = drawn(page)
    hg = doc["kernels"][0]["arrays"][0]["heatmap"]
    assert d["block"] == hg["block"] == [5, 5] and (d["rows"], d["cols"]) == (60, 60)
    assert "bin of 5 x 5 elements" in page
    # from the run itself (its Reports), every one of the 90,000 elements is a cell
    (d,) = drawn(html_text(report_with(arr("s", counts, (300, 300)))))
    assert d["block"] == [1, 1] and unrle(d["mean"]) == counts.ravel().tolist()


def test_shared_words_of_a_wide_element_are_drawn_per_element():
    # double2 in shared memory: 4 words an element, shown as their max (ArrayStats.grid)
    a = ArrayStats("d", "shared", "double2", (2,), 16, 4, np.array([1, 1, 3, 3, 0, 2, 0, 0]))
    doc = json.loads(dumps(document([report_with(a)])))
    (d,) = drawn(html_text(doc))
    assert unrle(d["mean"]) == [3, 2]


def test_comments_and_strings_do_not_link_names():
    a = arr("tile", np.arange(4), (4,), space="shared")
    src = [{"function": "k", "file": "k.cu", "first_line": 1,
            "lines": ["__global__ void k(float *out) {", "  // tile holds the block's part",
                      "  __shared__ float tile[4]; /* tile:", "     still tile */ tile[0] = 1;",
                      '  printf("tile");', "}"]}]
    r = report_with(a, source=src)
    r.sites[0].location = "k.cu:4:23"
    page = html_text(r)
    aid = re.search(r'<section class="array" id="([^"]+)"', page).group(1)
    link = f'<a href="#{aid}">tile</a>'
    assert '<span class="comment">// tile holds the block&#39;s part</span>' in page
    assert f"float {link}[4]; <span class=\"comment\">/* tile:</span>" in page
    assert f'<span class="comment">     still tile */</span> {link}[0] = 1;' in page
    assert '<span class="literal">&#34;tile&#34;</span>' in page
    source = re.search(r'<table class="source.*?</table>', page, re.S).group(0)
    assert source.count(link) == 2  # the two in code


def test_source_lines_are_shaded_by_their_traffic():
    a = arr("x", np.arange(4), (4,))
    src = [{"function": "k", "file": "k.cu", "first_line": 1,
            "lines": ["void k() {", "  x[i] = 1;", "  y = x[j];", "}"]}]
    r = report_with(a, source=src)
    r.sites = [SiteStats(0, "k.cu:2:3", "x[i]", "k", "x", "write", 100, "measured"),
               SiteStats(1, "k.cu:3:7", "x[j]", "k", "x", "read", 25, "measured")]
    page = html_text(r)
    rows = re.findall(r'<tr(?: class="cold")?(?: style="([^"]*)")?><td class="n">(\d)</td>',
                      page)
    shade = dict((int(n), s) for s, n in rows)
    # alpha 0.12 + 0.6 x executions / the busiest line's: 100 -> 0.72, 25 -> 0.27
    assert shade == {1: "", 2: "background: rgba(245, 130, 32, 0.72)",
                     3: "background: rgba(245, 130, 32, 0.27)", 4: ""}


def test_labels_other_than_exact_stand_out_in_colour():
    page = html_text(report_with(arr("n", [1, 2, 3, 4], (4,), label="approximate"),
                                 arr("s", [1, 2, 0, 3], (4,), label="sampled", sampling=0.5)))
    assert '<span class="lab lab-approx">approximate</span>' in page
    assert '<span class="lab lab-sampled">sampled rate 0.5</span>' in page
    assert re.search(r"\.lab-approx \{ background: #[0-9a-f]{6}", page)


def test_a_whole_programs_page_has_its_processes_and_devices():
    doc = json.loads(dumps(document([report_with(arr("x", np.arange(4), (4,)))])))
    doc["kernels"][0]["launches"][0]["outputs_identical"] = None
    doc["program"] = {
        "processes": [{"file": "r-1.json", "pid": 11, "host": "h", "backend": "cpu",
                       "launches": 3, "profiled": 2, "not_instrumented": {"k": 1},
                       "captured": {}}],
        "breakdown": [{"file": "r-1.json", "pid": 11, "host": "h", "device": 0, "kernel": "k",
                       "launches": 1, "accesses": {"x": 1000}, "instrumented_ms": 1.5},
                      {"file": "r-1.json", "pid": 11, "host": "h", "device": 1, "kernel": "k",
                       "launches": 1, "accesses": {"x": 3000}, "instrumented_ms": None}],
        "notes": ["one note"], "failed_launches": []}
    page = html_text(doc)
    assert 'id="processes"' in page and "<td>r-1.json</td>" in page and "k 1" in page
    rows = re.findall(r"<tr><td>11@h</td>.*?</tr>", page, re.S)
    assert len(rows) == 2 and "3,000" in rows[1] and "x 3,000" in rows[1]
    assert "note: one note" in page and "not compared" in page and "identical" not in page
