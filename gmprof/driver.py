"""The sample-driver protocol: how a directory in samples/ says what to run and how to check it.

A sample is a directory `samples/NAME/` holding its kernels (`*.cu`) and `driver.py`, which defines
`DRIVER`, an instance of a `Driver` subclass. The runtime (CPU or GPU backend) and the benchmark
read only this protocol, so a driver imports nothing from gmprof but this module and numpy.

    class Transpose(Driver):
        source = "transpose.cu"
        outputs = ("odata",)
        sizes = {"small": {"n": 64}, "large": {"n": 4096}}

        def arrays(self, size, rng):
            n = size["n"]
            return {"idata": rng.random((n, n), dtype=np.float32),
                    "odata": np.zeros((n, n), np.float32)}

        def launches(self, size):
            n = size["n"]
            return [Launch("transpose", grid=(n // 16, n // 16), block=(16, 16),
                           args=("odata", "idata", np.int32(n), np.int32(n)))]

        def reference(self, size, inputs):
            return {"odata": inputs["idata"].T.copy()}

    DRIVER = Transpose()
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

Dim3 = tuple[int, int, int]


def dim3(value: int | tuple[int, ...]) -> Dim3:
    """Normalise 7, (7,), (7, 2) or (7, 2, 1) to a 3-tuple, as CUDA's dim3 does."""
    if isinstance(value, (int, np.integer)):
        return (int(value), 1, 1)
    vals = tuple(int(v) for v in value)
    if not 1 <= len(vals) <= 3:
        raise ValueError(f"a launch dimension has 1 to 3 components, not {len(vals)}")
    return vals + (1,) * (3 - len(vals))  # type: ignore[return-value]


@dataclass(frozen=True)
class Launch:
    """One kernel launch of a sample.

    kernel: the kernel's name, or a name expression for a template kernel ("matmul<16>").
    args: one entry per kernel parameter, in order: the name (str) of an array in the sample's
      arrays, or a numpy scalar of the parameter's C type (np.int32(n), np.float32(x)).
    profile: False for helper launches (initialisation, a second pass) that gmprof runs natively.
    """

    kernel: str
    grid: Any
    block: Any
    args: tuple
    shared_mem: int = 0
    profile: bool = True

    @property
    def grid3(self) -> Dim3:
        return dim3(self.grid)

    @property
    def block3(self) -> Dim3:
        return dim3(self.block)


class Driver:
    """Base class for sample drivers. Subclasses set the attributes and override the methods."""

    #: kernel file, relative to the sample's directory
    source: str = ""
    #: -D macro definitions the sample is compiled with (NAME -> value, or None for -DNAME)
    defines: Mapping[str, Any] = {}
    #: names of the arrays that the kernels write (compared with the reference)
    outputs: tuple[str, ...] = ()
    #: named problem sizes; "small" runs on the CPU backend in CI, "large" is the GPU size
    sizes: Mapping[str, Mapping[str, Any]] = {}
    #: tolerances for the default check (per output name, or one pair for all)
    rtol: float | Mapping[str, float] = 1e-5
    atol: float | Mapping[str, float] = 1e-6
    #: one sentence on what the sample is and where it comes from
    description: str = ""

    def arrays(self, size: Mapping[str, Any], rng: np.random.Generator) -> dict[str, np.ndarray]:
        """All arrays the launches use, inputs and outputs, as host numpy arrays."""
        raise NotImplementedError

    def launches(self, size: Mapping[str, Any]) -> list[Launch]:
        """The launches, in order. Arrays are named as in arrays()."""
        raise NotImplementedError

    def reference(self, size: Mapping[str, Any], inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Expected final value of each output, computed with numpy from copies of the inputs."""
        raise NotImplementedError

    def check(self, size: Mapping[str, Any], outputs: Mapping[str, np.ndarray],
              expected: Mapping[str, np.ndarray]) -> None:
        """Raise AssertionError when an output is off. The default compares with tolerances."""
        for name, want in expected.items():
            if np.array_equal(outputs[name], want):
                continue  # one pass; assert_allclose makes several (a 4096^2 grid: seconds)
            rtol = self.rtol[name] if isinstance(self.rtol, Mapping) else self.rtol
            atol = self.atol[name] if isinstance(self.atol, Mapping) else self.atol
            np.testing.assert_allclose(outputs[name], want, rtol=rtol, atol=atol,
                                       err_msg=f"output {name!r}")


@dataclass
class Sample:
    """A loaded sample: its directory, driver and kernel file."""

    name: str
    directory: Path
    driver: Driver
    extra: dict = field(default_factory=dict)

    @property
    def source_path(self) -> Path:
        return self.directory / self.driver.source


def load_sample(directory: str | Path) -> Sample:
    """Import samples/NAME/driver.py and return the Sample it defines."""
    directory = Path(directory)
    driver_path = directory / "driver.py"
    if not driver_path.is_file():
        from .errors import InputError

        raise InputError(f"{directory} is not a sample: it has no driver.py")
    spec = importlib.util.spec_from_file_location(f"gmprof_sample_{directory.name}", driver_path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    driver = getattr(module, "DRIVER", None)
    if not isinstance(driver, Driver):
        from .errors import InputError

        raise InputError(f"{driver_path} defines no DRIVER (an instance of gmprof.driver.Driver)")
    return Sample(directory.name, directory, driver)
