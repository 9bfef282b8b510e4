"""advice.py's rules on hand-written documents (no kernel runs), and the merge of two launches'
sharing evidence (report/evidence.py)."""
from gmprof.report.advice import kernel_advice, shared_bytes_used, top_for
from gmprof.report.evidence import merge_evidence


def _array(name, space="device", counters=64, reads=0, writes=0, **more):
    a = {"name": name, "space": space, "elem_size": 4, "counter_unit_bytes": 4,
         "counters": counters, "shape": [counters], "reads": reads, "writes": writes,
         "accesses": reads + writes, "untouched": 0, "mean": (reads + writes) / counters,
         "counts_are": "accesses", "live_ranges": None}
    a.update(more)
    return a


def _kernel(arrays, sites=(), shared_mem=0):
    return {"kernel": "k", "run": {"grid": [4, 1, 1], "launches": 1, "shared_mem": shared_mem},
            "arrays": list(arrays), "sites": list(sites)}


def _staging(loads, reads, tile=64, foreign=0):
    return {"blocks": 4, "staging": {"sites": [0], "reads": reads, "loads": loads,
                                     "other_reads": 0, "predicted_reads": loads,
                                     "tile_elements": tile,
                                     "written_by_other_blocks": foreign},
            "registers": {"rereads": 0, "pairs": 0, "max_elements_per_thread": 0}}


SITE = {"id": 0, "location": "k.cu:3:5", "text": "w[j]", "object": "w", "kind": "read",
        "classes": [], "executions": 8192}


def test_staging_is_not_advised_when_another_block_writes_the_elements():
    w = _array("w", reads=8192, evidence=_staging(256, 8192, foreign=3))
    assert kernel_advice(_kernel([w], [SITE])) == []


def test_a_tile_larger_than_the_shared_memory_left_is_staged_in_turn():
    # 48 KiB less a 40 KiB shared array (10,240 words) and 4 KiB of dynamic shared memory:
    # 4 KiB left, 1,024 floats; the block's footprint is 2,048 floats
    big = _array("big", space="shared", counters=10240, reads=1, writes=1)
    w = _array("w", reads=8192, evidence=_staging(256, 8192, tile=2048))
    k = _kernel([big, w], [SITE], shared_mem=4096)
    assert shared_bytes_used(k) == 40 * 1024 + 4096
    stage = top_for(kernel_advice(k), "w")
    assert stage["kind"] == "stage" and not stage["evidence"]["fits"]
    assert stage["evidence"]["shared_free_bytes"] == 4096
    assert "stage tiles of at most 1,024 elements in turn" in stage["text"]


def test_a_rarely_used_shared_array_is_named_with_the_bytes_it_frees():
    # means 100, 90 and 4 accesses a word: 4 < 90 / 8 (the median of the others' is 90 or
    # 100: the upper middle of two, 100)
    arrays = [_array("a", "shared", 16, 1000, 600), _array("b", "shared", 16, 1000, 440),
              _array("c", "shared", 128, 256, 256)]
    advice = kernel_advice(_kernel(arrays))
    assert [(x["kind"], x["array"], x["prediction"]["bytes_freed"]) for x in advice] == \
        [("shared", "c", 128 * 4)]
    assert advice[0]["evidence"] == {"mean": 4.0, "median_others": 100.0, "accesses": 512}


def test_two_launches_evidence_adds_counts_and_keeps_the_largest_tile():
    a = _staging(48, 12288 // 2, tile=12)
    b = _staging(48, 12288 // 2, tile=10)
    a["sites"] = [{"id": 6, "reads": 6144, "block_elements": 24, "staged": True}]
    b["sites"] = [{"id": 6, "reads": 6144, "block_elements": 24, "staged": False},
                  {"id": 7, "reads": 10, "block_elements": 10, "staged": False}]
    m = merge_evidence(a, b)
    assert m["staging"]["loads"] == 96 and m["staging"]["reads"] == 12288
    assert m["staging"]["tile_elements"] == 12 and m["blocks"] == 4
    assert m["sites"] == [{"id": 6, "reads": 12288, "block_elements": 48, "staged": True},
                          {"id": 7, "reads": 10, "block_elements": 10, "staged": False}]
    assert merge_evidence(None, b) is b and merge_evidence(a, None) is a
