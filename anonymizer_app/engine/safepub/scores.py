"""SafePub's score functions: utility of a lattice node on the sample, scaled to sensitivity 1.

The exponential mechanism needs scores whose change is bounded when one record is added to or removed from
the input; Bild, Kuhn & Prasser (PoPETs 2018, section 5) derive such variants of common quality models, and
ARX implements them (``getScore`` of ``metric.v2``'s MetricMDNMLoss, MetricSDNMDiscernability,
MetricMDNUEntropyPrecomputed, MetricSDAECS, MetricMDNMPrecision). Notation (docs/definitions.md, "SafePub"):
N input records, the sample S, a node g; the classes of S under g (records with equal generalized QIs and
equal values of every other published column); a class is kept when it holds at least k records;
sup = (N - |S|) + the records of S in classes below k (every record not published counts as suppressed);
q the number of QIs; c_k = k²/(k-1) + 1 (5 when k = 1). Higher is better (losses are negated):

- loss (granularity): -(Σ_{kept records r} Σ_j share_j(r) + q·sup) / (q·(k-1)), share_j the leaves under
  the record's generalized value of QI j over the hierarchy's leaves (divided by q only when k = 1);
- precision (generalization height): -(Σ_j ((|S| - sup_S)·l_j/H_j + sup)) / (q·(k-1)), as above for k = 1;
- discernibility: -(Σ_{kept classes E} |E|² + N·sup) / (N·c_k);
- entropy (ARX's score for non-uniform entropy): -(Σ_j [Σ_{non-root values v} f_j(v)² + N·sup_j]) /
  (N·q·c_k), f_j(v) the kept records whose QI j reads v, sup_j the records whose QI j is the root or that
  are suppressed or not sampled;
- classes (group size): the number of kept classes, plus 1 when any record is suppressed or not sampled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..model.hierarchy import Hierarchy
from ..model.table import group_rows

SCORE_LABELS = {
    "loss": "Loss (granularity)",
    "discernibility": "Discernibility",
    "entropy": "Non-uniform entropy",
    "classes": "Number of classes (group size)",
    "precision": "Precision (generalization height)",
}
DEFAULT_SCORE = "loss"


@dataclass
class SampleClasses:
    """The sample as distinct records with counts: QI leaf codes, a code of the other published columns'
    values (0 when there are none), and what the scores need of the input and the hierarchies."""

    codes: np.ndarray  # D x q leaf codes
    other: np.ndarray  # D: the combination of the non-QI published columns' values
    counts: np.ndarray  # D: records of the sample per distinct record
    n_input: int  # N, the input's records
    hierarchies: list[Hierarchy]
    k: int
    _shares: dict = field(default_factory=dict)
    _roots: dict = field(default_factory=dict)

    @property
    def sampled(self) -> int:
        return int(self.counts.sum())

    def classes(self, levels: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(generalized codes D x q, distinct record -> class, class sizes) of the node."""
        gen = np.empty_like(self.codes)
        for j, (h, lv) in enumerate(zip(self.hierarchies, levels)):
            gen[:, j] = h.maps[lv][self.codes[:, j]]
        radices = [len(h.labels[lv]) for h, lv in zip(self.hierarchies, levels)]
        matrix = np.column_stack([gen, self.other]) if len(self.codes) else np.zeros((0, len(levels) + 1), np.int64)
        radices.append(int(self.other.max()) + 1 if len(self.other) else 1)
        _, inverse, _ = group_rows(matrix, np.asarray(radices, dtype=np.int64))
        sizes = np.bincount(inverse, weights=self.counts).astype(np.int64) if len(inverse) else np.zeros(0, np.int64)
        return gen, inverse, sizes

    def share(self, j: int, level: int) -> np.ndarray:
        """Per label of QI j at ``level``: its leaves over the hierarchy's leaves."""
        key = (j, level)
        if key not in self._shares:
            h = self.hierarchies[j]
            self._shares[key] = h.leaf_counts(level) / float(len(h.leaves))
        return self._shares[key]

    def is_root(self, j: int, level: int) -> np.ndarray:
        """Per label of QI j at ``level``: is it the hierarchy's single root value (ARX's rootValues)?"""
        key = (j, level)
        if key not in self._roots:
            h = self.hierarchies[j]
            top = h.labels[h.height]
            labels = h.labels[level]
            self._roots[key] = (labels == top[0]) if len(top) == 1 else np.zeros(len(labels), dtype=bool)
        return self._roots[key]


def _normalizer(k: int) -> float:
    return 5.0 if k == 1 else k * k / (k - 1.0) + 1.0


def _parts(data: SampleClasses, levels: tuple[int, ...]):
    gen, inverse, sizes = data.classes(levels)
    kept = sizes[inverse] >= data.k  # per distinct record
    sup = data.n_input - int(data.counts[kept].sum())  # suppressed in the sample + not sampled
    return gen, inverse, sizes, kept, sup


def loss(data: SampleClasses, levels: tuple[int, ...]) -> float:
    gen, _, _, kept, sup = _parts(data, levels)
    q = len(levels)
    total = float(q * sup)
    for j, lv in enumerate(levels):
        total += float((data.counts[kept] * data.share(j, lv)[gen[kept, j]]).sum())
    return -total / q / (data.k - 1.0 if data.k > 1 else 1.0)


def precision(data: SampleClasses, levels: tuple[int, ...]) -> float:
    _, _, _, kept, sup = _parts(data, levels)
    q = len(levels)
    unsuppressed = int(data.counts[kept].sum())
    total = 0.0
    for h, lv in zip(data.hierarchies, levels):
        total += (unsuppressed * lv / h.height if h.height else 0.0) + sup
    return -total / q / (data.k - 1.0 if data.k > 1 else 1.0)


def discernibility(data: SampleClasses, levels: tuple[int, ...]) -> float:
    _, _, sizes, _, sup = _parts(data, levels)
    kept_sizes = sizes[sizes >= data.k].astype(np.float64)
    n = float(data.n_input)
    return -(float((kept_sizes ** 2).sum()) + n * sup) / (n * _normalizer(data.k))


def entropy(data: SampleClasses, levels: tuple[int, ...]) -> float:
    gen, _, _, kept, sup = _parts(data, levels)
    n = float(data.n_input)
    total = 0.0
    for j, lv in enumerate(levels):
        root = data.is_root(j, lv)[gen[:, j]]
        shown = kept & ~root
        per_value = np.bincount(gen[shown, j], weights=data.counts[shown])
        total += float((per_value ** 2).sum())
        # the root-valued kept records, plus every suppressed or unsampled record
        total += n * (float(data.counts[kept & root].sum()) + sup)
    return -total / (n * len(levels) * _normalizer(data.k))


def classes(data: SampleClasses, levels: tuple[int, ...]) -> float:
    _, _, sizes, _, sup = _parts(data, levels)
    return float((sizes >= data.k).sum()) + (1.0 if sup > 0 else 0.0)


SCORES: dict[str, Callable[[SampleClasses, tuple[int, ...]], float]] = {
    "loss": loss, "discernibility": discernibility, "entropy": entropy, "classes": classes, "precision": precision,
}
