"""k-member and OKA: clusters of k..2k-1 records, verified results, the distance of seed 003."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizer_app.engine import anonymize
from anonymizer_app.engine.search.distance import Centroids, Encoded
from anonymizer_app.engine.search.recoding import QISpace

from ._local import mixed_table, problem_of


@pytest.mark.parametrize("algorithm", ["kmember", "oka", "disk-clustering"])
@pytest.mark.parametrize("k", [2, 3, 7])
def test_cluster_sizes_between_k_and_2k_minus_1(algorithm, k):
    table, given = mixed_table(400, k)
    result = anonymize(table, given, algorithm=algorithm, k=k)
    assert result.verified
    assert result.report()["recoding"] == "local" and result.transformation is None
    assert result.search["smallest_cluster"] >= k
    assert result.search["largest_cluster"] <= 2 * k - 1
    assert result.metrics["min_class_size"] >= k


def test_distance_of_seed_003():
    table, given = mixed_table(50, 0)
    problem = problem_of(table, given, 2)
    space = QISpace(problem.hierarchies, [True, False], problem.codes)
    zone = problem.hierarchies[1]
    codes = np.array([[0, list(zone.leaves).index(z)] for z in ("a1", "a2", "b1", "a1")])
    ages = space.values[0][codes[:, 0]]
    enc = Encoded(space, codes)
    d = enc.distance_to_item(np.arange(4), 0)
    span = space.span[0]
    # zone: same value 0, siblings (LCA 'a', level 1 of 2) 1/2, different branches (root) 2/2
    assert d == pytest.approx([0, abs(ages[1] - ages[0]) / span + 0.5, abs(ages[2] - ages[0]) / span + 1.0, 0])
    cent = Centroids(enc, np.array([0]))
    cent.add(np.array([0]), np.array([1]))  # cluster {a1, a2}: centroid zone 'a', age the mean
    assert cent.level[0, 0] == 1
    d2 = enc.distance_pairs(np.array([2]), cent, np.array([0]))
    assert d2[0] == pytest.approx(abs(ages[2] - (ages[0] + ages[1]) / 2) / span + 1.0)


def test_identical_records_cluster_together():
    table, given = mixed_table(200, 3)
    frame = table.frame.copy()
    frame.loc[:29, "age"] = "40"
    frame.loc[:29, "zone"] = "a1"
    from anonymizer_app.engine import Table

    t2 = Table(frame, {"age": "qi", "zone": "qi", "disease": "sensitive"})
    for algorithm in ("kmember", "oka"):
        result = anonymize(t2, given, algorithm=algorithm, k=5)
        out = result.output.iloc[:30]
        assert (out["age"] == "40").all() and (out["zone"] == "a1").all()


def test_seed_option_changes_nothing_about_validity():
    table, given = mixed_table(120, 4)
    a = anonymize(table, given, algorithm="oka", k=4, options={"seed": 1})
    b = anonymize(table, given, algorithm="oka", k=4, options={"seed": 1})
    assert a.output.equals(b.output)
