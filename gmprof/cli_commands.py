"""Subcommands beyond `parse`, registered as their stages land."""
from __future__ import annotations


def register(sub, add_frontend_options) -> None:
    pass
