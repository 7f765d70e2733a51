"""Utility and risk measures, exactly as ../shared/docs/definitions.md defines them.

All figures are computed from equivalence-class sizes and per-cell generalization levels; the
suppressed records take no part in any class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..model.hierarchy import ROOT, Hierarchy, numbers_of
from ..model.table import sorted_unique
from ..search.recoding import parse_range

RISK_THRESHOLD = 0.2

# Names and one-line meanings, for the UI's help and the report JSON.
METRIC_HELP = {
    "equivalence_classes": "number of equivalence classes (ECs) among the non-suppressed records",
    "min_class_size": "size of the smallest EC (the k actually reached)",
    "mean_class_size": "(N - suppressed) / #EC",
    "suppressed": "records suppressed (all QIs shown as *)",
    "ncp": "Normalized Certainty Penalty (Xu et al. 2006): mean cell loss 0..1; suppressed cells count 1",
    "generalization_height": "level / hierarchy height, mean over QI cells; suppressed cells count 1",
    "discernibility": "C_DM = sum of |EC|^2 + suppressed x N",
    "c_avg": "normalized average EC size (N - suppressed) / (#EC x k)",
    "non_uniform_entropy": "sum over cells of -log2 P(original value | generalized value), on the input",
    "loss": "ARX's Loss: per QI the mean share of the hierarchy's leaves a cell covers (suppressed: 1), "
            "normalized to 0..1; geometric mean of 1 + loss over the QIs, minus 1",
    "prosecutor_risk_highest": "1 / smallest EC size",
    "prosecutor_risk_average": "#EC / (N - suppressed)",
    "records_at_risk": f"share of non-suppressed records whose risk 1/|EC| exceeds {RISK_THRESHOLD}",
    "marketer_risk": "#EC / (N - suppressed): the published records are the attacker's population",
    "sample_uniques": "ECs of size 1",
    "homogeneous_classes": "ECs whose records all share one sensitive value",
    "homogeneous_records": "records in homogeneous ECs",
}


def class_figures(sizes: np.ndarray, n: int, suppressed: int, k: int, threshold: float = RISK_THRESHOLD) -> dict:
    """EC counts, discernibility, C_AVG and the prosecutor/marketer risks."""
    return class_figures_from_histogram(*size_histogram(sizes), n, suppressed, k, threshold)


def size_histogram(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(sizes, return_counts=True) of class sizes: by counting when they are small numbers (they
    are: at most N), not by a sort."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if len(sizes) and int(sizes.min()) >= 0 and int(sizes.max()) < max(4 * len(sizes), 1 << 16):
        every = np.bincount(sizes)
        values = np.flatnonzero(every > 0)
        return values, every[values]
    distinct, counts = np.unique(sizes, return_counts=True)
    return distinct, counts


def class_figures_from_histogram(size: np.ndarray, count: np.ndarray, n: int, suppressed: int, k: int,
                                 threshold: float = RISK_THRESHOLD) -> dict:
    """class_figures from the EC size histogram (``count[i]`` classes of ``size[i]`` records): what an
    out-of-core run keeps instead of one size per class."""
    size = np.asarray(size, dtype=np.int64)
    count = np.asarray(count, dtype=np.int64)
    kept = n - suppressed
    ecs = int(count.sum())
    smallest = int(size[count > 0].min()) if ecs else 0
    figures: dict[str, float | int | None] = {
        "equivalence_classes": ecs,
        "min_class_size": smallest,
        "mean_class_size": kept / ecs if ecs else 0.0,
        "suppressed": int(suppressed),
        "discernibility": int(np.sum(count * size**2) + suppressed * n),
        "c_avg": kept / (ecs * k) if ecs else None,
        "prosecutor_risk_highest": 1.0 / smallest if ecs else 0.0,
        "prosecutor_risk_average": ecs / kept if kept else 0.0,
        "records_at_risk": float(np.sum((size * count)[1.0 / np.maximum(size, 1) > threshold]) / kept) if kept else 0.0,
        # the published rows only: suppressed records are not in the release (as the risk page counts it)
        "marketer_risk": ecs / kept if kept else 0.0,
        "sample_uniques": int(count[size == 1].sum()),
    }
    return figures


def homogeneity(class_of_row: np.ndarray, sensitive: pd.Series | np.ndarray, weights: np.ndarray | None = None) -> dict:
    """Homogeneous ECs (seed 001): classes with one sensitive value, and the records they hold. ``weights``:
    the records each row stands for (weighted frequency data: a cluster run's merged partitions)."""
    kept = class_of_row >= 0
    cls = class_of_row[kept]
    if cls.size == 0:
        return {"homogeneous_classes": 0, "homogeneous_records": 0}
    values, _ = pd.factorize(np.asarray(sensitive)[kept])
    pairs = sorted_unique(cls.astype(np.int64) * (int(values.max()) + 1) + values)
    distinct = np.bincount(pairs // (int(values.max()) + 1))
    sizes = np.bincount(cls) if weights is None else np.bincount(cls, weights=weights[kept]).astype(np.int64)
    homogeneous = distinct == 1
    return {"homogeneous_classes": int(homogeneous.sum()), "homogeneous_records": int(sizes[homogeneous].sum())}


def tuple_homogeneity(tuple_class: np.ndarray, tuples: np.ndarray, values: np.ndarray, counts: np.ndarray) -> dict:
    """homogeneity() from the frequency set instead of the N rows: the class of each distinct QI tuple (-1:
    suppressed) and the (tuple, sensitive value code, records) triplets of the tuples' histograms."""
    cls = np.asarray(tuple_class, dtype=np.int64)[tuples]
    kept = cls >= 0
    if not kept.any():
        return {"homogeneous_classes": 0, "homogeneous_records": 0}
    values = np.asarray(values, dtype=np.int64)
    if not kept.all():  # (all kept: the same arrays, no copies)
        cls, values, counts = cls[kept], values[kept], counts[kept]
    width = int(values.max()) + 1
    classes = int(cls.max()) + 1
    if classes * width <= max(4 * len(cls), 1 << 22):  # distinct values per class from one count per cell
        # the class of each present (class, value) cell counted (a sum along rows of width-wide bools is slow)
        present = np.flatnonzero(np.bincount(cls * width + values, minlength=classes * width) > 0)
        distinct = np.bincount(present // width, minlength=classes)
    else:
        pairs = sorted_unique(cls * width + values)
        distinct = np.bincount(pairs // width)
    sizes = np.bincount(cls, weights=counts).astype(np.int64)
    homogeneous = distinct == 1
    return {"homogeneous_classes": int(homogeneous.sum()), "homogeneous_records": int(sizes[homogeneous].sum())}


def arx_loss_aggregate(per_qi, weights: np.ndarray | None = None, shape: tuple | None = None):
    """ARX's geometric-mean aggregate of per-QI losses (ILMultiDimensionalGeometricMean): the product over
    the QIs of (1 + loss)^(1/q), minus 1 - multiplied in QI order as ARX does. With ``weights`` the exponent
    of QI j is w_j / sum w (a weighted geometric mean; ARX's own weights only rescale the product).
    ``per_qi``: floats, or arrays broadcasting to ``shape`` (a lattice of values)."""
    q = len(per_qi)
    if q == 0:
        return 0.0 if shape is None else np.zeros(shape)
    total = float(np.sum(weights)) if weights is not None else 0.0
    result = 1.0 if shape is None else np.ones(shape)
    for j, v in enumerate(per_qi):
        exponent = 1.0 / q if weights is None else float(weights[j]) / total
        result = result * np.power(np.asarray(v, dtype=float) + 1.0, exponent)
    return float(result) - 1.0 if shape is None else result - 1.0


def arx_loss_per_qi(sums: np.ndarray, n: int, domain: np.ndarray) -> np.ndarray:
    """ARX's Loss of each QI from S, the sum over the N records of the share of the hierarchy's leaves
    under the cell's label (1 for a suppressed cell): (S - N/|leaves|) / (N - N/|leaves|), at least 0."""
    low = n / np.asarray(domain, dtype=float)
    span = n - low
    safe = np.where(span > 0, span, 1.0)
    return np.maximum(np.where(span > 0, (np.asarray(sums, dtype=float) - low) / safe, 0.0), 0.0)


def leaf_numbers(leaves: np.ndarray) -> np.ndarray:
    """pd.to_numeric(pd.Series(leaves), errors="coerce") as floats (hierarchy.numbers_of; a Hierarchy keeps
    its own: Hierarchy.leaf_numbers)."""
    return numbers_of(leaves)


def ncp_by_label(h: Hierarchy, level: int, leaf_present: np.ndarray, numeric: bool) -> np.ndarray:
    """NCP of each label of a level: interval width share for numbers, leaf share for categories."""
    n_labels = len(h.labels[level])
    if level == 0:
        return np.zeros(n_labels)
    if numeric:
        values = h.leaf_numbers()  # parsed once per hierarchy
        ok = leaf_present & ~np.isnan(values)
        if ok.any():
            span = values[ok].max() - values[ok].min()
            out = np.zeros(n_labels)
            if span > 0:  # each label's lowest and highest present leaf value (exact: no sums), numpy not groupby
                label, v = np.asarray(h.maps[level])[ok], values[ok]
                lo, hi = np.full(n_labels, np.inf), np.full(n_labels, -np.inf)
                np.minimum.at(lo, label, v)
                np.maximum.at(hi, label, v)
                present = np.bincount(label, minlength=n_labels) > 0
                out[present] = (hi[present] - lo[present]) / span
            return out
    return h.leaf_counts(level) / len(h.leaves)


def loss_figures(
    hierarchies: list[Hierarchy],
    numeric: list[bool],
    codes: np.ndarray,
    levels: list[int],
    suppressed: np.ndarray,
    weights: np.ndarray | None = None,
    per_qi: bool = False,
    leaf_counts: Sequence[np.ndarray] | None = None,
) -> dict:
    """NCP, generalization height, non-uniform entropy and ARX's Loss of a full-domain transformation.

    ``weights``: the records each row of ``codes`` stands for - the frequency set's distinct tuples with
    their counts (``suppressed`` then flags whole tuples), so the sums run over the tuples, not N rows.
    ``per_qi``: add "per_qi", each figure per QI (lists in QI order; NCP and height as the QI's mean cell
    loss, entropy its sum, loss ARX's per-QI value) the share of the records published as '*'
    (generalized, not suppressed) and the share suppressed. ``leaf_counts``: per QI np.bincount of its codes
    (rows, no ``weights``) when the caller has them."""
    rows, q = codes.shape
    n = rows if weights is None else int(np.sum(weights))
    if n == 0 or q == 0 or (not any(levels) and not suppressed.any()):
        out: dict = {"ncp": 0.0, "generalization_height": 0.0, "non_uniform_entropy": 0.0, "loss": 0.0}
        if per_qi:  # nothing changed
            out["per_qi"] = {key: [0.0] * q for key in ("ncp", "generalization_height", "non_uniform_entropy",
                                                          "loss", "star_share", "suppressed_share")}
        return out
    everything = not suppressed.any()  # every row kept: no mask to take (the same rows, in the same order)
    kept = ~suppressed
    # the counts as floats once (x * count and x * float(count) are the same numbers: counts are exact)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    wk = w if w is None or everything else w[kept]
    ws = None if w is None else w[suppressed]
    n_sup = int(suppressed.sum()) if ws is None else int(np.sum(ws))
    ncp_sum = height_sum = entropy = 0.0
    # per QI: NCP, height, entropy, ARX Loss sums, published records whose cell is '*' (not suppressed)
    by_qi = np.zeros((5, q))

    def total(x: np.ndarray, w: np.ndarray | None) -> float:
        return float(np.sum(x)) if w is None else float(np.sum(x * w))

    by_column = np.ascontiguousarray(codes.T)  # each QI's codes contiguous (the rows' order kept)
    gathered: list[np.ndarray] = []  # rows: one buffer the per-row values of every sum are gathered into
    for j, (h, lv) in enumerate(zip(hierarchies, levels)):
        col = by_column[j]
        leaf_count = (np.asarray(leaf_counts[j]) if w is None and leaf_counts is not None
                      else np.bincount(col, weights=w, minlength=len(h.leaves)))
        if len(leaf_count) != len(h.leaves):  # a code that is no leaf's (bincount refuses negative ones)
            raise ValueError(f"{h.name}: a leaf code out of range")
        label_of_leaf = h.maps[lv]
        # a label's records are its leaves' (whole numbers, exact as floats)
        label_count = np.bincount(label_of_leaf, weights=leaf_count, minlength=len(h.labels[lv])).astype(np.int64)
        if w is not None:  # bincount with weights gives floats; the counts are whole numbers
            leaf_count = leaf_count.astype(np.int64)
        # a row's terms depend on its leaf only: computed once per leaf (log2 of a count is the same number
        # whichever array holds it), then taken per row - the very values a per-row computation gives,
        # summed in the same order, so the figures are bit for bit those of a row-by-row computation
        log_leaf = np.log2(np.maximum(leaf_count, 1))  # an absent leaf (count 0) is no row's
        # ARX's domain share of each leaf's label: the hierarchy's leaves under it / all its leaves
        share_of_leaf = (h.leaf_counts(lv) / len(h.leaves))[label_of_leaf]
        # a categorical QI's NCP above its leaves is that share (ncp_by_label's own figure): taken as it is
        ncp_of_leaf = share_of_leaf if lv > 0 and not numeric[j] else \
            ncp_by_label(h, lv, leaf_count > 0, numeric[j])[label_of_leaf]
        entropy_of_leaf = np.log2(np.maximum(label_count, 1))[label_of_leaf] - log_leaf
        shown = col if everything else col[kept]
        star = (np.asarray(h.labels[lv], dtype=object) == ROOT).astype(float)[label_of_leaf]  # cells shown '*'
        if w is None:
            shown_count = leaf_count if everything else leaf_count - np.bincount(col[suppressed],
                                                                                  minlength=len(h.leaves))
            share_j = _row_sum(share_of_leaf, shown, shown_count, gathered)
            # a categorical QI's NCP is its label's leaf share: the same values, so the same sum
            ncp_j = (share_j if ncp_of_leaf is share_of_leaf or _same_floats(ncp_of_leaf, share_of_leaf)
                     else _row_sum(ncp_of_leaf, shown, shown_count, gathered)) + n_sup
            entropy_j = _row_sum(entropy_of_leaf, shown, shown_count, gathered)
            # a sum of 0s and 1s is the whole number it counts, exactly, in any order
            star_j = float(np.sum(shown_count[star == 1.0]))
        else:
            share_j = total(np.take(share_of_leaf, shown), wk)
            # a categorical QI's NCP is its label's leaf share: the same values, so the same sum
            ncp_j = (share_j if ncp_of_leaf is share_of_leaf or _same_floats(ncp_of_leaf, share_of_leaf)
                     else total(np.take(ncp_of_leaf, shown), wk)) + n_sup
            entropy_j = total(np.take(entropy_of_leaf, shown), wk)
            # whole counts of 0s and 1s: every partial sum is a whole number, exact, so any order gives the same
            # sum; with every tuple kept, the records per leaf are leaf_count's
            star_j = float(np.sum(leaf_count[star == 1.0])) if everything else total(np.take(star, shown), wk)
        height_j = (lv / h.height if h.height else 0.0) * (n - n_sup) + n_sup
        ncp_sum += ncp_j
        height_sum += height_j
        entropy += entropy_j
        if not everything:
            entropy_j2 = total(np.log2(n) - np.take(log_leaf, col[suppressed]), ws)
            entropy += entropy_j2
            entropy_j += entropy_j2
        by_qi[:, j] = (ncp_j, height_j, entropy_j, share_j + n_sup, star_j)
    cells = n * q
    loss_j = arx_loss_per_qi(by_qi[3], n, np.array([len(h.leaves) for h in hierarchies]))
    out = {
        "ncp": ncp_sum / cells,
        "generalization_height": height_sum / cells,
        "non_uniform_entropy": entropy,
        "loss": float(arx_loss_aggregate(list(loss_j))),
    }
    if per_qi:
        out["per_qi"] = {"ncp": (by_qi[0] / n).tolist(), "generalization_height": (by_qi[1] / n).tolist(),
                         "non_uniform_entropy": by_qi[2].tolist(), "loss": loss_j.tolist(),
                         "star_share": (by_qi[4] / n).tolist(), "suppressed_share": [n_sup / n] * q}
    return out


def _same_floats(a: np.ndarray, b: np.ndarray) -> bool:
    """The same float64 numbers bit for bit (so any sum of them in one order is the same number)."""
    return a.shape == b.shape and bool(np.array_equal(np.asarray(a, dtype=np.float64).view(np.int64),
                                                      np.asarray(b, dtype=np.float64).view(np.int64)))


EXACT_SUM_ROWS = 1 << 16  # rows from which _row_sum tries the counts first (fewer: gathered at about that cost)


def _row_sum(of_leaf: np.ndarray, leaves: np.ndarray, counts: np.ndarray, gathered: list[np.ndarray]) -> float:
    """float(np.sum(of_leaf[leaves])), the rows' values summed in their order (numpy's pairwise sum), bit for bit.
    ``counts``: the rows per leaf of ``leaves``; ``gathered``: a buffer of len(leaves) floats, reused (or made
    and kept there). From the counts alone when every partial sum is exact (_exact_sum), else the values
    gathered into the buffer and summed: the same array, the same sum (always below EXACT_SUM_ROWS rows)."""
    exact = _exact_sum(of_leaf, counts) if len(leaves) >= EXACT_SUM_ROWS else None
    if exact is not None:
        return exact
    if not gathered:
        gathered.append(np.empty(len(leaves), dtype=np.float64))
    # mode="wrap": no bounds pass (the codes were counted by np.bincount: none negative, none past the leaves)
    return float(np.sum(np.take(of_leaf, leaves, out=gathered[0], mode="wrap")))


def _exact_sum(values: np.ndarray, counts: np.ndarray) -> float | None:
    """The float sum of an array holding values[i] counts[i] times, in any order, when every partial sum of it is
    exact: every value present a whole multiple of 2^-P and their magnitudes, counted, below 2^51 units of 2^-P
    (each addition of such numbers is exact, so numpy's pairwise sum gives this number whatever its order: the
    labels' '*' shares, the NCP of a level's leaves or of the top level, any sum of 0s, 1s and halves). None
    otherwise, or with a negative zero or a number that is not finite (the caller sums the rows)."""
    present = np.flatnonzero(counts > 0)
    if not len(present):
        return 0.0
    v = np.asarray(values, dtype=np.float64)[present]
    c = np.asarray(counts, dtype=np.int64)[present]
    if not np.isfinite(v).all() or (np.signbit(v) & (v == 0)).any():
        return None
    nonzero = v != 0
    if not nonzero.any():
        return 0.0
    mantissa, exponent = np.frexp(v[nonzero])  # v = mantissa * 2^exponent, 0.5 <= |mantissa| < 1
    digits = np.ldexp(mantissa, 53).astype(np.int64)  # v = digits * 2^(exponent - 53), digits a 53-bit integer
    lowest = digits & -digits  # its lowest set bit (a power of two, exact as a float)
    places = 53 - exponent - (np.frexp(lowest.astype(np.float64))[1] - 1)  # v * 2^places is a whole number
    p = max(int(places.max()), 0)
    if p > 1000 or float(np.sum(np.abs(v) * c)) * 2.0 ** p >= 2.0 ** 51:
        return None
    units = np.ldexp(v, p).astype(np.int64)  # whole numbers below 2^51: exact
    return float(np.ldexp(float(np.sum(units * c)), -p))


def attribute_figures(qi: list[str], hierarchies: list[Hierarchy], numeric: list[bool], codes: np.ndarray,
                      levels: list[int], suppressed: np.ndarray, weights: np.ndarray | None = None,
                      leaf_counts: Sequence[np.ndarray] | None = None) -> list[dict]:
    """Per QI of a full-domain transformation (one row each, in QI order): its level, ARX's Loss, NCP and
    height (the QI's mean cell loss, suppressed cells 1), the share of the records published as '*' by
    generalization and the share suppressed (loss_figures' per_qi). ``weights``: the records each row of
    ``codes`` stands for (a cluster run's weighted rows); ``leaf_counts``: per QI np.bincount of its codes (rows,
    no ``weights``) when the caller has them."""
    per = loss_figures(hierarchies, numeric, codes, levels, suppressed, weights=weights, per_qi=True,
                       leaf_counts=leaf_counts)["per_qi"]
    return [{"qi": q, "level": int(levels[j]), "loss": per["loss"][j], "ncp": per["ncp"][j],
             "generalization_height": per["generalization_height"][j], "star_share": per["star_share"][j],
             "suppressed_share": per["suppressed_share"][j]} for j, q in enumerate(qi)]


# ---- local and multidimensional recoding: figures from the output cells ------------------------------
def _cell_levels(h: Hierarchy, codes: np.ndarray, cell_ids: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """Per (cell, leaf) item: the lowest level whose label of the leaf is the cell, -1 if none."""
    found = np.full(len(codes), -1, dtype=np.int64)
    for lv in range(h.level_count):
        at_level = pd.Index(h.labels[lv]).get_indexer(pd.Index(distinct))
        hit = (found < 0) & (at_level[cell_ids] == h.maps[lv][codes])
        found[hit] = lv
    return found


def _range_heights(h: Hierarchy, values: np.ndarray, present: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Per range: level of the lowest hierarchy node over every present leaf in [lo, hi], / height."""
    ok = present & ~np.isnan(values)
    leaves = np.flatnonzero(ok)
    leaves = leaves[np.argsort(values[leaves], kind="stable")]
    v = values[leaves]
    a = np.searchsorted(v, lo, side="left")
    b = np.searchsorted(v, hi, side="right") - 1
    b = np.maximum(a, b)
    level = np.full(len(lo), h.height, dtype=np.int64)
    unset = np.ones(len(lo), dtype=bool)
    for lv in range(h.level_count):
        anc = h.maps[lv][leaves]
        change = np.r_[0, np.cumsum(anc[1:] != anc[:-1])]
        const = change[np.minimum(b, len(v) - 1)] == change[np.minimum(a, len(v) - 1)]
        hit = unset & const
        level[hit] = lv
        unset &= ~hit
    return level / h.height if h.height else np.zeros(len(lo))


def cell_loss_figures(
    hierarchies: list[Hierarchy],
    numeric: list[bool],
    codes: np.ndarray,
    cells: list[np.ndarray] | None,
    suppressed: np.ndarray,
    factorized: Sequence[tuple[np.ndarray, pd.Index | np.ndarray]] | None = None,
    weights: np.ndarray | None = None,
) -> dict:
    """NCP, generalization height and non-uniform entropy of a local/multidimensional recoding.

    Read from the output cells: a cell that is a hierarchy label of its value counts as that node
    (NCP: leaf share, or value-range share for numeric QIs; height: level / H); a numeric range
    ``[lo-hi]`` has NCP (hi - lo) / (max - min of the column) and, as height, the level of the lowest
    hierarchy node above every value of the column that falls in the range, / H.
    ``factorized``: per QI (every row's cell code, the distinct cells), when the caller has them (``cells``
    then unused); ``weights``: the records each row stands for (weighted frequency data: a cluster run's
    merged partitions).
    """
    rows, q = codes.shape
    n = rows if weights is None else int(weights.sum())
    if n == 0 or q == 0:
        return {"ncp": 0.0, "generalization_height": 0.0, "non_uniform_entropy": 0.0}
    kept = ~suppressed
    sums = np.zeros(3)
    for j, h in enumerate(hierarchies):
        col = codes[:, j].astype(np.int64)
        if weights is None:
            leaf_count = np.bincount(col, minlength=len(h.leaves))
        else:
            leaf_count = np.bincount(col, weights=weights, minlength=len(h.leaves)).astype(np.int64)
        if kept.any():
            if factorized is not None:  # the column's codes over all rows (result.factorize_cells)
                cid, distinct = factorized[j][0][kept], factorized[j][1]
            else:
                assert cells is not None
                cid, distinct = pd.factorize(pd.Series(cells[j][kept], dtype=object))
            key = cid.astype(np.int64) * len(h.leaves) + col[kept]
            if weights is None:
                pairs, pair_count = np.unique(key, return_counts=True)
            else:
                pairs, inverse = np.unique(key, return_inverse=True)
                pair_count = np.bincount(inverse.reshape(-1), weights=weights[kept]).astype(np.int64)
        else:
            distinct, pairs, pair_count = pd.Index([], dtype=object), np.zeros(0, np.int64), np.zeros(0, np.int64)
        suppressed_leaves = col[suppressed] if weights is None else np.repeat(col[suppressed], weights[suppressed])
        sums += cell_loss_sums(h, numeric[j], leaf_count, np.asarray(distinct, dtype=object),
                               pairs // len(h.leaves), pairs % len(h.leaves), pair_count, suppressed_leaves)
    return loss_from_sums(sums, n, q)


def loss_from_sums(sums: np.ndarray, n: int, q: int) -> dict:
    """The figures of cell_loss_figures from the sums of cell_loss_sums over the QIs."""
    cells_total = n * q
    if cells_total == 0:
        return {"ncp": 0.0, "generalization_height": 0.0, "non_uniform_entropy": 0.0}
    return {"ncp": float(sums[0]) / cells_total, "generalization_height": float(sums[1]) / cells_total,
            "non_uniform_entropy": float(sums[2])}


def cell_loss_sums(h: Hierarchy, numeric: bool, leaf_count: np.ndarray, distinct: np.ndarray, p_cell: np.ndarray,
                   p_leaf: np.ndarray, pair_count: np.ndarray, suppressed_leaves: np.ndarray) -> np.ndarray:
    """One QI's (NCP sum, height sum, entropy) over its cells, from the distinct (output cell, input
    leaf) pairs with their counts - additive, so an out-of-core run can count the pairs chunk by chunk.
    ``leaf_count``: records per leaf over the whole column; ``suppressed_leaves``: the leaves of the
    suppressed records (each of their cells counts 1, and log2(N / leaf count) of entropy)."""
    n = int(leaf_count.sum())
    present = leaf_count > 0
    n_sup = len(suppressed_leaves)
    entropy = float(np.sum(np.log2(n) - np.log2(leaf_count[suppressed_leaves]))) if n_sup else 0.0
    ncp_sum = height_sum = float(n_sup)
    if len(p_cell):
        level = _cell_levels(h, p_leaf, p_cell, distinct)
        ncp = np.zeros(len(p_cell))
        height = np.zeros(len(p_cell))
        for lv in np.unique(level[level > 0]):
            sel = level == lv
            label_ncp = ncp_by_label(h, int(lv), present, numeric)
            ncp[sel] = label_ncp[h.maps[lv][p_leaf[sel]]]
            height[sel] = lv / h.height if h.height else 0.0
        ranged = level < 0
        if ranged.any():
            values = pd.to_numeric(pd.Series(h.leaves, dtype=object), errors="coerce").to_numpy(dtype=float)
            ok = present & ~np.isnan(values)
            span = float(values[ok].max() - values[ok].min()) if ok.any() else 0.0
            bounds = np.array([parse_range(distinct[c]) or (np.nan, np.nan) for c in p_cell[ranged]], dtype=float)
            if span > 0:
                # the range's part of the column's span: a range is drawn from the column's values, so it lies
                # within them, except with a research subset, whose published records' span may be narrower
                # than the population's range drawn around them (then the cell costs at most 1)
                lowest, highest = float(values[ok].min()), float(values[ok].max())
                ncp[ranged] = (np.minimum(bounds[:, 1], highest) - np.maximum(bounds[:, 0], lowest)) / span
            else:
                ncp[ranged] = 0.0
            height[ranged] = _range_heights(h, values, present, bounds[:, 0], bounds[:, 1])
        ncp_sum += float(np.sum(ncp * pair_count))
        height_sum += float(np.sum(height * pair_count))
        cell_count = np.bincount(p_cell, weights=pair_count)
        entropy += float(np.sum(pair_count * (np.log2(cell_count[p_cell]) - np.log2(pair_count))))
    return np.array([ncp_sum, height_sum, entropy])
