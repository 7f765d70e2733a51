"""The solution lattice of a run: every full-domain transformation of its QIs, tagged under the run's
FULL specification (every privacy model, the suppression limit), with the metric the run optimized.

The lattice page, its node view and "keep this node" all work from the run's RunSpec: evaluation is
an exhaustive search with the spec's models (so "anonymous" means what the run's gate will accept),
a node is shown and kept by running the same spec with that node's transformation
(:func:`.pipeline.publish_levels`), through the same publishing gate.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..algorithms.base import ProgressCallback
from ..errors import InputError
from ..model.table import Table
from ..run.blas import one_blas_thread
from ..run.spec import RunSpec
from ..run.stages import search
from .lattice_metrics import METRIC_HELP as LATTICE_METRIC_HELP
from .lattice_metrics import REPORT_KEYS, WEIGHTED
from .lattice_search import METRIC

MAX_NODES = 250_000  # larger lattices are not evaluated on demand
SHOWN_LABELS = 3
METRIC_LABELS = {"discernibility": "Discernibility", "height": "Generalization height", "ncp": "NCP",
                 "entropy": "Non-uniform entropy", "loss": "Loss (ARX)",
                 "classification": "Classification (ARX)"}


def metric_of(options: dict | None) -> str:
    """The run's metric, or the searches' default (lattice_search.METRIC)."""
    metric = str((options or {}).get("metric") or METRIC.default)
    return metric if metric in REPORT_KEYS else str(METRIC.default)


def lattice_size(spec: RunSpec) -> int:
    table = spec.table
    assert isinstance(table, Table)
    hs = table.hierarchies(spec.hierarchies)
    size = 1
    for c in table.qi:
        size *= hs[c].height + 1
    return size


@one_blas_thread()
def evaluate(spec: RunSpec, metric: str | None = None, progress: ProgressCallback | None = None) -> dict:
    """Every node of the run's lattice under the run's full specification (exhaustive evaluation)."""
    table = spec.table
    if not isinstance(table, Table):
        raise InputError("the solution lattice needs the table in memory")
    metric = metric or metric_of(spec.options)
    size = lattice_size(spec)
    if size > MAX_NODES:
        raise InputError(f"the lattice has {size:,} nodes, more than the {MAX_NODES:,} evaluated on demand")
    options = {"metric": metric, "keep_lattice": "yes"}
    weights = str((spec.options or {}).get("weights") or "").strip()
    if weights and metric in WEIGHTED:  # the run's attribute weights, for the metrics that take them
        options["weights"] = weights
    if metric == "classification":  # the run's target column, which the metric reads
        options["target"] = str((spec.options or {}).get("target") or "")
    # the search's own export is the lattice: no rows are recoded, measured or verified for it
    recoding, built, _ = search(spec.with_algorithm("exhaustive", options), progress)
    info = recoding.info  # type: ignore[attr-defined]  # exhaustive: a FullDomainRecoding
    hs = built.all_hs
    data = build_lattice(info["lattice"], [hs[c] for c in table.qi], metric)
    data["models"] = [m.describe() for m in built.models]
    if info.get("weights"):  # the weights the values were computed with (unequal ones only)
        data["weights"] = info["weights"]
    return data


def _level_labels(h, level: int) -> str:
    labels = [str(x) for x in h.labels[level]]
    if level == 0:
        return f"original values ({len(labels)})"
    sample = ", ".join(labels[:SHOWN_LABELS]) + (", …" if len(labels) > SHOWN_LABELS else "")
    return f"{len(labels)} value(s): {sample}"


def _split(levels: str, sep: str) -> list[int]:
    return [int(x) for x in (levels.split(sep) if sep else levels)]


def build_lattice(stored: Mapping[str, Any], hierarchies: list, metric: str) -> dict:
    """The exported lattice (LatticeSearch.export) as columns for the plot, with ranks, positions and
    the frontier (minimal anonymous and maximal non-anonymous nodes)."""
    heights = [int(h) for h in stored["heights"]]
    shape = tuple(h + 1 for h in heights)
    sep = "" if max(shape, default=1) <= 10 else "."
    nodes = stored["nodes"]
    size = len(nodes)
    levels = np.array([_split(n[0], sep) for n in nodes], dtype=np.int64).reshape(size, len(shape))
    letters = [n[1] for n in nodes]
    values = [n[2] for n in nodes]
    index = np.ravel_multi_index(tuple(levels.T), shape) if len(shape) else np.zeros(size, dtype=np.int64)
    anon = np.zeros(shape, dtype=bool)
    known = np.zeros(shape, dtype=bool)
    flat_anon = np.array([t in "Aa" for t in letters], dtype=bool)
    flat_known = np.array([t != "?" for t in letters], dtype=bool)
    anon.reshape(-1)[index] = flat_anon
    known.reshape(-1)[index] = flat_known
    fail = known & ~anon
    has_anon_child = np.zeros(shape, dtype=bool)
    has_fail_parent = np.zeros(shape, dtype=bool)
    for j in range(len(shape)):
        lo = [slice(None)] * len(shape)
        hi = [slice(None)] * len(shape)
        lo[j] = slice(0, -1)
        hi[j] = slice(1, None)
        has_anon_child[tuple(hi)] |= anon[tuple(lo)]
        has_fail_parent[tuple(lo)] |= fail[tuple(hi)]
    frontier = ((anon & ~has_anon_child) | (fail & ~has_fail_parent)).reshape(-1)[index]
    ranks = levels.sum(axis=1)
    # position within the level: nodes of a rank in index order, centred on 0
    order = np.lexsort((index, ranks))
    x = np.zeros(size)
    counts = np.bincount(ranks, minlength=int(ranks.max(initial=0)) + 1)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    sorted_ranks = ranks[order]
    x[order] = np.arange(size) - starts[sorted_ranks] - (counts[sorted_ranks] - 1) / 2.0
    return {
        "qi": list(stored["qi"]),
        "heights": heights,
        "labels": [[_level_labels(h, lv) for lv in range(h.height + 1)] for h in hierarchies],
        "metric": metric,
        "metric_label": METRIC_LABELS.get(metric, metric),
        "metric_help": LATTICE_METRIC_HELP,
        "optimum": ",".join(str(v) for v in _split(stored["optimum"], sep)),
        "size": size,
        "anonymous": int(flat_anon.sum()),
        "frontier_count": int(frontier.sum()),
        "nodes": {
            "levels": [",".join(str(v) for v in row) for row in levels.tolist()],
            "tag": letters,
            "value": values,
            "rank": ranks.tolist(),
            "x": [float(v) for v in x],
            "frontier": [int(v) for v in frontier],
        },
    }
