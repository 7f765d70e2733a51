"""Statistical disclosure control methods: the registry (sdc/base.py) and, imported below, every method module.

A method module imports base, never this package."""

from __future__ import annotations

from .base import METHODS, SdcContext, SdcMethod, SdcOutcome, get_method, register

__all__ = ["METHODS", "SdcContext", "SdcMethod", "SdcOutcome", "get_method", "register"]

# Registration happens on import of each method module (one line per module, added with the module).
from . import microaggregation  # noqa: E402,F401  (registers microaggregation)
from . import noise  # noqa: E402,F401  (registers noise addition)
from . import pram  # noqa: E402,F401  (registers PRAM)
from . import local_suppression  # noqa: E402,F401  (registers local_suppression)
from . import top_bottom_coding  # noqa: E402,F401  (registers top/bottom coding)
from . import rank_swapping  # noqa: E402,F401  (registers rank swapping)
