"""gmprof: fine-grained memory profiling of CUDA kernels by source instrumentation.

The pipeline: frontend (CUDA-C -> segments -> AST), passes (analysis, planning, rewriting),
runtime (compile, launch, read counters back; GPU through CuPy or the CPU backend) and report.
docs/architecture.md follows one access through every stage.
"""
from __future__ import annotations

from . import timing  # noqa: F401 (first: its clock starts with the process's imports)
from .version import __version__  # noqa: F401 (gmprof.__version__)

from . import api
from .api import RawKernel, RawModule, load, profile
from .errors import CheckWarning, Diagnostic, GmprofError
from .report.model import Report

__all__ = ["profile", "load", "RawKernel", "RawModule", "Report", "GmprofError", "Diagnostic",
           "CheckWarning", "api"]
