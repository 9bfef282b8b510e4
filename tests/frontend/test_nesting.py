"""Long expressions (generated code has sums of thousands of terms) are read by parse, analyze,
instrument and profile; a function nested deeper than gmprof walks (nesting.MAX_NESTING) is a
located warning and left untouched, never a RecursionError traceback."""
from __future__ import annotations

import json
import sys

import pytest

from gmprof.cli import main
from gmprof.frontend.nesting import MAX_NESTING


def kernel(expression: str) -> str:
    return ("__global__ void k(float *a) {\n"
            f"  float s = {expression};\n"
            "  a[threadIdx.x] = s;\n"
            "}\n")


def sum_of(n: int) -> str:
    return " + ".join(f"a[{i % 7}]" for i in range(n))


def nested(n: int) -> str:
    return "(" * n + "a[0]" + " + 1)" * n


@pytest.mark.parametrize("n", [600, 2000])
def test_a_long_sum_is_read_by_every_command(n, tmp_path, capsys):
    src = tmp_path / "k.cu"
    src.write_text(kernel(sum_of(n)))
    limit = sys.getrecursionlimit()  # 1,000: about 200 terms before these walks
    assert main(["parse", str(src)]) == 0
    capsys.readouterr()
    assert main(["analyze", str(src), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # n reads of a in the sum and one write: n + 1 sites
    assert len(data["kernels"][0]["sites"]) == n + 1
    out = tmp_path / "out.cu"
    assert main(["instrument", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "warning" not in err
    assert sum_of(n) in out.read_text()  # the user's expression as written
    assert sys.getrecursionlimit() == limit  # raised only while a command runs


def test_a_long_sum_is_profiled(tmp_path, capsys):
    src = tmp_path / "k.cu"
    src.write_text(kernel(sum_of(2000)))
    assert main(["profile", str(src), "--kernel", "k", "--grid", "1", "--block", "32",
                 "--arg", "a=float32[64]:random", "--backend", "cpu", "--json"]) == 0
    a = json.loads(capsys.readouterr().out)["kernels"][0]["arrays"][0]
    # 32 threads, each reading 2,000 terms and writing once
    assert (a["reads"], a["writes"]) == (32 * 2000, 32)


@pytest.mark.parametrize("expression", [sum_of(MAX_NESTING + 500), nested(MAX_NESTING + 10)],
                         ids=["sum", "parentheses"])
def test_deeper_than_gmprof_walks_is_a_located_warning(expression, tmp_path, capsys):
    src = tmp_path / "k.cu"
    src.write_text(kernel(expression))
    for argv in (["parse", str(src)], ["analyze", str(src)]):
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert err.startswith(f"{src}:2:") and "warning: k: cannot parse this function " \
            "(expression too deeply nested (more than 2,500 levels" in err, err[:300]
        assert "Traceback" not in err
    out = tmp_path / "out.cu"
    assert main(["instrument", str(src), "-o", str(out)]) == 0
    assert kernel(expression) in out.read_text()  # left untouched
    capsys.readouterr()
    assert main(["profile", str(src), "--kernel", "k", "--grid", "1", "--block", "32",
                 "--arg", "a=float32[64]:random", "--backend", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{src}:2:") and "kernel 'k' did not parse" in err and \
        "expression too deeply nested" in err
