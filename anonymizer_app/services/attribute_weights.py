"""The run's attribute weights as pages show them (issue 30): the lattice page and its node table, the comparison
of algorithms and the side-by-side page of two solutions. The weights are an algorithm option ('qi=w,qi=w',
engine.search.lattice_metrics.parse_weights: QIs not named weigh 0.5)."""

from __future__ import annotations

from .. import engine
from ..engine.search.lattice_metrics import DEFAULT_WEIGHT, parse_weights


def takes_weights(algorithm: str) -> bool:
    """Does the algorithm take the ``weights`` option (the lattice searches, Mondrian, k-member, OKA)?"""
    info = engine.ALGORITHMS.get(algorithm)
    return info is not None and any(p.name == "weights" for p in info.options)


def check(text: str, qi: list[str]) -> str:
    """The weights text, checked against the QIs (InputError naming the QI or value at fault), stripped."""
    text = str(text or "").strip()
    parse_weights(text, qi, None)
    return text


def weight_rows(text: object, qi: list[str]) -> list[dict]:
    """Per QI its weight (a number, and as shown), or [] when no weights were given. Equal weights are shown
    too (the run was unweighted in effect: every metric and cut as without them)."""
    raw = str(text or "").strip()
    if not raw:
        return []
    given = {}
    for part in raw.split(","):
        name, _, value = part.partition("=")
        if name.strip():
            given[name.strip()] = float(value)
    return [{"qi": q, "weight": given.get(q, DEFAULT_WEIGHT), "text": f"{given.get(q, DEFAULT_WEIGHT):g}",
             "named": q in given} for q in qi]


def weights_text(text: object, qi: list[str]) -> str:
    """'age 1 · sex 0.1 · race 0.5' (every QI, the unnamed at 0.5), or '' without weights."""
    return " · ".join(f"{r['qi']} {r['text']}" for r in weight_rows(text, qi))
