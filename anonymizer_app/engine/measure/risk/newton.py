"""The two-dimensional Newton-Raphson solver ARX's population-uniqueness models use (the library
de.linearbits.newtonraphson 0.0.1 as ARX 3.9.2 configures it, ARXSolverConfiguration), so that an estimate
converges here exactly where it converges in ARX.

ARX's defaults, followed step for step:
- accuracy 1e-6: a point is a root when both equations are within 1e-6 of 0 (absolute);
- tries: first from the model's start point, then from 16 prepared points (d1, d2) with d1, d2 running
  0, 0.33, 0.66, 0.99 (accumulated in floating point, as ARX builds them); a try ends after 1001
  iterations, or when the point leaves the model's constraint or becomes NaN;
- after each step, once the last prepared point has been taken, the search ends (so the 16th prepared
  point is only evaluated where it starts: the library's order of checks, kept);
- the total budget of (16 + 1) · 1000 iterations never binds under these rules.
ARX also stops a try after 100 ms and the search after 1 s; those clocks are left out here (no result
may depend on the machine's speed); on the cases of the tests the iteration limits end every search
first.

Arithmetic: an operation that raises in Python where Java returns ±∞ or NaN (division by 0, overflow,
a fractional power of a negative number) ends the try, as the NaN it leads to does in ARX.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

ACCURACY = 1e-6
ITERATIONS_PER_TRY = 1000


def _prepared_starts() -> list[tuple[float, float]]:
    starts = []
    d1 = 0.0
    while d1 < 1.0:
        d2 = 0.0
        while d2 < 1.0:
            starts.append((d1, d2))
            d2 += 0.33
        d1 += 0.33
    return starts


PREPARED_STARTS: tuple[tuple[float, float], ...] = tuple(_prepared_starts())

Vector = tuple[float, float]
Matrix = tuple[float, float, float, float]  # (∂f1/∂x, ∂f1/∂y, ∂f2/∂x, ∂f2/∂y)


@dataclass(frozen=True)
class Solution:
    """A root (``x``, ``y``), or None when no try reached one; ``tries`` and ``iterations`` as spent."""

    root: Vector | None
    tries: int
    iterations: int


def solve(function: Callable[[Vector], tuple[Vector, Matrix | Callable[[], Matrix]]], start: Vector,
          constraint: Callable[[Vector], bool] | None = None) -> Solution:
    """A root of ``function``, which returns at a point the two equations' values and their Jacobian (or a
    function computing it)."""
    iterations_total = 0
    prepared = 0
    tries = 0
    while True:
        tries += 1
        if tries == 1:
            point = start
        else:
            point = PREPARED_STARTS[prepared]
            prepared += 1
        iterations = 0
        while True:
            iterations_total += 1
            try:
                (f1, f2), jacobian = function(point)
                if abs(f1) <= ACCURACY and abs(f2) <= ACCURACY:
                    return Solution(point, tries, iterations_total)
                # a model whose Jacobian is computed apart gives it as a function, evaluated only now (as in
                # the library: a root is returned before its derivatives are)
                a, b, c, d = jacobian() if callable(jacobian) else jacobian
                inv = 1.0 / (a * d - b * c)
                point = (point[0] - (d * inv * f1 + -b * inv * f2), point[1] - (-c * inv * f1 + a * inv * f2))
            except (ArithmeticError, ValueError):
                point = (math.nan, math.nan)
            if prepared == len(PREPARED_STARTS):
                return Solution(None, tries, iterations_total)
            if constraint is not None and not constraint(point):
                break
            if math.isnan(point[0]) or math.isnan(point[1]):
                break
            if iterations >= ITERATIONS_PER_TRY:
                break
            iterations += 1
