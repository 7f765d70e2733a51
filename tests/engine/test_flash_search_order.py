"""Flash's bookkeeping (rank buckets, (levels, index) paths, memoryview tags, relative heights by broadcasting)
visits exactly the nodes of the plain formulation: start nodes by (rank, relative height, index) from one
lexsort, paths and heap on levels tuples, tags read from the lattice-shaped array. Same nodes checked in the
same order, same published table and search section, with and without suppression."""

from __future__ import annotations

import heapq

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, anonymize
from anonymizer_app.engine.algorithms import flash as flash_module
from anonymizer_app.engine.search.lattice import ANONYMOUS, PRUNED, UNKNOWN, Lattice

from ._lattice_helpers import make_hierarchy

FLASH = flash_module._flash


def _reference_flash(search) -> None:
    lat = search.lattice
    tags = search.tags
    heights = np.maximum(lat.heights, 1).astype(float)
    rel = (lat.all_levels() / heights).sum(axis=1)
    order = np.lexsort((np.arange(lat.size), rel, lat.all_levels().sum(axis=1, dtype=np.int64)))

    def find_path(node):
        path = [node]
        while True:
            best = None
            for up in lat.successors(node):
                if tags[up] == UNKNOWN:
                    cand = (rel[lat.index(up)], up)
                    if best is None or cand < best:
                        best = cand
            if best is None:
                return path
            node = best[1]
            path.append(node)

    heap: list = []

    def check_path(path):
        lo, hi = 0, len(path) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            node = path[mid]
            if tags[node] == UNKNOWN and not search.prune(node):
                search.check(node)
            if tags[node] in (ANONYMOUS, PRUNED):
                hi = mid - 1
            else:
                heapq.heappush(heap, (rel[lat.index(node)], node))
                lo = mid + 1

    for idx in order.tolist():
        if tags.flat[idx] != UNKNOWN:
            continue
        check_path(find_path(lat.levels(idx)))
        while heap:
            _, low = heapq.heappop(heap)
            for up in lat.successors(low):
                if tags[up] == UNKNOWN:
                    check_path(find_path(up))


def _table(seed: int):
    rng = np.random.default_rng(seed)
    cols, hs = {}, {}
    for j in range(int(rng.integers(2, 7))):
        d = int(rng.integers(2, 30))
        leaves = [f"v{j}_{i:02d}" for i in range(d)]
        hs[f"q{j}"] = make_hierarchy(f"q{j}", leaves, int(rng.integers(1, 5)), int(rng.integers(2, 4)))
        p = rng.random(d) ** 3 + 0.01
        cols[f"q{j}"] = np.array(leaves, dtype=object)[rng.choice(d, 1500, p=p / p.sum())]
    table = Table(pd.DataFrame(cols, dtype=object), {c: "quasi-identifying" for c in hs})
    return table, hs, int(rng.integers(2, 20))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("suppression", [0.0, 0.03])
def test_flash_checks_the_nodes_of_the_plain_formulation(seed, suppression, monkeypatch):
    table, hs, k = _table(seed)
    runs = []
    for impl in (_reference_flash, FLASH):
        checked: list[tuple[int, ...]] = []

        def run(search, impl=impl, checked=checked):
            record = search.record

            def logged(node, tag=True):
                checked.append(node.levels)
                return record(node, tag)

            search.record = logged
            impl(search)

        monkeypatch.setattr(flash_module, "_flash", run)
        r = anonymize(table, hs, "flash", k=k, suppression_limit=suppression, options={"metric": "discernibility"})
        search = {key: v for key, v in r.search.items() if key != "search_seconds"}
        runs.append((checked, r.output.to_csv(index=False), search))
    assert runs[0][0]  # nodes were checked
    assert runs[0] == runs[1]


@pytest.mark.parametrize("heights", [[3], [1, 4, 1, 2, 3, 2, 2, 2, 1], [2] * 8, [1, 2, 3] * 4, [1] * 17,
                                     [4, 1, 2, 1, 3, 1, 2, 1, 1, 2, 1]])
def test_relative_heights_and_ranks_are_the_matrix_row_sums(heights):
    lat = Lattice([make_hierarchy(f"q{j}", [f"v{i}" for i in range(2**h)], h, 2) for j, h in enumerate(heights)])
    assert lat.heights.tolist() == heights
    levels = lat.all_levels()
    rel = (levels / np.maximum(lat.heights, 1).astype(float)).sum(axis=1)
    assert np.array_equal(flash_module._relative_heights(lat), rel)  # the same floats, not just close
    assert np.array_equal(lat.ranks(), levels.sum(axis=1, dtype=np.int64))
