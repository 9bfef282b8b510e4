"""CUDA graphs on a GPU, profiled by default (marked gpu: the integrator runs them on the H100),
in the patterns that showed gmprof's nodes to cuda-samples when its fill and fold joined the
program's graphs: the node count and node queries of a graph (simpleCudaGraphs),
cudaGraphExecKernelNodeSetParams on a kernel node and cudaGraphExecUpdate from a new capture,
in CUDA 12's and CUDA 11's spellings (jacobiCudaGraphs), a clone (simpleCudaGraphs), and a graph
allocation read by later launches (graphMemoryNodes), and graphs CUDA cannot clone, profiled in
place: allocation and free nodes around kernel nodes (graphMemoryFootprint), while and if/else
conditional nodes with kernel nodes in their bodies (graphConditionalNodes), and a kernel
setting the condition of an if node it has no edge to, as graphConditionalNodes does (no node
of gmprof's may delay the kernel: the if would see the previous launch's value). Each program's
output under gmprof is the output of the same program built by nvcc alone; the counts are the
CPU tests' (test_graphs.py, test_graphs_in_place.py, test_graphs_in_place_order.py), derived by
hand there."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from conftest import gmprof
from test_graphs import (GRAPH_MEMORY, LEGACY, OBSERVED, check_graph_memory, check_observed)
from test_graphs_in_place import (CONDITIONAL, MEMORY_NODES, check_conditional,
                                  check_memory_nodes)
from test_graphs_in_place_order import RACE, check_race

pytestmark = pytest.mark.gpu


def _native(tmp_path, name, text) -> str:
    """What the program prints built by nvcc alone."""
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")
    src = tmp_path / f"native_{name}"
    src.write_text(text)
    exe = tmp_path / f"native_{name}.out"
    subprocess.run(["nvcc", "-arch=sm_90", str(src), "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def _profiled(tmp_path, name, text, *options):
    (tmp_path / name).write_text(text)
    p = gmprof("run", "--json", "--backend", "gpu", *options, name, "-arch=sm_90",
               cwd=tmp_path, GMPROF_BACKEND="gpu")
    return p, json.loads(p.stdout)


@pytest.mark.parametrize("mode,text", [("default", OBSERVED), ("basic", LEGACY)],
                         ids=["default", "legacy"])
def test_graphs_look_as_the_program_built_them_on_a_gpu(tmp_path, mode, text):
    native = _native(tmp_path, "o.cu", text)
    p, doc = _profiled(tmp_path, "o.cu", text, "--mode", mode)
    assert native.strip() and native in p.stderr, (native, p.stderr)
    check_observed(p.stderr, doc)


def test_graph_allocation_is_a_known_object_on_a_gpu(tmp_path):
    native = _native(tmp_path, "m.cu", GRAPH_MEMORY)
    p, doc = _profiled(tmp_path, "m.cu", GRAPH_MEMORY, "--mode", "basic")
    assert native in p.stderr, (native, p.stderr)
    check_graph_memory(p.stderr, doc)


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_graph_with_memory_nodes_profiled_in_place_on_a_gpu(tmp_path, mode):
    native = _native(tmp_path, "m.cu", MEMORY_NODES)
    p, doc = _profiled(tmp_path, "m.cu", MEMORY_NODES, "--mode", mode)
    assert native.strip() and native in p.stderr, (native, p.stderr)
    check_memory_nodes(p.stderr, doc)


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_conditional_bodies_profiled_each_run_on_a_gpu(tmp_path, mode):
    native = _native(tmp_path, "c.cu", CONDITIONAL)
    p, doc = _profiled(tmp_path, "c.cu", CONDITIONAL, "--mode", mode)
    assert native.strip() and native in p.stderr, (native, p.stderr)
    check_conditional(p.stderr, doc)


def test_condition_set_by_an_unordered_kernel_as_natively_on_a_gpu(tmp_path):
    """The setter kernel and its if node are both roots (graphConditionalNodes' shape): which
    the GPU runs first is a race, natively too (on an H100 one native run printed `b 5 5`
    and a profiled one `b 6 6`), so what gmprof can promise is the program's output in the
    form it has natively (its one line, `b N N`: every b[i] alike) and counts that agree with
    what this run did (N: how often body ran)."""
    native = _native(tmp_path, "r.cu", RACE)
    p, doc = _profiled(tmp_path, "r.cu", RACE, "--mode", "basic")
    line = re.compile(r"^b (\d+) \1$", re.M)
    assert line.search(native) and line.search(p.stderr), (native, p.stderr)
    check_race(p.stderr, doc)
