"""Statistical disclosure control methods: the registry (sdc/base.py) and, imported below, every method module.

A method module imports base, never this package."""

from __future__ import annotations

from .base import METHODS, SdcContext, SdcMethod, SdcOutcome, get_method, register

__all__ = ["METHODS", "SdcContext", "SdcMethod", "SdcOutcome", "get_method", "register"]

# Registration happens on import of each method module (one line per module, added with the module).
from . import (
    local_suppression,  # noqa: E402,F401  (registers local_suppression)
    microaggregation,  # noqa: E402,F401  (registers microaggregation)
    noise,  # noqa: E402,F401  (registers noise addition)
    pram,  # noqa: E402,F401  (registers PRAM)
    rank_swapping,  # noqa: E402,F401  (registers rank swapping)
    top_bottom_coding,  # noqa: E402,F401  (registers top/bottom coding)
)
