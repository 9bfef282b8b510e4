"""A module's file-scope variables (`__device__`, `__managed__`, `__constant__`) around a launch.

Stage: host runtime, around a profiled launch. Input: the native module, the instrumented
module, the names of the user's file-scope variables and the backend. Output: the variables'
bytes (snapshots), the names whose bytes differ between the two runs, and restores.

The native and the instrumented kernels live in separate modules, each with its own copy of
every `__device__` variable. A kernel that keeps state in one (a counter, a work queue) would
otherwise start its instrumented run from a different state than its native run, and the timing
repetitions would advance the native module's state past what one launch leaves. So the
instrumented module starts from the native module's bytes, the two are compared after the run
(as array arguments are), and the native module's state after the profiled launch is put back
after the timing repetitions.
"""
from __future__ import annotations


def _read(backend, module, name):
    try:
        addr, size = module.get_global(name)
    except Exception:  # a variable the compiler dropped, or one the backend cannot see
        return None
    if not size:
        return None
    try:
        return addr, bytes(backend.read_address(addr, size))
    except Exception:
        return None


def snapshot(backend, module, names) -> dict:
    """{name: (address, bytes)} of the variables this backend can read."""
    out = {}
    for name in names:
        got = _read(backend, module, name)
        if got is not None:
            out[name] = got
    return out


def copy_into(backend, source: dict, module) -> None:
    """Give `module`'s variables the bytes of a snapshot of another module's."""
    for name, (_, data) in source.items():
        try:
            addr, size = module.get_global(name)
        except Exception:
            continue
        if size == len(data):
            backend.copy_to_address(addr, data)


def changed(now: dict, initial: dict | None) -> dict:
    """The variables of a snapshot whose bytes differ from the module's as loaded (all of
    them when that is unknown). The instrumented module is given only these: a variable no run
    has changed holds the same initial value in both modules, except where the value is an
    address into the module itself (a table of __device__ function pointers: the native
    module's code is not the instrumented module's, and calling it faults on a GPU)."""
    if initial is None:
        return now
    return {n: v for n, v in now.items() if n not in initial or initial[n][1] != v[1]}


def restore(backend, saved: dict) -> None:
    for _, (addr, data) in saved.items():
        backend.copy_to_address(addr, data)


def differing(native: dict, inst: dict) -> list[str]:
    return [n for n, (_, data) in native.items() if n in inst and inst[n][1] != data]


__all__ = ["snapshot", "copy_into", "restore", "differing"]
