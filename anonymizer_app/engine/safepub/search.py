"""SafePub's search: a walk down the generalization lattice, every move drawn by the exponential mechanism.

As in Bild, Kuhn & Prasser (PoPETs 2018, Algorithm 1) and ARX's ``DataDependentEDDPAlgorithm``: the first
pivot is the top of the lattice (every QI at its root); at each of ``steps`` steps the predecessors of the
pivot (one QI one level lower) join the candidates, the pivot leaves them, and the next pivot is drawn
from the candidates by the exponential mechanism on their scores.

Choosing the node to publish: ARX returns the pivot with the best score, a comparison of exact,
data-dependent scores that no privacy budget pays for. We draw it instead from the pivots by one more
exponential mechanism, so the search is ``steps + 1`` draws of ε_search / (steps + 1) each, ε_search-DP by
sequential composition (definitions.md, "SafePub"). A walk that runs out of candidates (a small lattice)
stops early and spends less.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .mechanism import Draws, exponential_mechanism

Node = tuple[int, ...]


@dataclass
class Walk:
    chosen: Node
    pivots: list[Node]  # in the order drawn, the top first
    scores: dict[Node, float] = field(default_factory=dict)  # every node scored (for the report's figures)
    steps_taken: int = 0
    epsilon_per_draw: float = 0.0
    draws: int = 0

    @property
    def epsilon_spent(self) -> float:
        return self.draws * self.epsilon_per_draw


def predecessors(node: Node) -> list[Node]:
    return [node[:j] + (lv - 1,) + node[j + 1:] for j, lv in enumerate(node) if lv > 0]


def walk(heights: list[int], score: Callable[[Node], float], steps: int, epsilon_search: float,
         rng: Draws, progress: Callable[[float, str], None] | None = None) -> Walk:
    """The walk and the node it publishes."""
    per_draw = epsilon_search / (steps + 1)
    scores: dict[Node, float] = {}

    def scored(node: Node) -> float:
        if node not in scores:
            scores[node] = score(node)
        return scores[node]

    pivot: Node = tuple(int(h) for h in heights)
    scored(pivot)
    pivots = [pivot]
    candidates: dict[Node, None] = {pivot: None}  # insertion-ordered: a seeded run draws the same walk
    draws = 0
    taken = 0
    for step in range(1, steps + 1):
        for node in predecessors(pivot):
            if node not in candidates:
                scored(node)
                candidates[node] = None
        candidates.pop(pivot, None)
        if not candidates:
            break
        listed = list(candidates)
        pivot = listed[exponential_mechanism(np.array([scores[c] for c in listed]), per_draw, rng)]
        draws += 1
        taken = step
        pivots.append(pivot)
        if progress is not None:
            progress(step / steps, f"SafePub: step {step} of {steps}")
    distinct = list(dict.fromkeys(pivots))
    chosen = distinct[exponential_mechanism(np.array([scores[p] for p in distinct]), per_draw, rng)]
    draws += 1
    return Walk(chosen, pivots, scores, taken, per_draw, draws)
