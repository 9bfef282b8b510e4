"""Every sample's kernels compile for sm_90 with nvcc, and its driver describes launches that fit
its arrays and its kernels' parameters, at every size."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from sample_support import (C_TYPES, SIZES, base_name, kernel_names, kernel_params, sample,
                            sample_names)

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
MAX_STATIC_SHARED = 48 * 1024


def test_there_are_samples():
    assert len(sample_names()) >= 19


@needs_nvcc
@pytest.mark.parametrize("name", sample_names())
def test_kernel_file_compiles(name, tmp_path):
    s = sample(name)
    defines = [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in s.driver.defines.items()]
    run = subprocess.run([NVCC, "-cubin", "-arch=sm_90", *defines, "-o", str(tmp_path / "k.cubin"),
                          str(s.source_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "warning" not in run.stderr, run.stderr


@needs_nvcc
@pytest.mark.parametrize("name", sample_names())
def test_launched_kernels_instantiate(name, tmp_path):
    """Taking each launched name expression's address makes nvcc find (and instantiate) it."""
    s = sample(name)
    wrapper = tmp_path / "instantiate.cu"
    refs = ", ".join(f"(void *){k}" for k in kernel_names(s))
    wrapper.write_text(f'#include "{s.source_path}"\n'
                       f"void *gmprof_launched_kernels[] = {{{refs}}};\n")
    defines = [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in s.driver.defines.items()]
    run = subprocess.run([NVCC, "-cubin", "-arch=sm_90", *defines, "-o", str(tmp_path / "k.cubin"),
                          str(wrapper)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("name", sample_names())
def test_driver_protocol(name):
    s = sample(name)
    d = s.driver
    assert s.source_path.is_file()
    assert set(d.sizes) == set(SIZES)
    assert d.outputs and d.description
    params = kernel_params(s.source_path.read_text())
    for launch in (lc for size in d.sizes.values() for lc in d.launches(size)):
        assert base_name(launch.kernel) in params, f"{launch.kernel} is not a __global__ of {name}"


@pytest.mark.parametrize("size_name", [pytest.param(n, marks=pytest.mark.slow) if n == "large"
                                       else n for n in SIZES])
@pytest.mark.parametrize("name", sample_names())
def test_launches_fit_arrays_and_kernels(name, size_name):
    s = sample(name)
    d = s.driver
    size = d.sizes[size_name]
    arrays = d.arrays(size, np.random.default_rng(0))
    params = kernel_params(s.source_path.read_text())
    assert set(d.outputs) <= set(arrays)
    for key, a in arrays.items():
        assert isinstance(a, np.ndarray) and a.flags.c_contiguous and a.size > 0, key
    launches = d.launches(size)
    assert launches
    used = set()
    for launch in launches:
        kernel = base_name(launch.kernel)
        where = f"{name}/{size_name}: {launch.kernel}"
        assert len(launch.args) == len(params[kernel]), f"{where}: argument count"
        for arg, (ctype, pointer) in zip(launch.args, params[kernel]):
            if pointer:
                assert isinstance(arg, str) and arg in arrays, f"{where}: {arg!r} is no array"
                used.add(arg)
                if ctype in C_TYPES:
                    dtype, inner = C_TYPES[ctype]
                    assert arrays[arg].dtype == dtype, f"{where}: {arg} is {arrays[arg].dtype}"
                    assert arrays[arg].size % inner == 0, f"{where}: {arg} is not {ctype}s"
            else:
                dtype, _ = C_TYPES[ctype]
                assert isinstance(arg, np.generic) and arg.dtype == dtype, \
                    f"{where}: scalar {arg!r} for a {ctype} parameter"
        grid, block = launch.grid3, launch.block3
        assert min(grid) >= 1 and min(block) >= 1, where
        assert block[0] * block[1] * block[2] <= 1024, where
        assert grid[1] < 65536 and grid[2] < 65536, where
        assert 0 <= launch.shared_mem <= MAX_STATIC_SHARED, where
    assert set(d.outputs) <= used, f"{name}: an output is never passed to a kernel"
