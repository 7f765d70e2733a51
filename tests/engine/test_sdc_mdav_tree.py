"""The k-d tree MDAV search (microaggregation_mdav_tree) against the loops that pass over every remaining record
(microaggregation_mdav's numpy loop, and its compiled loop on larger tables): the same groups, member for member
in the same order, on random tables full of ties and on sdcMicro's data sets. The loops share no code with the
tree search; test_sdc_microaggregation ties them to a plain-Python replay of sdcMicro's Mdav.cpp."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("numba")

from anonymizer_app.engine.errors import InputError  # noqa: E402
from anonymizer_app.engine.sdc import microaggregation_mdav_tree  # noqa: E402
from anonymizer_app.engine.sdc.microaggregation_mdav import (  # noqa: E402
    Grouping,
    _tree_groups,
    group_means,
    mdav_groups,
    tree_search_applies,
    variable_weights,
)

SDCMICRO = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "sdcmicro"


def assert_same(tree: Grouping, loop: Grouping, x: np.ndarray) -> None:
    assert np.array_equal(tree.group_of_row, loop.group_of_row)
    assert len(tree.members) == len(loop.members)
    assert all(np.array_equal(a, b) for a, b in zip(tree.members, loop.members, strict=True))
    assert tree.last_divides_by_size == loop.last_divides_by_size
    assert np.array_equal(group_means(x, tree), group_means(x, loop), equal_nan=True)


def random_table(seed: int) -> tuple[np.ndarray, int]:
    """A table of 1..400 rows, 1..5 variables and a k of 2..10, of one of six kinds, most of them tie-heavy."""
    rng = np.random.default_rng(seed)
    n, p, k = int(rng.integers(1, 401)), int(rng.integers(1, 6)), int(rng.integers(2, 11))
    kind = seed % 6
    if kind == 0:  # continuous
        x = rng.normal(size=(n, p))
    elif kind == 1:  # three values per variable: most distances tie
        x = rng.integers(0, 3, size=(n, p)).astype(float)
    elif kind == 2:  # rounded, income-like
        x = np.round(rng.lognormal(3, 1, size=(n, p)), 1)
    elif kind == 3:  # duplicated rows
        base = rng.normal(size=(max(2, n // 7), p))
        x = base[rng.integers(0, base.shape[0], size=n)]
    elif kind == 4:  # symmetric around a round centroid: distinct rows at equal distances from it
        half = rng.integers(-4, 5, size=(max(1, n // 2), p)).astype(float)
        x = np.concatenate([half, -half])[rng.permutation(2 * half.shape[0])]
    else:  # different scales, a constant column among them
        x = np.round(rng.normal(size=(n, p)) * 10.0 ** rng.integers(-3, 6, size=p).astype(float), 2)
        x[:, 0] = 7.0
    return x, k


@pytest.mark.parametrize("seed", range(240))
def test_tree_makes_the_loops_groups_on_random_tables(seed):
    x, k = random_table(seed)
    if not tree_search_applies(x, variable_weights(x)[0]):  # e.g. a variance below 0 from cancellation
        with pytest.raises(InputError, match="positive variances"):
            mdav_groups(x, k, search="tree")
        return
    assert_same(mdav_groups(x, k, search="tree"), mdav_groups(x, k, search="scan", compiled=False), x)


@pytest.mark.parametrize("seed", range(6))
def test_tree_makes_the_compiled_loops_groups_on_larger_tables(seed):
    rng = np.random.default_rng(100 + seed)
    n, p, k = 6000, 1 + seed % 5, 2 + seed
    kinds = [
        np.round(rng.lognormal(8, 1, size=(n, p)), 0),
        rng.integers(0, 4, size=(n, p)).astype(float),
        np.round(rng.normal(size=(n, p)), 2),
    ]
    x = kinds[seed % 3]
    assert_same(mdav_groups(x, k, search="tree"), mdav_groups(x, k, search="scan", compiled=True), x)


def _sdcmicro_tables() -> dict[str, np.ndarray]:
    testdata = pd.read_csv(SDCMICRO / "testdata.csv")
    return {
        "testdata": testdata[["expend", "income", "savings"]].to_numpy(dtype=float),
        "microData": pd.read_csv(SDCMICRO / "microData.csv").drop(columns="rowname").to_numpy(dtype=float),
        "Tarragona": pd.read_csv(SDCMICRO / "Tarragona.csv").to_numpy(dtype=float),
        "CASCrefmicrodata": pd.read_csv(SDCMICRO / "CASCrefmicrodata.csv").to_numpy(dtype=float),
    }


@pytest.mark.parametrize("k", [3, 5])
@pytest.mark.parametrize("name", ["testdata", "microData", "Tarragona", "CASCrefmicrodata"])
def test_tree_makes_the_loops_groups_on_sdcmicro_data(name, k):
    x = _sdcmicro_tables()[name]
    assert not np.isnan(x).any()
    assert_same(mdav_groups(x, k, search="tree"), mdav_groups(x, k, search="scan"), x)


def test_rows_tied_with_the_farthest_make_the_loops_sum():
    # points and their mirror images: the centroid is 0 and distinct rows lie at equal distances from it, so the
    # centroid's interval cannot decide and the loops' left-to-right sum is computed
    rng = np.random.default_rng(3)
    half = rng.integers(-20, 21, size=(300, 2)).astype(float)
    x = np.concatenate([half, -half])
    tree = mdav_groups(x, 3, search="tree")
    assert tree.rounds_summed > 0
    assert_same(tree, mdav_groups(x, 3, search="scan", compiled=False), x)


@pytest.mark.parametrize("buffer", [1, 2, 5])
@pytest.mark.parametrize("seed", [0, 2, 4, 7])
def test_a_small_buffer_for_the_centroids_search(seed, buffer):
    # the rows possibly farthest from the centroid overflow the buffer: dropped as L grows, or searched again
    x, k = random_table(seed)
    weights = variable_weights(x)[0]
    tree = _tree_groups(x, k, weights, microaggregation_mdav_tree, lambda fraction, phase: None, candidates=buffer)
    assert_same(tree, mdav_groups(x, k, search="scan", compiled=False), x)


def test_one_group_and_fewer_than_2k_rows():
    x = np.arange(10.0).reshape(5, 2)
    assert_same(mdav_groups(x, 3, search="tree"), mdav_groups(x, 3, search="scan", compiled=False), x)
    x = np.arange(16.0).reshape(8, 2)  # 2k <= 8 < 3k: rounds of one group
    assert_same(mdav_groups(x, 3, search="tree"), mdav_groups(x, 3, search="scan", compiled=False), x)


def test_missing_cells_keep_the_loops():
    x = np.round(np.random.default_rng(4).normal(size=(4000, 3)), 1)
    x[5, 1] = np.nan
    with pytest.raises(InputError, match="without missing"):
        mdav_groups(x, 3, search="tree")
    assert_same(mdav_groups(x, 3), mdav_groups(x, 3, search="scan"), x)  # auto: the loop, not the tree


def test_where_the_bounds_do_not_hold():
    x = np.random.default_rng(6).normal(size=(50, 2))
    weights, _ = variable_weights(x)
    assert tree_search_applies(x, weights)
    assert not tree_search_applies(x, np.array([1.0, -1.0]))  # a variance below 0 from cancellation
    infinite = x.copy()
    infinite[0, 0] = np.inf
    assert not tree_search_applies(infinite, weights)
    assert not tree_search_applies(x * 1e20, np.ones(2))  # single-precision distances would overflow
    with pytest.raises(InputError, match="unknown MDAV search"):
        mdav_groups(x, 3, search="grid")
