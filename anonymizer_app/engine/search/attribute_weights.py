"""Attribute weights outside the lattice searches' metrics (issue 30): Mondrian's cut choice and the clustering
distances (definitions.md, "Attribute weights").

The run's ``weights`` option is the lattice searches' ('qi=w,qi=w', w from 0 to 1, QIs not named 0.5; parsed by
lattice_metrics.parse_weights with the same messages). Each QI's weight becomes a factor w_j * q / sum(w), the
scaling the weighted height and NCP use: equal weights give factor 1 everywhere, and then no factor at all
(``None``), so an unweighted run takes exactly today's arithmetic.

- Mondrian (ARX has no weighted Mondrian; this is our rule): a partition is cut along the QI with the largest
  factor x normalized width that has an allowable cut; a QI of weight 0 comes after every weighted one (by its
  width), so it is cut only when no other QI can be.
- Clustering (k-member, OKA): Byun et al.'s record/centroid distance becomes the weighted sum over the QIs of
  factor x that QI's term (numeric |v1 - v2| / span, categorical height of the LCA / height of the tree).
"""

from __future__ import annotations

import numpy as np

from ..algorithms.base import Problem
from ..privacy import Parameter
from .lattice_metrics import WEIGHTS_HELP, parse_weights

# one option for every algorithm that takes weights (the lattice searches' help names them all): one CLI flag
WEIGHTS = Parameter("weights", str, "", WEIGHTS_HELP, label="Attribute weights")


def weight_factors(weights: np.ndarray | None) -> np.ndarray | None:
    """Per QI w_j * q / sum(w) (equal weights: 1 each); None for None (unweighted)."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=float)
    return w * len(w) / float(w.sum())


def problem_factors(problem: Problem) -> np.ndarray | None:
    """The run's weight factors (None: no weights, or all equal); InputError naming the QI or value at fault."""
    return weight_factors(parse_weights(problem.options.get("weights"), list(problem.table.qi), None))
