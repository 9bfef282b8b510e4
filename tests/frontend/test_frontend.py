"""Frontend: round trip, spans and node kinds, located errors, includes and the type oracle."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pycparser import c_ast

from gmprof.errors import GmprofError
from gmprof.frontend import cxx_ast as X
from gmprof.frontend.program import load
from gmprof.frontend.scan import scan
from gmprof.frontend.segment import segment
from gmprof.frontend.source import SourceFile, read_source

ROOT = Path(__file__).resolve().parents[2]


def all_cuda_files():
    files = sorted(p for d in ("samples", "tests") for p in (ROOT / d).rglob("*")
                   if p.suffix in (".cu", ".cuh"))
    assert files, "no CUDA files found"
    return files


@pytest.mark.parametrize("path", all_cuda_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_round_trip_segments_reproduce_the_file_byte_for_byte(path):
    src = read_source(path)
    segs = segment(src)
    assert "".join(s.text(src) for s in segs) == src.text
    assert all(a.end == b.start for a, b in zip(segs, segs[1:]))


def test_round_trip_on_awkward_text():
    text = ('#if 0\nvoid f() {\n#else\nvoid f(int) {\n#endif\n}\n'  # unbalanced in branches
            'int main() { return "}" [0] == \'}\'; } /* } */ // {\n'
            '__global__ void k(int *a) { a[0] = 1; }\n}\n')
    src = SourceFile("awkward.cu", text)
    segs = segment(src)
    assert "".join(s.text(src) for s in segs) == text


def test_spans_cover_exactly_the_node_text():
    text = ("__global__ void k(float *a, int n) {\n"
            "  int i = threadIdx.x + blockIdx.x * blockDim.x;\n"
            "  if (i < n) a[i] = (a[i] + 1.0f) * 2.0f;\n"
            "}\n")
    tu = load(text=text, name="k.cu")
    body = tu.function("k").funcdef.body
    texts = {type(n).__name__: [] for n in X.walk(body)}
    for node in X.walk(body):
        texts[type(node).__name__].append(X.span(node).text)
    assert "a[i] = (a[i] + 1.0f) * 2.0f" in texts["Assignment"]
    assert texts["ArrayRef"] == ["a[i]", "a[i]"]
    assert "(a[i] + 1.0f) * 2.0f" in texts["BinaryOp"]
    assert "threadIdx.x" in texts["StructRef"]
    decl = body.block_items[0]
    assert isinstance(decl, c_ast.Decl) and decl.name == "i"
    assert (decl.coord.line, decl.coord.column) == (2, 7)
    if_node = body.block_items[1]
    assert isinstance(if_node, c_ast.If) and X.span(if_node).text.startswith("if (i < n)")


def test_template_ids_are_not_comparisons():
    text = ("template <int N> __device__ int f(int a, int b) { return a + b + N; }\n"
            "__global__ void k(int *x, int a, int b) {\n"
            "  x[0] = f<32>(a, b);\n"
            "  x[1] = a < b > (a);\n"   # a comparison chain, not a template
            "}\n")
    tu = load(text=text, name="t.cu")
    body = tu.function("k").funcdef.body
    call = body.block_items[0].rvalue
    assert isinstance(call, c_ast.FuncCall) and isinstance(call.name, X.TemplateId)
    assert call.name.name == "f" and call.name.args[0].value == "32"
    cmp = body.block_items[1].rvalue
    assert isinstance(cmp, c_ast.BinaryOp) and cmp.op == ">"


def test_macro_used_as_type_and_typedef_from_include(tmp_path):
    (tmp_path / "types.cuh").write_text("typedef double real;\n#define VEC float4\n")
    (tmp_path / "k.cu").write_text('#include "types.cuh"\n'
                                   "__global__ void k(real *a, VEC *b) { real t = a[0]; "
                                   "VEC v = b[0]; a[1] = t + v.x; }\n")
    tu = load(tmp_path / "k.cu")
    assert tu.function("k").parsed is not None, [w.render() for w in tu.warnings]
    assert "real" in tu.oracle.types and "VEC" in tu.oracle.types


def test_host_code_with_syntax_errors_is_not_parsed():
    text = ("int main() { this is not C at all ((( }\n"
            "__global__ void k(int *a) { a[0] = 1; }\n")
    tu = load(text=text, name="h.cu")
    assert [f.name for f in tu.functions] == ["k"]
    assert tu.function("k").parsed is not None and not tu.warnings


def test_syntax_error_inside_a_kernel_is_located():
    text = "__global__ void k(int *a)\n{\n    a[0] = = 1;\n}\n"
    tu = load(text=text, name="bad.cu")
    (w,) = tu.warnings
    assert w.kind == "unparsed-function"
    assert (w.location.file, w.location.line, w.location.col) == ("bad.cu", 3, 12)
    rendered = w.render()
    assert rendered.splitlines()[1] == "    a[0] = = 1;"
    assert rendered.splitlines()[2] == "           ^"


def test_missing_and_non_utf8_files_are_plain_errors(tmp_path):
    with pytest.raises(GmprofError, match="no such file"):
        load(tmp_path / "nope.cu")
    bad = tmp_path / "latin1.cu"
    bad.write_bytes(b"__global__ void k() {}\nconst char *s = \"caf\xe9\";\n")
    with pytest.raises(GmprofError) as info:
        load(bad)
    assert "not UTF-8" in info.value.message and info.value.location.line == 2
    with pytest.raises(GmprofError, match="no such directory"):
        load(text="", name="x.cu", include_dirs=[tmp_path / "missing"])


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "gmprof.cli", *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_cli_parse_errors_exit_2_without_traceback(tmp_path):
    r = _cli("parse", str(tmp_path / "missing.cu"))
    assert r.returncode == 2 and "error: no such file" in r.stderr and "Traceback" not in r.stderr
    r = _cli("parse", "tests/frontend/zoo/arrays.cu", "-I", str(tmp_path / "none"))
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_cli_parse_json_schema():
    r = _cli("parse", "tests/frontend/zoo/control.cu", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["schema"] == "gmprof.parse/1"
    (fn,) = data["functions"]
    assert fn["name"] == "control" and fn["kind"] == "global" and fn["parsed"]
    assert {o["name"] for o in fn["objects"]} == {"data", "flags"}
    first = fn["accesses"][0]
    assert {k: first[k] for k in ("line", "col", "object", "kind", "index")} == \
        {"line": 5, "col": 13, "object": "data", "kind": "read", "index": "[i]"}


def test_scanner_keeps_strings_comments_and_directives_whole():
    toks = scan('#define A "}" \\\n  x\nf("{", \'{\'); /* { */ // }\n')
    kinds = [(t.kind, t.text) for t in toks]
    assert kinds[0] == ("dir", '#define A "}" \\\n  x')
    assert ("str", '"{"') in kinds and ("chr", "'{'") in kinds
    assert not any(t.text in ("{", "}") for t in toks if t.kind == "op")
