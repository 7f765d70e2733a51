"""Utility metrics of lattice nodes, computed on the frequency set exactly as metrics.py computes them
for the final result (definitions.md): discernibility, generalization height, NCP, non-uniform entropy and
ARX's Loss (MetricMDNMLoss with its defaults: gs-factor 0.5, geometric mean over the QIs) and ARX's
classification metric (MetricSDClassification, a utility-aware target: see ``Classification``).

Attribute weights (``weights``, 0..1 per QI): the cell losses (height, NCP, entropy) sum each QI's loss times
its weight, scaled so that equal weights give the unweighted figure; Loss takes the weighted geometric mean
prod (1 + loss_j)^(w_j / sum w) - 1. (ARX multiplies each factor by its weight, which only rescales the
product by a constant and leaves the optimum unchanged; with equal weights both are ARX's value.)

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

from ..errors import InputError
from ..measure.metrics import arx_loss_aggregate, arx_loss_per_qi, ncp_by_label
from ..model.hierarchy import Hierarchy
from .lattice import Lattice, NodeClasses, NodeEvaluator

METRIC_NAMES = ("discernibility", "height", "ncp", "entropy", "loss", "classification")
# the key of each metric in Result.metrics (engine/measure/metrics.py)
REPORT_KEYS = {"discernibility": "discernibility", "height": "generalization_height", "ncp": "ncp",
               "entropy": "non_uniform_entropy", "loss": "loss", "classification": "classification"}
METRIC_HELP = ("utility metric to minimise: discernibility (sum of |EC|^2 + suppressed x N), height "
               "(mean level/height per cell), ncp (normalized certainty penalty), entropy (non-uniform) or "
               "loss (ARX's Loss: geometric mean over the QIs of the share of the domain each cell covers) or "
               "classification (ARX's classification metric: the share of records whose class's majority value of "
               "the target column is not their own, suppressed records counting 1; needs --target)")
TARGET_HELP = ("the column the classification metric keeps predictable (not a quasi-identifier): a record costs 1 "
               "when its class's most frequent value of it is another one (or there is no single most frequent "
               "value), and when it is suppressed")
WEIGHTED = ("height", "ncp", "entropy", "loss")  # the metrics that take attribute weights
WEIGHTS_HELP = ("attribute weights, 'qi=w,qi=w' with w from 0 to 1 (QIs not named weigh 0.5, ARX's default); "
                "the metric (height, ncp, entropy or loss) counts each QI's loss by its weight, Mondrian cuts "
                "the QI of largest weight x width, k-member, OKA, the disk-based hybrid and MHA's refinement "
                "weigh each QI's distance")
DEFAULT_WEIGHT = 0.5
# floats of the cell losses' per-tuple suppression costs kept (CellLoss._cost): 64 MB
COST_ROOM = 8_000_000


def parse_weights(text: object, qi: list[str], metric: str | None) -> np.ndarray | None:
    """The weights of ``qi`` from 'qi=w,qi=w' (None: no weights given, or all equal, which is the unweighted
    metric). Raises InputError naming the QI or the value at fault. ``metric``: the lattice search's metric, which
    must take weights; None for the algorithms that weigh something else (Mondrian's cut choice, the clustering
    distances)."""
    raw = "" if text is None else str(text).strip()
    if not raw:
        return None
    if metric is not None and metric not in WEIGHTED:
        raise InputError(f"weights apply to the metrics {', '.join(WEIGHTED)}; {metric} counts records, not "
                         f"cells: choose another metric or leave the weights empty")
    given: dict[str, float] = {}
    for part in raw.split(","):
        if not part.strip():
            continue
        name, eq, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name:
            raise InputError(f"weights: {part.strip()!r} is not 'qi=w' (e.g. age=1,sex=0.2)")
        if name not in qi:
            raise InputError(f"weights: {name!r} is not a quasi-identifier (they are: {', '.join(qi)})")
        if name in given:
            raise InputError(f"weights: {name!r} is given twice")
        try:
            w = float(value)
        except ValueError:
            raise InputError(f"weights: the weight of {name!r} must be a number from 0 to 1, got {value!r}") from None
        if not (0.0 <= w <= 1.0):  # also refuses nan
            raise InputError(f"weights: the weight of {name!r} must be from 0 to 1, got {value}")
        given[name] = w
    weights = np.array([given.get(c, DEFAULT_WEIGHT) for c in qi], dtype=float)
    if not weights.any():
        raise InputError("weights: at least one quasi-identifier needs a weight above 0")
    if np.all(weights == weights[0]):
        return None  # equal weights: the unweighted metric, to the bit
    return weights


class NodeMetric:
    name: str
    exact_int = False
    # grows (never falls) with generalization when nothing is suppressed: the optimum without suppression is then
    # a minimal anonymous node (LatticeSearch.optimum)
    monotone = True

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
                 totals: list[np.ndarray], suppressed_cell: float, scale: float, weights: np.ndarray | None = None):
        self.name = name
        self.evaluator = evaluator
        self.per_label = per_label  # [j][level][label] loss of one record's cell
        self.totals = totals  # [j][level]: sum over all records, nothing suppressed
        self.suppressed_cell = suppressed_cell
        self.scale = scale
        # each QI's factor: its weight x q / sum of the weights (equal weights: 1 each, the unweighted sum)
        self.factors = None if weights is None else weights * len(weights) / float(np.sum(weights))
        # per (QI, level): what suppressing each frequency-set tuple's cell adds, made on first use while they
        # fit COST_ROOM floats together (an exhaustive evaluation reads every level of every QI on millions of
        # outlier classes: one gather per class and QI instead of two, the same floats)
        self.costs: dict[tuple[int, int], np.ndarray] = {}
        self.cost_room = COST_ROOM

    def value(self, node: NodeClasses) -> float:
        if self.factors is not None:
            return float(np.dot(self.factors, self.per_qi(node))) * self.scale
        total = 0.0
        for j, lv in enumerate(node.levels):
            total += self.totals[j][lv]
        if node.outliers:
            extra = 0.0
            for term in self._suppressed_terms(node):
                extra += term
            total += extra
        return total * self.scale

    def _suppressed_terms(self, node: NodeClasses) -> list[float]:
        """Per QI what suppressing the node's outliers adds: their records' cells cost ``suppressed_cell``
        instead of their labels' loss."""
        assert node.failing is not None  # outliers are counted from the failing classes
        if node.kept is not None:  # persons counted: a class's suppressed records share its labels
            gone = node.sizes - node.kept
            which = np.flatnonzero(gone)
            sizes = gone[which].astype(float)
        else:
            which = np.flatnonzero(node.failing)
            sizes = node.sizes[which].astype(float)
        reps = node.reps[which]  # each outlier class's tuple, once for every QI
        return [float(np.dot(sizes, self._cost(j, lv, reps))) for j, lv in enumerate(node.levels)]

    def _cost(self, j: int, lv: int, reps: np.ndarray) -> np.ndarray:
        """Per tuple of ``reps``: suppressed_cell minus its cell's loss at level ``lv`` of QI j."""
        column = self.costs.get((j, lv))
        if column is None:
            m = self.evaluator.m
            if m > self.cost_room:  # past the room: computed on the classes alone, as the column would hold it
                return self.suppressed_cell - self.per_label[j][lv][self.evaluator.labels_of(reps, j, lv)]
            column = self.suppressed_cell - self.per_label[j][lv][self.evaluator.gcols[j][lv]]
            self.costs[(j, lv)] = column
            self.cost_room -= m
        return column[reps]

    def per_qi(self, node: NodeClasses) -> np.ndarray:
        """Each QI's sum over the records of its cell loss (a suppressed cell costs ``suppressed_cell``)."""
        sums = np.array([float(self.totals[j][lv]) for j, lv in enumerate(node.levels)])
        if node.outliers:
            for j, term in enumerate(self._suppressed_terms(node)):
                sums[j] += term
        return sums

    def _grids(self, lattice: Lattice) -> list[np.ndarray]:
        """Each QI's totals (nothing suppressed), shaped to broadcast over the lattice."""
        grids = []
        for j, tot in enumerate(self.totals):
            shape = [1] * lattice.q
            shape[j] = len(tot)
            grids.append(np.asarray(tot, dtype=float).reshape(shape))
        return grids

    def level_bound(self, lattice: Lattice) -> np.ndarray:
        grid = np.zeros(lattice.shape)
        for j, g in enumerate(self._grids(lattice)):
            grid = grid + (g if self.factors is None else g * self.factors[j])
        return grid * self.scale


class ArxLoss(CellLoss):
    """ARX's Loss (MetricMDNMLoss, gs-factor 0.5, geometric mean). A record's cell costs the share of the
    hierarchy's leaves under its label (1/|leaves| at level 0), a suppressed cell 1; per QI the sum S over
    the N records is normalized as (S - N/|leaves|) / (N - N/|leaves|) (0 when nothing is generalized, 1 when
    everything is suppressed or at the root), and the QIs are aggregated by the geometric mean of 1 + loss,
    minus 1. Every term only grows with generalization and suppression, so the loss with nothing suppressed
    bounds a node and its generalizations (level_bound), as for the other cell losses."""

    def __init__(self, evaluator: NodeEvaluator, per_label: list[list[np.ndarray]], totals: list[np.ndarray],
                 n: int, domain: list[int], weights: np.ndarray | None):
        super().__init__("loss", evaluator, per_label, totals, 1.0, 1.0)
        self.factors = None  # the weights enter the geometric mean (arx_loss_aggregate), not the sums
        self.weights = weights
        self.n = int(n)
        self.domain = np.asarray(domain, dtype=float)

    def value(self, node: NodeClasses) -> float:
        return float(arx_loss_aggregate(arx_loss_per_qi(self.per_qi(node), self.n, self.domain), self.weights))

    def level_bound(self, lattice: Lattice) -> np.ndarray:
        per_qi = [arx_loss_per_qi(g, self.n, self.domain[j]) for j, g in enumerate(self._grids(lattice))]
        return np.asarray(arx_loss_aggregate(per_qi, self.weights, shape=lattice.shape))


def make_metric(name: str, evaluator: NodeEvaluator, hierarchies: list[Hierarchy], numeric: list[bool],
                n: int, k_min: int = 1, weights: np.ndarray | None = None) -> NodeMetric:
    """``weights``: one per QI (parse_weights), None for the unweighted metric."""
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
            if name == "loss":  # the share of the hierarchy's leaves under the label (ARX's domain share)
                vals = h.leaf_counts(lv) / len(h.leaves)
            elif name == "height":
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
    if name == "loss":
        return ArxLoss(evaluator, per_label, totals, n, [len(h.leaves) for h in hierarchies], weights)
    if name == "entropy":
        # a suppressed cell costs log2 N - log2 count(leaf): relative to a kept cell, log2 N - log2 count(label)
        return CellLoss(name, evaluator, per_label, totals, math.log2(n) if n else 0.0, 1.0, weights)
    cells = n * q
    return CellLoss(name, evaluator, per_label, totals, 1.0, 1.0 / cells if cells else 0.0, weights)


class Classification(NodeMetric):
    """ARX's classification metric (MetricSDClassification) with one target column outside the QIs: a record
    costs 1 when its class is suppressed, or when the most frequent target value of its class is not its own;
    a class with no single most frequent value (a tie at the top) costs 1 for every record, as in ARX. The
    value is the share of the N records so penalized (0..1). ARX weighs the suppressed records by its
    gs-factor; here each costs 1, the cost of a record whose target cannot be told from its class.

    Not monotonic even without suppression: merging a tied class into one with a clear majority can lower the
    penalty. So every anonymous node is a candidate (LatticeSearch.optimum) and the bound is the majority
    penalty without the tie rule, sum over the classes of (size - count of the most frequent value): it only
    grows when classes merge (the top of a sum is at most the sum of the tops) and a suppressed record costs 1,
    at least its share; a node's bound is the largest over its QIs of that penalty at the node generalizing that
    QI alone (a specialization of the node, so of all its generalizations)."""

    name = "classification"
    monotone = False

    def __init__(self, evaluator: NodeEvaluator, inverse: np.ndarray, target_codes: np.ndarray, n: int):
        self.evaluator = evaluator
        self.n = int(n)
        values = int(target_codes.max()) + 1 if len(target_codes) else 1
        self.values = values
        # (frequency-set tuple, target value) pairs with their record counts: a node's class x target counts
        # come from the node's tuple -> class map alone
        pair, count = np.unique(inverse.astype(np.int64) * values + target_codes, return_counts=True)
        self.pair_tuple = pair // values
        self.pair_value = pair % values
        self.pair_count = count.astype(np.float64)

    def counts(self, node: NodeClasses) -> np.ndarray:
        """Per class of the node, the records of each target value (classes x values)."""
        classes = len(node.sizes)
        cls = self.evaluator.tuple_class(node)[self.pair_tuple]
        flat = np.bincount(cls * self.values + self.pair_value, weights=self.pair_count,
                           minlength=classes * self.values)
        return flat.reshape(classes, self.values)

    def penalty(self, node: NodeClasses, ties: bool = True) -> float:
        """The records penalized (``ties``: a class without a single most frequent value costs all its records;
        without, the bound's majority penalty)."""
        table = self.counts(node)
        sizes = table.sum(axis=1)
        ordered = np.sort(table, axis=1)
        top1 = ordered[:, -1]
        kept = np.ones(len(sizes), dtype=bool) if node.failing is None else ~node.failing
        cost = sizes - top1
        if ties and self.values > 1:
            tied = (ordered[:, -2] == top1) & (sizes > 0)
            cost = np.where(tied, sizes, cost)
        return float(cost[kept].sum() + sizes[~kept].sum())

    def value(self, node: NodeClasses) -> float:
        return self.penalty(node) / self.n if self.n else 0.0

    def level_bound(self, lattice: Lattice) -> np.ndarray:
        bound = np.zeros(lattice.shape)
        for j, height in enumerate(lattice.heights):
            per_level = np.zeros(int(height) + 1)
            for lv in range(int(height) + 1):
                levels = [0] * lattice.q
                levels[j] = lv
                node = self.evaluator.classes(tuple(levels))
                unsuppressed = NodeClasses(node.levels, node.reps, node.sizes, node.key)
                per_level[lv] = self.penalty(unsuppressed, ties=False) / self.n if self.n else 0.0
            shape = [1] * lattice.q
            shape[j] = len(per_level)
            bound = np.maximum(bound, per_level.reshape(shape))
        return bound


def check_target(name: str, columns: list[str], qi: list[str]) -> None:
    """The classification metric's target: named, a column of the table, not a QI (InputError naming it)."""
    if not name:
        raise InputError("the classification metric needs a target column (--target / the Target column field)")
    if name in qi:
        raise InputError(f"target: {name!r} is a quasi-identifier; the classification metric keeps a column "
                         f"outside the QIs predictable from them")
    if name not in columns:
        raise InputError(f"target: unknown column {name!r}")


def target_codes(values, name: str, qi: list[str], columns: list[str]) -> np.ndarray:
    """The target column's values as codes 0..v-1 (missing values are one value of their own), after
    check_target."""
    check_target(name, columns, qi)
    import pandas as pd

    codes, _ = pd.factorize(pd.Series(values).astype(str), use_na_sentinel=False)
    return np.asarray(codes, dtype=np.int64)


def classification_metric(problem, evaluator: NodeEvaluator) -> Classification:
    """The classification metric of a search (``problem``: algorithms.base.Problem) on its ``target`` option.
    Runs with a person id or a research subset count persons or research records, not the records the metric
    penalizes: refused there."""
    if problem.persons is not None:
        raise InputError("the classification metric counts records; with a person id choose another metric")
    if problem.research is not None:
        raise InputError("the classification metric counts every record; with a population table choose another "
                         "metric")
    name = str(problem.options.get("target") or "").strip()
    frame = problem.table.frame
    codes = target_codes(frame[name] if name in frame.columns else None, name, list(problem.table.qi),
                         list(frame.columns))
    return Classification(evaluator, np.asarray(problem.freq.inverse), codes, problem.records)
