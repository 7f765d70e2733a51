"""Mondrian's top-level cuts from box histograms (engine.backends.dask.mondrian.top_cuts_by_histograms).

The histograms come from the raw rows cut into chunks (as the workers count their partitions) and are
summed; nothing of the frequency set is handed to the cutting code. Merged, they equal the counts the
single-process Mondrian works on, and cut to the end they give exactly mondrian.partition's partitions
and cuts per QI."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizer_app.engine import Table
from anonymizer_app.engine.algorithms import mondrian as mondrian_code

from ._dask_table import ROLES, hierarchies, people
from ._local import problem_of

dmondrian = pytest.importorskip("anonymizer_app.engine.backends.dask.mondrian")
partitions = pytest.importorskip("anonymizer_app.engine.backends.dask.partitions")


def _setup(n: int, seed: int, k: int, chunks: int = 5):
    frame = people(n, seed=seed).drop(columns=["income"])
    table = Table(frame, dict(ROLES))
    problem = problem_of(table, hierarchies(), k)
    qi = list(table.qi)
    raw = frame.astype(str)
    columns = [str(c) for c in raw.columns]
    bounds = np.linspace(0, n, chunks + 1).astype(int)
    calls: list[int] = []

    def histograms(boxes):
        calls.append(len(boxes))
        total = None
        for i in range(chunks):
            part = raw.iloc[bounds[i]:bounds[i + 1]].reset_index(drop=True)
            got = partitions.region_histograms(part, columns, qi, problem.hierarchies, (), boxes, i)
            total = got if total is None else [a + b for a, b in zip(total, got)]
        return total
    return problem, histograms, calls


def test_merged_histograms_equal_the_frequency_sets_counts():
    problem, histograms, _ = _setup(3_000, 1, 5)
    whole = [np.ones(len(h.leaves), dtype=bool) for h in problem.hierarchies]
    freq = problem.freq
    for j, counts in enumerate(histograms([whole])):
        expected = np.bincount(freq.codes[:, j], weights=freq.counts, minlength=len(problem.hierarchies[j].leaves))
        assert np.array_equal(counts[0], expected.astype(np.int64))
    # a box: zone in {a1, a2}, age below 40: the counts of the tuples inside it
    zone = problem.hierarchies[problem.table.qi.index("zone")]
    age = problem.hierarchies[problem.table.qi.index("age")]
    box = [m.copy() for m in whole]
    box[problem.table.qi.index("zone")] = np.isin(np.asarray(zone.leaves, dtype=object), ["a1", "a2"])
    box[problem.table.qi.index("age")] = np.array([int(v) < 40 for v in age.leaves])
    inside = dmondrian.box_tuples(freq.codes, box)
    for j, counts in enumerate(histograms([whole, box])):
        expected = np.bincount(freq.codes[inside, j], weights=freq.counts[inside],
                               minlength=len(problem.hierarchies[j].leaves))
        assert np.array_equal(counts[1], expected.astype(np.int64))
    assert int(histograms([box])[0].sum()) == int(freq.counts[inside].sum()) > 0


@pytest.mark.parametrize(("n", "seed", "k"), [(2_000, 0, 3), (5_000, 2, 7), (800, 3, 25)])
def test_cut_to_the_end_the_boxes_are_mondrians_partitions(n, seed, k):
    problem, histograms, calls = _setup(n, seed, k)
    tup, part, _, cuts, _ = mondrian_code.partition(problem)
    expected = {frozenset(tup[part == p].tolist()) for p in np.unique(part)}
    final, waiting, box_cuts = dmondrian.top_cuts_by_histograms(problem, 10**9, histograms)
    assert waiting == []
    got = [frozenset(dmondrian.box_tuples(problem.freq.codes, box).tolist()) for box in final]
    assert len(got) == len(expected) and set(got) == expected
    assert box_cuts.tolist() == cuts.tolist()
    assert len(calls) > 1  # one histogram pass per round of cuts


def test_stopped_early_the_boxes_cover_every_tuple_once_and_finish_as_one_process():
    problem, histograms, calls = _setup(5_000, 5, 4)
    final, waiting, cuts = dmondrian.top_cuts_by_histograms(problem, 8, histograms)
    assert len(waiting) >= 8 and sum(calls) < 20
    pieces = [dmondrian.box_tuples(problem.freq.codes, box) for box in final + waiting]
    covered = np.concatenate(pieces)
    assert np.array_equal(np.sort(covered), np.arange(len(problem.freq.counts)))
    tup, part, _, all_cuts, _ = mondrian_code.partition(problem)
    expected = {frozenset(tup[part == p].tolist()) for p in np.unique(part)}
    # each waiting box finished alone by mondrian.partition (as a worker does) gives the same partitions
    shared = dmondrian.Shared(problem.freq.codes, problem.freq.inverse, np.ones(len(problem.freq.inverse), np.int64),
                              {}, problem.hierarchies, list(problem.table.qi),
                              {c: problem.table.types[c] for c in problem.table.qi}, problem.models, 0.0, 0, {})
    got = {frozenset(p.tolist()) for p in pieces[:len(final)]}
    total = cuts.copy()
    for idx in pieces[len(final):]:
        t, p, c = dmondrian.finish_region(shared, idx)
        total += c
        got |= {frozenset(t[p == i].tolist()) for i in np.unique(p)}
    assert got == expected and total.tolist() == all_cuts.tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_counted_on_the_encoded_tuples_the_histograms_equal_the_rows(seed):
    """tuple_histograms on a partition encoded once by combinations (with a sensitive column, so that QI
    tuples repeat) equals region_histograms on the partition's rows, for random overlapping boxes."""
    rng = np.random.default_rng(seed)
    frame = people(1_500, seed=seed).drop(columns=["income"])
    problem = problem_of(Table(frame, dict(ROLES)), hierarchies(), 3)
    qi = list(problem.table.qi)
    raw = frame.astype(str)
    columns = [str(c) for c in raw.columns]
    sizes = [len(h.leaves) for h in problem.hierarchies]
    domain = np.unique(raw["disease"].to_numpy().astype(str)).astype(object)
    for i, (lo, hi) in enumerate([(0, 700), (700, 1_500), (1_500, 1_500)]):
        part = raw.iloc[lo:hi].reset_index(drop=True)
        encoded = partitions.combinations(part, columns, qi, problem.hierarchies, ["disease"], [domain], (), i)
        assert len(encoded[0]) < len(part) or not len(part)
        boxes = [[np.ones(s, dtype=bool) for s in sizes]]
        boxes += [[rng.random(s) < 0.6 for s in sizes] for _ in range(4)]
        expected = partitions.region_histograms(part, columns, qi, problem.hierarchies, (), boxes, i)
        kept = partitions.kept_codes(encoded, len(qi))
        assert kept[0].dtype == np.uint16 and kept[0].shape == (len(encoded[0]), len(qi))
        for got in (partitions.tuple_histograms(encoded, boxes, sizes), partitions.tuple_histograms(kept, boxes, sizes)):
            assert len(got) == len(expected)
            for a, b in zip(got, expected):
                assert a.dtype == np.int64 and np.array_equal(a, b)
