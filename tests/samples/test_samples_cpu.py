"""Every sample's small size, run on gmprof's CPU backend, matches its reference; twice in a row it
gives the same bits (the kernels are deterministic)."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from sample_support import cpu_source, kernel_names, sample, sample_names

SEED = 3


def _compile(s, options):
    """Compile through the runtime's Backend interface (gmprof.runtime.backend), which wraps
    gmprof.runtime.cpu.CpuModule; returns (module, to_device, to_host)."""
    if importlib.util.find_spec("gmprof.runtime.cpu") is None:
        pytest.skip("gmprof has no CPU backend (gmprof/runtime/cpu.py) yet")
    if importlib.util.find_spec("gmprof.runtime.cpu_backend") is None:
        from gmprof.runtime.cpu import CpuModule

        module = CpuModule(cpu_source(s), kernel_names(s), options=list(options),
                           filename=str(s.source_path))
        return module, lambda a: a, lambda a: a
    from gmprof.runtime.backend import get_backend

    backend = get_backend("cpu")
    module = backend.compile(cpu_source(s), kernel_names(s), options=options,
                             filename=str(s.source_path))
    return module, backend.to_device, backend.to_host


def run_small(name):
    """Run the small size once; returns (driver, size, inputs, arrays after the launches)."""
    s = sample(name)
    d = s.driver
    size = d.sizes["small"]
    inputs = d.arrays(size, np.random.default_rng(SEED))
    options = tuple(f"-D{k}" if v is None else f"-D{k}={v}" for k, v in d.defines.items())
    module, to_device, to_host = _compile(s, options)
    device = {k: to_device(v.copy()) for k, v in inputs.items()}
    for launch in d.launches(size):
        args = tuple(device[a] if isinstance(a, str) else a for a in launch.args)
        module.launch(launch.kernel, launch.grid3, launch.block3, args,
                      shared_mem=launch.shared_mem)
    return d, size, inputs, {k: to_host(v) for k, v in device.items()}


@pytest.mark.parametrize("name", sample_names())
def test_small_size_matches_reference(name):
    d, size, inputs, arrays = run_small(name)
    d.check(size, {k: arrays[k] for k in d.outputs}, d.reference(size, inputs))


@pytest.mark.parametrize("name", ["co", "em_v1", "spmv", "nbody_shared"])
def test_runs_are_bitwise_identical(name):
    first = run_small(name)[3]
    second = run_small(name)[3]
    for k in first:
        assert first[k].tobytes() == second[k].tobytes(), k
