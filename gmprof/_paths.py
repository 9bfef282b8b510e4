"""Where the data directories (grammar/, runtime_cu/) are, installed or in a source checkout.

Installed, they are packages inside gmprof; in a checkout they sit beside gmprof/ at the top of
the repository. Everything that needs a file from them asks here.
"""
from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    for candidate in (_PKG / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"gmprof installation is incomplete: no {name}/ directory")


def grammar_file(name: str = "cuda.lark") -> Path:
    return data_dir("grammar") / name


def runtime_cu_dir() -> Path:
    return data_dir("runtime_cu")
