"""Mutated CUDA sources through parse, analyze and instrument (Hypothesis): whatever the text, the
command ends with status 0 (a function it cannot read is left untouched with a warning) or 2
with a located `file:line:col: error:`, never a traceback, and a failed instrument writes no
file. Failures Hypothesis finds are kept below as plain regression cases."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gmprof.cli import main

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LOCATED = re.compile(r"^\S+:\d+:\d+: error: ", re.M)

SEEDS = [p.read_text() for p in [
    HERE / "kernels.cu",
    ROOT / "tests" / "passes" / "kernels" / "paper.cu",
    ROOT / "samples" / "matmul_tiled" / "matmul.cu",
    ROOT / "samples" / "spmv" / "spmv.cu",
    ROOT / "samples" / "dxtc" / "dxtc.cu",
] if p.is_file()]

# pieces of C, CUDA and preprocessor text that break things in interesting ways
TOKENS = ["{", "}", "(", ")", "[", "]", ";", ",", "*", "&", "=", "<", ">", "::", "...", "#",
          "\\\n", "\n", "\"", "'", "/*", "*/", "//", "#if 0\n", "#if 1\n", "#else\n", "#endif\n",
          "#define X (\n", "#define F(a) a a\n", "#include \"missing.cuh\"\n", "#pragma unroll\n",
          "__global__", "__device__", "__shared__", "extern __shared__ float s[];",
          "template <typename T>", "template <int N>", "struct S {", "typedef", "return",
          "if (", "for (;;)", "while (", "do", "goto l;", "l:", "switch (x) { case 1: }",
          "asm(\"nop\");", "__syncthreads();", "threadIdx.x", "blockIdx", "0x", "1e", "'\\",
          "\0", "\x7f", "é", "\ufeff", "\t", "  ", "int", "float4", "auto", "sizeof(", "->",
          "operator", "~", "?", ":", "0" * 40, "a" * 300]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        i = draw(st.integers(0, n))
        op = draw(st.sampled_from(["insert", "delete", "duplicate", "replace"]))
        if op == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif op == "delete":
            j = min(n, i + draw(st.integers(1, 40)))
            text = text[:i] + text[j:]
        elif op == "duplicate":
            j = min(n, i + draw(st.integers(1, 200)))
            text = text[:j] + text[i:j] + text[j:]
        else:
            j = min(n, i + draw(st.integers(1, 10)))
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[j:]
    return text


def check(tmp_path, capsys, text: str | bytes):
    src = tmp_path / "m.cu"
    if isinstance(text, str):
        src.write_text(text, encoding="utf-8", errors="surrogatepass")
    else:
        src.write_bytes(text)
    out = tmp_path / "m_inst.cu"
    for argv in (["parse", str(src), "--json"], ["analyze", str(src)],
                 ["instrument", str(src), "-o", str(out)]):
        for p in (out, Path(str(out) + ".json")):
            if p.exists():
                p.unlink()
        rc = main(argv)
        o, err = capsys.readouterr()
        assert "Traceback" not in err, err
        assert rc in (0, 2), (argv, rc, err)
        if rc == 2:
            assert LOCATED.search(err), (argv, err)
            if argv[0] == "instrument":
                assert not out.exists() and not Path(str(out) + ".json").exists()


@settings(max_examples=int(os.environ.get("GMPROF_HYPOTHESIS_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=mutated())
def test_mutated_sources(tmp_path, capsys, text):
    check(tmp_path, capsys, text)


@pytest.mark.parametrize("text", [
    b"\xff\xfe\x00garbage",                      # not UTF-8
    b"",                                         # empty
    b"__global__ void k(int *o) { o[0] = 1; }",  # no final newline
    "#include \"m.cu\"\n",                        # includes itself
    "__global__ void k(int *o) {\n" + "  {\n" * 50 + "  }\n" * 50 + "}\n",
    "#define A(\n__global__ void k(int *o) { o[0] = 1; }\n",
    "__global__ void k(int *o) { o[0] = 1; }\n#if 1\n",
])
def test_regressions(tmp_path, capsys, text):
    check(tmp_path, capsys, text)


@pytest.mark.parametrize("text, where, what", [
    ("#if 1\n__global__ void k(int *o) { o[0] = 1; }\n", "m.cu:1:1", "unterminated #if"),
    ("__global__ void k(int *o) { o[0] = 1; }\n  /* never closed\n", "m.cu:2:3",
     "unterminated comment"),
])
def test_what_nvcc_refuses_is_a_located_error(tmp_path, capsys, monkeypatch, text, where, what):
    """nvcc stops at an #if the file never closes and at a comment that never ends; so does
    gmprof, at the same place, rather than reading a file that ends early."""
    src = tmp_path / "m.cu"
    src.write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(["parse", "m.cu"]) == 2
    err = capsys.readouterr().err
    assert f"{where}: error: {what}" in err and "Traceback" not in err
