"""Where the data directories (grammar/, runtime_cu/, samples/) are, installed or in a checkout.

Installed, they are inside the gmprof package; in a source checkout they sit at the top of the
repository (they are stages of their own, see docs/architecture.md) and gmprof/ holds a
symbolic link to each, so the package reads the same paths either way. Everything that needs a
file from them asks here.
"""
from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    candidate = _PKG / name
    if not candidate.is_dir():
        raise FileNotFoundError(f"gmprof installation is incomplete: no {name}/ directory")
    return candidate.resolve()


def grammar_file(name: str = "cuda.lark") -> Path:
    return data_dir("grammar") / name


def runtime_cu_dir() -> Path:
    return data_dir("runtime_cu")


def samples_dir() -> Path:
    """The samples (samples/NAME/ with a driver.py), which `gmprof bench` runs."""
    return data_dir("samples")
