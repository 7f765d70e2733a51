"""Utility metrics of lattice nodes, computed on the frequency set exactly as metrics.py computes them
for the final result (definitions.md): discernibility, generalization height, NCP, non-uniform entropy.

A node's records in failing classes are the ones suppressed; they count N each in discernibility,
1 per cell in height and NCP, and log2(N) - log2(count of the leaf) per cell in entropy.

Each metric also gives lower bounds used to prune the search for the optimum when suppression makes
the metric non-monotonic:
- ``level_bound``: a lattice-shaped array; the entry of a node bounds the metric of that node and of
  every generalization of it (height, NCP, entropy: the node's loss with nothing suppressed, since a
  suppressed cell costs at least as much as any generalized one and generalizing never lowers a
  cell's loss);
- ``class_bound``: from an evaluated node, a bound for it and all its generalizations
  (discernibility: sum over records of min(N, max(|E|, k)), as k-Optimize's lower bound).
"""

from __future__ import annotations

import math

import numpy as np

from ..measure.metrics import ncp_by_label
from ..model.hierarchy import Hierarchy
from .lattice import Lattice, NodeClasses, NodeEvaluator

METRIC_NAMES = ("discernibility", "height", "ncp", "entropy")
# the key of each metric in Result.metrics (engine/measure/metrics.py)
REPORT_KEYS = {"discernibility": "discernibility", "height": "generalization_height", "ncp": "ncp",
               "entropy": "non_uniform_entropy"}
METRIC_HELP = ("utility metric to minimise: discernibility (sum of |EC|^2 + suppressed x N), height "
               "(mean level/height per cell), ncp (normalized certainty penalty) or entropy (non-uniform)")


class NodeMetric:
    name: str
    exact_int = False

    def value(self, node: NodeClasses) -> float:
        raise NotImplementedError

    def level_bound(self, lattice: Lattice) -> np.ndarray | None:
        return None

    def class_bound(self, node: NodeClasses) -> float:
        return -math.inf


class Discernibility(NodeMetric):
    name = "discernibility"
    exact_int = True

    def __init__(self, n: int, k_min: int, persons: bool = False):
        self.n = int(n)
        self.k_min = max(int(k_min), 1)
        # with a person id a class may lose some of its records (persons removed through another class), so a
        # record's cost at a generalization is bounded by n/2, not n (see class_bound)
        self.cap = self.n // 2 if persons else self.n

    def value(self, node: NodeClasses) -> int:
        sizes = node.sizes
        if node.kept is not None:  # persons counted: each class publishes the records of its persons left
            kept = node.kept
        else:
            kept = sizes if node.failing is None else sizes[~node.failing]
        return int(np.dot(kept, kept)) + node.outliers * self.n

    def class_bound(self, node: NodeClasses) -> int:
        """A lower bound of the value of the node and of every generalization: each record of a class of size s
        costs at least min(max(s, k), n) (kept, in a class holding its class; or suppressed, n). With a person id
        j of a class's records may be suppressed while the rest stay: they cost j·n + (s-j)·max(s-j, k), which is
        at least s·min(max(s, k), n/2) for every j (the worst j is s - n/2), so the cap is n/2 then."""
        s = node.sizes
        return int(np.dot(s, np.minimum(np.maximum(s, self.k_min), self.cap)))


class CellLoss(NodeMetric):
    """A loss that is a sum over cells of a value of the cell's label (height, NCP, entropy)."""

    def __init__(self, name: str, evaluator: NodeEvaluator, per_label: list[list[np.ndarray]],
                 totals: list[np.ndarray], suppressed_cell: float, scale: float):
        self.name = name
        self.evaluator = evaluator
        self.per_label = per_label  # [j][level][label] loss of one record's cell
        self.totals = totals  # [j][level]: sum over all records, nothing suppressed
        self.suppressed_cell = suppressed_cell
        self.scale = scale

    def value(self, node: NodeClasses) -> float:
        total = 0.0
        for j, lv in enumerate(node.levels):
            total += self.totals[j][lv]
        if node.outliers:
            assert node.failing is not None  # outliers are counted from the failing classes
            if node.kept is not None:  # persons counted: a class's suppressed records share its labels
                gone = node.sizes - node.kept
                which = np.flatnonzero(gone)
                sizes = gone[which].astype(float)
            else:
                which = np.flatnonzero(node.failing)
                sizes = node.sizes[which].astype(float)
            extra = 0.0
            for j, lv in enumerate(node.levels):
                labels = self.evaluator.labels(node, j, which)
                extra += float(np.dot(sizes, self.suppressed_cell - self.per_label[j][lv][labels]))
            total += extra
        return total * self.scale

    def level_bound(self, lattice: Lattice) -> np.ndarray:
        grid = np.zeros(lattice.shape)
        for j, tot in enumerate(self.totals):
            shape = [1] * lattice.q
            shape[j] = len(tot)
            grid = grid + np.asarray(tot, dtype=float).reshape(shape)
        return grid * self.scale


def make_metric(name: str, evaluator: NodeEvaluator, hierarchies: list[Hierarchy], numeric: list[bool],
                n: int, k_min: int = 1) -> NodeMetric:
    if name == "discernibility":
        return Discernibility(n, k_min, persons=evaluator.judge is not None)
    counts = evaluator.counts
    q = len(hierarchies)
    per_label: list[list[np.ndarray]] = []
    totals: list[np.ndarray] = []
    for j, h in enumerate(hierarchies):
        leaf_count = np.bincount(evaluator.freq_codes[:, j], weights=counts, minlength=len(h.leaves))
        present = leaf_count > 0
        pl, tot = [], []
        for lv in range(h.level_count):
            label_of_leaf = h.maps[lv]
            if name == "height":
                vals = np.full(len(h.labels[lv]), (lv / h.height) if h.height else 0.0)
            elif name == "ncp":
                vals = np.asarray(ncp_by_label(h, lv, present, numeric[j]), dtype=float)
            elif name == "entropy":
                label_count = np.bincount(label_of_leaf, weights=leaf_count, minlength=len(h.labels[lv]))
                with np.errstate(divide="ignore"):
                    vals = np.log2(label_count)
                # per cell: log2 count(label) - log2 count(leaf); the leaf part is added per leaf
                leaf_part = np.zeros(len(h.leaves))
                leaf_part[present] = np.log2(leaf_count[present])
                cell = np.where(present, vals[label_of_leaf] - leaf_part, 0.0) if lv else np.zeros(len(h.leaves))
                pl.append(np.where(np.isfinite(vals), vals, 0.0))
                tot.append(float(np.dot(leaf_count, cell)))
                continue
            else:
                raise ValueError(f"unknown metric {name!r}")
            pl.append(vals)
            tot.append(float(np.dot(leaf_count, vals[label_of_leaf])))
        per_label.append(pl)
        totals.append(np.array(tot))
    if name == "entropy":
        # a suppressed cell costs log2 N - log2 count(leaf): relative to a kept cell, log2 N - log2 count(label)
        return CellLoss(name, evaluator, per_label, totals, math.log2(n) if n else 0.0, 1.0)
    cells = n * q
    return CellLoss(name, evaluator, per_label, totals, 1.0, 1.0 / cells if cells else 0.0)
