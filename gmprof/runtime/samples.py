"""Run a sample (samples/NAME/driver.py) through gmprof: every launch, profiled or native, then
the sample's own numeric check against its numpy reference.

Returns the reports (one per profiled kernel, merged over its launches) and the check's verdict.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from gmprof import timing
from gmprof.driver import Sample, load_sample
from gmprof.errors import OptionError

from .session import Profiler


@dataclass
class SampleRun:
    sample: Sample
    size: str
    reports: dict = field(default_factory=dict)  # kernel name expression -> Report
    check_error: str | None = None
    arrays: dict = field(default_factory=dict)
    checked: bool = True  # False: the sample's own check was skipped (check=False)

    @property
    def ok(self) -> bool:
        return self.check_error is None


def sample_profiler(sample: Sample, backend: str = "auto") -> Profiler:
    defines = {k: (None if v is None else str(v)) for k, v in sample.driver.defines.items()}
    return Profiler(sample.source_path, defines=defines, include_dirs=[sample.directory],
                    backend=backend)


def first_profiled_launch(sample: Sample, size: str, profiler: Profiler, arrays=None,
                          seed: int = 0) -> tuple:
    """(launch, arguments) of the sample's first profiled launch at a size, the arrays where
    the profiler's backend runs (the GPU's memory on a GPU): what the bench scripts time
    launch by launch. arrays: the driver's arrays made before (copied, never changed)."""
    drv = sample.driver
    params = drv.sizes[size]
    if arrays is None:
        arrays = drv.arrays(params, np.random.default_rng(seed))
    on = {k: profiler.backend.to_device(v) if isinstance(v, np.ndarray) else v
          for k, v in arrays.items()}
    launch = next(x for x in drv.launches(params) if x.profile)
    return launch, [on[a] if isinstance(a, str) else a for a in launch.args]


def run_sample(sample: Sample | str, size: str = "small", mode=None, backend: str = "auto",
               repeat: int = 0, seed: int = 0, profiler: Profiler | None = None,
               check: bool = True, max_profiled: int | None = None,
               on_launch=None, select=None, initial=None) -> SampleRun:
    """max_profiled: profile at most this many launches (the rest run natively).
    select: a LaunchSelection (gmprof/selection.py); launches it does not take run natively.
    initial: the arrays drv.arrays made for this size and seed before (a benchmark running
    one sample in many modes makes them once): copied, never changed.
    on_launch(index, launch, done): called before (done=False) and after (done=True) each
    launch, for a progress display."""
    if not isinstance(sample, Sample):
        sample = load_sample(sample)
    drv = sample.driver
    if size not in drv.sizes:
        raise OptionError(f"sample {sample.name} has no size {size!r} "
                          f"(sizes: {', '.join(drv.sizes)})")
    params = drv.sizes[size]
    with timing.phase("sample arrays"):
        if initial is not None:
            arrays = {k: v.copy() if isinstance(v, np.ndarray) else v
                      for k, v in initial.items()}
        else:
            arrays = drv.arrays(params, np.random.default_rng(seed))
        # (the reference's copy of the inputs: none when there is no check)
        inputs = {k: v.copy() for k, v in arrays.items()} if check else None
    # the sample's numpy reference needs only the inputs: it is computed beside the launches
    # (numpy leaves the GIL for its loops), not after them (spmv large: seconds)
    reference = _Beside(drv.reference, params, inputs) if check else None
    prof = profiler or sample_profiler(sample, backend)
    run = SampleRun(sample, size, arrays=arrays, checked=check)
    # On a GPU the arrays stay on the device for the whole sequence, as the sample's own CUDA
    # program keeps them: no launch copies them in or out (jcb_v1 large: 2 x 64 MB, 50 times)
    device = prof.backend.name == "gpu"
    on = {k: prof.backend.to_device(v) if device and isinstance(v, np.ndarray) else v
          for k, v in arrays.items()}
    profiled = 0
    for index, launch in enumerate(drv.launches(params)):
        if on_launch is not None:
            on_launch(index, launch, False)
        args = [on[a] if isinstance(a, str) else a for a in launch.args]
        if launch.profile and (max_profiled is None or profiled < max_profiled) and \
                (select is None or select.take(launch.kernel)):
            profiled += 1
            report = prof.launch(launch.kernel, launch.grid3, launch.block3, args,
                                 launch.shared_mem, mode=mode, repeat=repeat,
                                 keep_on_device=device)
            with timing.phase("merge"):
                if launch.kernel in run.reports:
                    run.reports[launch.kernel].merge(report)
                else:
                    run.reports[launch.kernel] = report
        else:
            prof.run_native(launch.kernel, launch.grid3, launch.block3, args, launch.shared_mem)
        if on_launch is not None:
            on_launch(index, launch, True)
    if device:
        with timing.phase("read back"):
            for report in run.reports.values():
                report.to_host()  # merged on the GPU, read back once
        for k, v in on.items():
            if v is not arrays[k]:
                np.copyto(arrays[k], prof.backend.to_host(v).reshape(arrays[k].shape))
    if check:
        with timing.phase("self-check"):
            expected = reference.result()
            try:
                drv.check(params, {k: arrays[k] for k in expected}, expected)
            except AssertionError as exc:
                run.check_error = str(exc).strip().splitlines()[0] if str(exc).strip() \
                    else "mismatch"
    return run


class _Beside:
    """fn(*args) run on a thread from now; result() waits for it (and raises what it
    raised). A reference that fails fails the check as it did when it ran after the launches."""

    def __init__(self, fn, *args):
        self._value, self._error = None, None

        def work():
            try:
                self._value = fn(*args)
            except BaseException as exc:  # re-raised on the caller's thread
                self._error = exc

        self._thread = threading.Thread(target=work, name="gmprof-reference", daemon=True)
        self._thread.start()

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value
