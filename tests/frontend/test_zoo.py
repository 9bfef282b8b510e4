"""The syntax zoo: every construct the frontend must read, with its access sites asserted.

Expected sites are written by hand from the zoo sources (tests/frontend/zoo/*.cu): for each
function, (line, object, kind, index as written), in source order.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gmprof.frontend.program import load
from gmprof.passes.pipeline import analyze

ZOO = Path(__file__).parent / "zoo"


def sites_of(path, function, **kw):
    tu = load(ZOO / path, **kw)
    program = analyze(tu, upto="accesses")
    facts = program.facts(function)
    assert facts is not None, f"{function} not parsed: {tu.warnings}"
    return [(s.location.line, s.object_name if s.object else None, s.kind, s.index_text)
            for s in facts.sites], facts, tu


def test_multidimensional_shared_arrays_and_macro_indices():
    sites, facts, _ = sites_of("arrays.cu", "shared_2d")
    assert sites == [
        (11, "tile", "write", "[ty][tx]"),
        (11, "in", "read", "[IDX(ty, tx)]"),  # a function-like macro stays a call
        (13, "out", "write", "[ty * n + tx]"),
        (13, "tile", "read", "[tx][ty]"),
    ]
    tile = next(o for o in facts.objects if o.name == "tile")
    assert (tile.space, tile.elem_type, tile.dims) == ("shared", "float", ("TILE", "TILE + 1"))


def test_extern_shared_cast_to_other_types():
    sites, facts, _ = sites_of("arrays.cu", "dynamic_cast_smem")
    assert sites == [
        (21, "smem", "write", "[i]"),
        (22, "smem", "write", "[i / 4]"),  # through the float4 alias v4
        (23, "dst", "write", "[i]"),
        (23, "smem", "read", "[i]"),  # reinterpret_cast<float4 *>(smem)[i]
    ]
    assert facts.sites[1].via == "v4"
    smem = next(o for o in facts.objects if o.name == "smem")
    assert smem.space == "shared_dynamic"


def test_struct_members_pointer_arithmetic_and_updates():
    sites, facts, _ = sites_of("arrays.cu", "structs_and_pointers")
    assert sites == [
        (29, "p", "write", "[i]"),        # p[i].x = ...
        (29, "p", "read", "[i]"),         # ... p[i].y
        (30, "a", "write", "i"),          # *(a + i) = ...
        (30, "a", "read", "i + 1"),       # *(a + i + 1)
        (32, "a", "read-write", "[2]"),   # row[2] += 1, row = a + i * n
        (33, "p", "write", "0"),          # p->m
        (34, "a", "read-write", "[i]"),   # a[i]++
        (35, "a", "read-write", "[i + 1]"),  # --a[i + 1]
        (36, "a", "read-write", "[i]"),   # a[i] -= ...
        (36, "a", "read", "[i + 2]"),
    ]
    assert facts.sites[4].via == "row"
    assert [s.text for s in facts.sites[2:4]] == ["*(a + i)", "*(a + i + 1)"]


def test_switch_do_while_goto_comma_ternary_for_with_two_variables():
    sites, _, _ = sites_of("control.cu", "control")
    assert sites == [
        (5, "data", "read", "[i]"),
        (7, "flags", "write", "[i]"),
        (11, "flags", "write", "[i]"),
        (11, "data", "read", "[i + 1]"),
        (14, "flags", "write", "[i]"),
        (18, "data", "read-write", "[k]"),
        (23, "data", "write", "[0]"),
        (23, "flags", "read", "[0]"),
        (23, "flags", "read", "[1]"),
        (24, "data", "write", "[1]"),
        (24, "flags", "read", "[2]"),
        (24, "flags", "read", "[3]"),
        (26, "data", "write", "[j]"),
        (26, "data", "read", "[m]"),
        (28, "flags", "write", "[n]"),
    ]


def test_cxx_constructs_parse():
    tu = load(ZOO / "cxx.cu")
    assert not [w for w in tu.warnings if w.kind in ("unparsed-function", "internal")], \
        [w.render() for w in tu.warnings]
    names = {f.name: f for f in tu.functions}
    # Limits::max: a member function defined in its class template's body
    assert set(names) == {"helper_scale", "clampv", "sum_n", "cxx_kernel", "both", "Limits::max"}
    assert names["helper_scale"].source.name.endswith("zoo_helpers.cuh")  # a local include
    assert names["both"].space == "host_device"
    assert [(t.kind, t.name) for t in names["clampv"].template_params] == \
        [("type", "T"), ("value", "BLOCK")]
    kernel = names["cxx_kernel"]
    assert [str(e.value) for e in kernel.parsed.launch_bounds] == ["256", "2"]
    sites, facts, _ = sites_of("cxx.cu", "cxx_kernel")
    assert sites == [
        (28, "out", "write", "[i]"),  # through the reference `float &ref = out[i]`
        (28, "in", "read", "[i]"),
        (31, "out", "write", "[n - 1]"),
        (32, "out", "write", "[0]"),
        (32, "in", "read", "[1]"),
    ]
    assert facts.sites[0].via == "ref"
    sum_sites, _, _ = sites_of("cxx.cu", "sum_n")
    assert sum_sites == [(19, "x", "read", "[i]")]


def test_atomics_scalars_and_file_scope_variables():
    sites, facts, _ = sites_of("atomics.cu", "atomics")
    assert sites == [
        (10, "total", "write", "0"),
        (11, "local_hist", "write", "[t % 64]"),
        (13, "local_hist", "read-write", "[keys[t] % 64]"),
        (13, "keys", "read", "[t]"),
        (14, "total", "read-write", "0"),
        (16, "hist", "read-write", "[t]"),
        (16, "local_hist", "read", "[t % 64]"),
        (17, "acc", "read-write", "t"),  # atomicAdd(acc + t, ...) through pointer arithmetic
        (17, "weights", "read", "[t % 8]"),
        (18, "counter", "read-write", "0"),
        (19, "counter", "read-write", "0"),
    ]
    atomics = {s.atomic for s in facts.sites if s.atomic}
    assert atomics == {"atomicAdd", "atomicMax", "atomicInc"}
    spaces = {o.name: o.space for o in facts.objects}
    assert spaces["counter"] == "global" and spaces["weights"] == "constant"
    assert spaces["total"] == "shared"


@pytest.mark.parametrize("defines,expected_lines", [
    ({}, [10, 10]),
    ({"USE_SQUARE": None}, [10, 10, 15, 15, 15]),
])
def test_conditionals_inside_bodies_follow_defines(defines, expected_lines):
    sites, _, _ = sites_of("conditional.cu", "cond", defines=defines)
    assert [s[0] for s in sites] == expected_lines


def test_a_branch_that_does_not_parse_is_a_warning_with_its_location():
    tu = load(ZOO / "conditional.cu", defines={"WIDTH": "8"})
    fn = tu.function("cond")
    assert fn.parsed is None
    (warning,) = [w for w in tu.warnings if w.kind == "unparsed-function"]
    assert (warning.location.line, warning.location.col) == (12, 24)
