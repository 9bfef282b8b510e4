"""One run, one document: what `gmprof profile samples/NAME` writes, checked for structure.

A two-kernel sample (em_v1: em_estep and em_mstep, two launches each) is profiled on the CPU
backend; the JSON must be one document holding every kernel and every launch the sample's driver
makes (counted from the driver, not from gmprof), the CSV one file with a kernel column, the
HTML one self-contained page holding every kernel, and the tables printed to a pipe (80
columns) must hold every number and location of the JSON uncut. No count of gmprof's is an
expectation here: the outputs are compared with each other and with the driver's launches.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gmprof.driver import load_sample

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "em_v1"


def gmprof(*args, cwd=ROOT, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("GMPROF_CACHE_DIR", "/tmp/gmprof-cache-tests")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "gmprof.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def driver_launches(sample_dir: Path, size: str = "small") -> Counter:
    sample = load_sample(sample_dir)
    return Counter(l.kernel for l in sample.driver.launches(sample.driver.sizes[size])
                   if l.profile)


@pytest.fixture(scope="module")
def em_run(tmp_path_factory):
    """One run writing the JSON (stdout), the CSV and the HTML; and one printing tables."""
    d = tmp_path_factory.mktemp("em")
    run = gmprof("profile", str(SAMPLE), "--backend", "cpu", "--json", "--csv",
                 str(d / "r.csv"), "--out", str(d / "r.html"))
    assert run.returncode == 0, run.stderr
    text = gmprof("profile", str(SAMPLE), "--backend", "cpu", "--source")
    assert text.returncode == 0, text.stderr
    return {"json": run.stdout, "csv": (d / "r.csv").read_text(),
            "html": (d / "r.html").read_text(), "text": text.stdout}


def test_json_is_one_document_with_every_kernel_and_launch(em_run):
    doc = json.loads(em_run["json"])  # raises on two concatenated documents
    assert doc["schema"] == "gmprof.run/2"
    want = driver_launches(SAMPLE)
    assert {k["kernel"]: len(k["launches"]) for k in doc["kernels"]} == dict(want)
    for k in doc["kernels"]:
        assert k["run"]["launches"] == want[k["kernel"]]
        assert k["arrays"] and k["sites"] and k["source"]
        for a in k["arrays"]:
            assert a["label"] in ("exact", "thresholded", "sampled", "approximate")
            assert a["label_text"]
    assert doc["sample"]["name"] == "em_v1" and doc["sample"]["self_check"] == "passed"
    assert doc["failed_checks"] == []
    jsonschema = pytest.importorskip("jsonschema")
    from gmprof.report.check import full_schema

    schema = full_schema()  # run.schema.json and the counter families' fields
    jsonschema.validate(doc, schema)


def test_csv_has_a_kernel_column_for_every_table(em_run):
    doc = json.loads(em_run["json"])
    tables = [t for t in em_run["csv"].split("\n\n") if t.strip()]
    assert len(tables) == 3  # arrays, sites, lines
    kernels = {k["kernel"] for k in doc["kernels"]}
    for table in tables:
        rows = list(csv.DictReader(io.StringIO(table)))
        assert rows and set(rows[0]) >= {"kernel"}
        assert {r["kernel"] for r in rows} == kernels
    arrays = list(csv.DictReader(io.StringIO(tables[0])))
    assert len(arrays) == sum(len(k["arrays"]) for k in doc["kernels"])


class _Page(HTMLParser):
    VOID = {"meta", "br", "img", "input", "link", "hr", "stop", "rect", "line", "path"}

    def __init__(self):
        super().__init__()
        self.stack, self.ids, self.hrefs, self.srcs, self.errors = [], [], [], [], []
        self.tags = Counter()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] += 1
        if "id" in a:
            self.ids.append(a["id"])
        if "href" in a:
            self.hrefs.append(a["href"])
        if "src" in a:
            self.srcs.append(a["src"])
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()


def test_html_is_one_self_contained_page_with_every_kernel(em_run):
    page = em_run["html"]
    doc = json.loads(em_run["json"])
    assert not re.search(r"https?://", page)  # nothing to fetch (inline SVG needs no xmlns)
    p = _Page()
    p.feed(page)
    assert p.errors == [] and p.stack == []
    # scripts inline only: the page's own (report.js, which marks the page ready) and the heat
    # maps' data
    assert p.tags["html"] == 1 and p.srcs == []
    assert p.tags["script"] >= 2 and page.count('type="application/json"') == \
        p.tags["script"] - 2 and 'dataset.ready = "yes"' in page
    assert len(p.ids) == len(set(p.ids))
    assert all(h.startswith("#") and h[1:] in p.ids for h in p.hrefs)  # every link lands
    for k in doc["kernels"]:
        assert f">{k['kernel']}</a>" in page  # in the summary and the navigation
        for a in k["arrays"]:
            assert f">{a['name']}</a>" in page
    assert "Source" in page and "every element:" in page  # em_v1 has uniform arrays


def _numbers_and_locations(doc):
    for k in doc["kernels"]:
        for a in k["arrays"]:
            for key in ("accesses", "reads", "writes"):
                yield f"{a[key]:,}"
        for s in k["sites"]:
            yield s["location"].rsplit(":", 2)[1] + ":" + s["location"].rsplit(":", 2)[2]
            if s["executions"] is not None:
                yield f"{s['executions']:,}"


def test_tables_in_a_pipe_are_80_columns_and_cut_nothing(em_run):
    text, doc = em_run["text"], json.loads(em_run["json"])
    assert "…" not in text and "..." not in text.replace("9-16, ...", "")
    assert max(len(line) for line in text.splitlines()) <= 80
    words = set(re.findall(r"[\w.,:>=-]+", text))
    missing = [x for x in _numbers_and_locations(doc) if x not in words]
    assert missing == []
    assert "counts exact" in text  # the label is said wherever counts are
    assert "source of em_estep" in text and "source of em_mstep" in text
    # paths relative to the working directory
    assert "samples/em_v1/em.cu" in text and str(ROOT) not in text


def test_paths_are_relative_to_where_gmprof_runs(tmp_path):
    run = gmprof("profile", str(SAMPLE), "--backend", "cpu", cwd=SAMPLE)
    assert run.returncode == 0, run.stderr
    assert "access sites in em.cu" in run.stdout and str(SAMPLE) not in run.stdout


def test_csv_dash_is_the_only_thing_on_standard_output(tmp_path):
    run = gmprof("profile", str(SAMPLE), "--backend", "cpu", "--csv", "-")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("kernel,array,")
    assert list(csv.reader(io.StringIO(run.stdout)))  # all of it is CSV
    both = gmprof("profile", str(SAMPLE), "--backend", "cpu", "--csv", "-", "--json")
    assert both.returncode == 2 and "standard output is already taken" in both.stderr
