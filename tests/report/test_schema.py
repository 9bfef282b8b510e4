"""The run document against its JSON Schema (gmprof/report/run.schema.json), for every label,
enhanced mode and sites that are not counted; reports made by hand."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gmprof.report import countcodec
from gmprof.report.check import full_schema
from gmprof.report.document import document, dumps
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = full_schema()  # run.schema.json and the counter families' fields


def validate(doc: dict) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    # through text, as a saved file is read
    jsonschema.validate(json.loads(dumps(doc)), SCHEMA)


def report(label="exact", threshold=None, sampling=None, live=None, how="measured"):
    run = RunInfo("k<16>", "cpu", "CPU backend", "default", (2, 1, 1), (32, 1, 1), 0)
    a = ArrayStats("tile", "shared", "float", (4, 4), 4, 4, np.arange(16, dtype=np.int64),
                   reads=100, writes=20, label=label, threshold=threshold, sampling=sampling,
                   live_ranges=live)
    big = ArrayStats("big", "device", "float", (300, 300), 4, 4,
                     np.ones(90_000, np.int64))  # over COUNTS_LIMIT: packed counts, a heat map
    sites = [SiteStats(0, "dir/k.cu:3:5", "tile[i]", "k", "tile", "read", 8, how),
             SiteStats(1, "dir/k.cu:4:5", "acc[i]", "k", None, "write", 0, "not counted")]
    return Report(run, [a, big], sites)


@pytest.mark.parametrize("kw", [
    {}, {"label": "thresholded", "threshold": 5, "how": "thresholded"},
    {"label": "sampled", "sampling": 0.01, "how": "sampled"},
    {"label": "approximate", "how": "approximate"},
    {"live": {"ranges": 4, "accesses": 9, "histogram": [1] * 12}},
])
def test_documents_follow_the_schema(kw):
    r = report(**kw)
    r.merge(report(**kw))
    r.source = [{"function": "k", "file": "dir/k.cu", "first_line": 1,
                 "lines": ["a", "b", "c", "d"]}]
    doc = document([r, report(**kw)], command=["profile", "x"],
                   sample={"name": "s", "size": "small", "self_check": "passed", "error": None})
    validate(doc)
    k = doc["kernels"][0]
    # two launches of ones: every one of the 300 x 300 counters is 2, packed (countcodec.py)
    packed = json.loads(dumps(doc))["kernels"][0]["arrays"][1]["counts"]
    assert packed["encoding"] == "zlib-base64-int64le" and packed["length"] == 90_000
    assert (countcodec.decode(packed) == np.full(90_000, 2)).all()
    assert k["arrays"][1]["heatmap"]["block"] == [5, 5]
    assert [s["executions"] for s in k["sites"]] == [16, None]


def test_the_schema_refuses_what_it_should():
    doc = json.loads(dumps(document([report()])))
    doc["kernels"][0]["arrays"][0]["label"] = "probably"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)
