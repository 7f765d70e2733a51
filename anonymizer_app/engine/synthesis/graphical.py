"""The graphical-model estimation of the marginal-based synthesizers, on mbi (Private-PGM, McKenna et al.).

mbi runs on jax. Before mbi is imported, jax is set to 64-bit floats (mbi warns that float32 can stall or diverge
on large tables), its persistent compilation cache is switched off (nothing written to a shared disk) and it runs
on the CPU without probing other backends: set explicitly here, so mbi's import-time warnings never reach the
user. jax compiles one program per set of measured cliques: ``estimate`` pools the measurements of a clique so a
clique measured again reuses it. Everything else the synthesizers do (counting marginals, noise, selection) is
numpy/OpenDP; this module runs mbi, and tree_inference only reads a fitted model's potentials and junction tree."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@functools.cache
def _mbi() -> Any:
    import jax

    jax.config.update("jax_platforms", "cpu")  # no probing for TPU/GPU backends (it logs to stderr)
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import mbi
    return mbi


Clique = tuple[str, ...]


@dataclass
class Measurement:
    clique: Clique
    noisy: np.ndarray  # the noisy counts, flattened in the clique's C order
    sigma: float
    # each cell's weight in the fit (None: all 1): a cell whose noise is σ·w⁻¹ enters as w·(μ − y) (MST's
    # merged cells)
    weights: np.ndarray | None = None


def marginal(codes: dict[str, np.ndarray], sizes: dict[str, int], clique: Sequence[str]) -> np.ndarray:
    """The exact counts of a clique's cells (C order over the clique's columns), from the integer codes."""
    shape = tuple(sizes[c] for c in clique)
    flat = np.ravel_multi_index(tuple(codes[c] for c in clique), shape)
    return np.bincount(flat, minlength=int(np.prod(shape))).astype(float)


class Model:
    """A fitted graphical model: its marginals and sampling."""

    def __init__(self, fitted: Any):
        self.fitted = fitted

    def marginal(self, clique: Sequence[str]) -> np.ndarray:
        return np.asarray(self.fitted.project(tuple(clique)).datavector(flatten=True), dtype=float)

    @property
    def total(self) -> float:
        return float(self.fitted.total)

    def sample(self, rows: int, seed: int) -> dict[str, np.ndarray]:
        """Synthetic codes. mbi draws from numpy's global generator: seeded here and restored after, so a run
        with the same measurements and seed gives the same rows and nothing else's draws are disturbed."""
        state = np.random.get_state()
        np.random.seed(seed % 2**32)
        try:
            data = self.fitted.synthetic_data(rows=rows)
        finally:
            np.random.set_state(state)
        return {c: np.asarray(v, dtype=np.int64) for c, v in data.to_dict().items()}


def pooled(measurements: list[Measurement]) -> list[Measurement]:
    """One measurement per clique, in the order each clique was first measured: the inverse-variance weighted
    mean of its measurements, with 1/σ² = Σ 1/σᵢ². The fitting loss Σᵢ ‖μ − yᵢ‖²/(2σᵢ²) equals ‖μ − ȳ‖²/(2σ²)
    plus a constant, so the fit is the same (post-processing: no budget); and jax compiles one program per
    *set of cliques*, so a round that measures a clique again reuses the compiled program."""
    groups: dict[Clique, list[Measurement]] = {}
    for m in measurements:
        groups.setdefault(tuple(m.clique), []).append(m)
    out = []
    for clique, group in groups.items():
        if len(group) == 1 or any(m.weights is not None for m in group):
            out.extend(group)
            continue
        if len(group) == 1:
            out.append(group[0])
            continue
        weights = np.array([1.0 / (m.sigma * m.sigma) for m in group])
        mean = sum(w * np.asarray(m.noisy, dtype=float) for w, m in zip(weights, group)) / weights.sum()
        out.append(Measurement(clique, mean, float(1.0 / np.sqrt(weights.sum()))))
    return out


def estimate(sizes: dict[str, int], measurements: list[Measurement], iters: int,
             warm_start: Model | None = None, callback: Callable[[], None] | None = None) -> Model:
    """Fit the graphical model to the noisy marginals (mbi's mirror descent, weighted by 1/σ; measurements of
    the same clique pooled first)."""
    mbi = _mbi()
    domain = mbi.Domain(list(sizes), [sizes[c] for c in sizes])
    linear = []
    for m in pooled(measurements):
        if m.weights is None:
            linear.append(mbi.LinearMeasurement(np.asarray(m.noisy, dtype=float), tuple(m.clique),
                                                stddev=float(m.sigma)))
        else:
            weights = np.asarray(m.weights, dtype=float)
            linear.append(mbi.LinearMeasurement(np.asarray(m.noisy, dtype=float) * weights, tuple(m.clique),
                                                stddev=float(m.sigma),
                                                query=mbi.marginal_loss.WeightedQuery(weights)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = mbi.estimation.MirrorDescent().estimate(
            domain, linear, iters=iters, warm_start=warm_start.fitted if warm_start is not None else None,
            callback_fn=(lambda _: callback()) if callback is not None else None)
    return Model(fitted)


def model_size_mb(sizes: dict[str, int], cliques: list[Clique]) -> float:
    """The memory of the junction tree of a model on these cliques (8 bytes a cell), as AIM bounds it (cached:
    AIM asks again every round for each candidate, and the model's cliques change only when it adds one)."""
    return _model_size_mb(tuple(sizes.items()), tuple(tuple(c) for c in cliques))


@functools.lru_cache(maxsize=4096)
def _model_size_mb(sizes: tuple[tuple[str, int], ...], cliques: tuple[Clique, ...]) -> float:
    mbi = _mbi()
    domain = mbi.Domain([a for a, _ in sizes], [n for _, n in sizes])
    size = dict(sizes)
    tree, _ = mbi.junction_tree.make_junction_tree(domain, list(cliques))
    cells = sum(int(np.prod([size[a] for a in node])) for node in tree.nodes)
    return cells * 8 / 2**20
