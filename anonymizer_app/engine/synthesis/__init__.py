"""Synthetic data: the synthesizers' registry (base.py) and the modules that register into it."""

from . import aim, cart, mst  # noqa: F401  (each registers its synthesizer)
from .base import (
    NO_GUARANTEE,
    SYNTHESIZERS,
    NumericBins,
    SynthesisCancelled,
    SynthesisContext,
    SynthesisOutcome,
    Synthesizer,
    get_synthesizer,
)

__all__ = ["NO_GUARANTEE", "SYNTHESIZERS", "NumericBins", "SynthesisCancelled", "SynthesisContext",
           "SynthesisOutcome", "Synthesizer", "get_synthesizer"]
