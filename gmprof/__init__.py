"""gmprof: fine-grained memory profiling of CUDA kernels by source instrumentation.

The pipeline: frontend (CUDA-C -> segments -> AST), passes (analysis, planning, rewriting),
runtime (compile, launch, read counters back; GPU through CuPy or the CPU backend) and report.
"""
from __future__ import annotations

import os as _os

# In a source checkout grammar/, passes/ and runtime_cu/ sit beside this package rather than in it
# (pyproject maps them in when installing). Let `gmprof.passes` resolve there too, so the tests and
# tools run the same from a checkout as from an installed copy.
_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_os.path.dirname(__file__), "passes")) and _os.path.isfile(
    _os.path.join(_root, "passes", "__init__.py")
):
    __path__.append(_root)  # type: ignore[name-defined]

__version__ = "0.1.0"

from . import api  # noqa: E402  (after the __path__ set-up above)
from .api import RawKernel, RawModule, profile  # noqa: E402
from .errors import Diagnostic, GmprofError  # noqa: E402
from .report.model import Report  # noqa: E402

__all__ = ["profile", "RawKernel", "RawModule", "Report", "GmprofError", "Diagnostic", "api"]
