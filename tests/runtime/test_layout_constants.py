"""The counter layout's constants are declared once in Python (gmprof/runtime/layout.py); the
C++ that shares the layout (gmprof.cuh, the whole-program host runtime) repeats them as enums.
This test reads those enums from the C++ text and checks every one against layout.py, so a
constant changed on one side only fails here (no compiler needed)."""
from __future__ import annotations

import ast
import re

import pytest

from gmprof._paths import runtime_cu_dir
from gmprof.passes.tallies import TALLIES, WarpRequests
from gmprof.runtime import layout as LY

_ENUM = re.compile(r"\benum\s*(?:\w+\s*)?\{([^}]*)\}")


def cxx_enums(text: str) -> dict:
    """Every `enum { NAME = expr, ... }` entry and `#define NAME number` of a C++ text:
    NAME -> value (an entry without `=` is the previous one plus one, as in C++)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    out: dict = {}
    for m in re.finditer(r"^\s*#\s*define\s+(\w+)\s+(\d+)\s*$", text, flags=re.M):
        out[m.group(1)] = int(m.group(2))
    for body in _ENUM.findall(text):
        value = -1
        for entry in filter(None, (e.strip() for e in body.split(","))):
            name, _, expr = (s.strip() for s in entry.partition("="))
            value = _eval(expr, out) if expr else value + 1
            out[name] = value
    return out


def _eval(expr: str, names: dict) -> int:
    """An enum's value: integers, earlier names, + - * << (what these headers use)."""
    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.BinOp):
            ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__,
                   ast.LShift: int.__lshift__}
            return ops[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(f"enum value not understood: {expr}")
    return ev(ast.parse(expr, mode="eval").body)


def test_enums_are_read():
    # (the reader itself, on a made-up header: `= expr`, implicit + 1, comments, defines)
    got = cxx_enums("#define N 64\nenum { A = 2, B, C = A + B << 1 /* 10 */ };  // D = 9\n")
    assert got == {"N": 64, "A": 2, "B": 3, "C": (2 + 3) << 1}


CUH = {"GMPROF_MAX_OBJECTS": LY.MAX_OBJECTS, "KIND_NONE": LY.KIND_NONE,
       "KIND_DEVICE": LY.KIND_DEVICE, "KIND_SHARED": LY.KIND_SHARED,
       "FLAG_WARP_UNIFORM_OK": LY.FLAG_WARP_UNIFORM_OK, "FLAG_AREA_SHARED": LY.FLAG_AREA_SHARED,
       "FLAG_WS_ROWS_SHIFT": LY.FLAG_WS_ROWS_SHIFT, "FLAG_DEVICE_DISJOINT": LY.FLAG_DEVICE_DISJOINT,
       "AREA_HEADER": LY.AREA_HEADER, "SITE_WORDS": LY.SITE_WORDS, "LR_BINS": LY.LR_BINS,
       "LR_STRIDE": LY.LR_STRIDE}
# the counter families' constants (declared with their storage in passes/tallies.py)
CUH.update({name: value for t in TALLIES for name, value in t.constants.items()})
HOST_CPP = {"kMaxObjects": LY.MAX_OBJECTS, "kAreaHeader": LY.AREA_HEADER,
            "kSiteWords": LY.SITE_WORDS, "kLrStride": LY.LR_STRIDE,
            "kMaxReplicas": LY.MAX_AREA_REPLICAS, "FLAG_WARP_UNIFORM_OK": LY.FLAG_WARP_UNIFORM_OK,
            "FLAG_AREA_SHARED": LY.FLAG_AREA_SHARED,
            "FLAG_DEVICE_DISJOINT": LY.FLAG_DEVICE_DISJOINT, "KIND_DEVICE": LY.KIND_DEVICE,
            "KIND_SHARED": LY.KIND_SHARED, "kClockCapacity": LY.CLOCK_CAPACITY,
            "kWarpStride": WarpRequests.words}
HOST_H = {"OBJ_PARAM": LY.OBJ_PARAM, "OBJ_GLOBAL": LY.OBJ_GLOBAL, "OBJ_SHARED": LY.OBJ_SHARED,
          "OBJ_SHARED_DYNAMIC": LY.OBJ_SHARED_DYNAMIC}


@pytest.mark.parametrize("path, expected", [("gmprof.cuh", CUH),
                                            ("host/gmprof_host.cpp", HOST_CPP),
                                            ("host/gmprof_host.h", HOST_H)])
def test_cxx_constants_match_layout_py(path, expected):
    got = cxx_enums((runtime_cu_dir() / path).read_text())
    assert {k: got.get(k) for k in expected} == expected
