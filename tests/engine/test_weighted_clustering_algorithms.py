"""Attribute weights in the remaining clustering algorithms (issue 30): the disk-based hybrid (in memory and out
of core) and MHA's refinement take the run's ``weights`` option as k-member and OKA do (the weighted
record/centroid distance of search/attribute_weights.py); equal weights give the unweighted run byte for byte.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, Table, anonymize
from anonymizer_app.engine.algorithms import disk_clustering as D
from anonymizer_app.engine.algorithms import mha as M
from anonymizer_app.engine.backends.out_of_core import anonymize_out_of_core

from ._local import mixed_table

# two numeric QIs: x splits the records in two halves, y in two other halves (1 and 9 near 0 and 10)
FRAME = pd.DataFrame({"x": ["0", "0", "10", "10", "0", "0", "10", "10"],
                      "y": ["0", "10", "0", "10", "1", "9", "1", "9"]})


def _xy() -> Table:
    return Table(FRAME.copy(), {"x": "qi", "y": "qi"})


@pytest.mark.parametrize("seed", range(4))
def test_disk_clustering_clusters_by_the_weighted_qi(seed):
    table = _xy()
    by_x = anonymize(table, algorithm="disk-clustering", k=2, options={"weights": "x=1,y=0", "seed": seed})
    # only x counts: every cluster keeps x exact, y is generalized
    assert by_x.output["x"].tolist() == FRAME["x"].tolist()
    assert by_x.output["y"].tolist() == ["[0-1]", "[9-10]"] * 4
    by_y = anonymize(table, algorithm="disk-clustering", k=2, options={"weights": "x=0,y=1", "seed": seed})
    assert by_y.output["y"].tolist() == FRAME["y"].tolist()
    assert by_y.output["x"].tolist() == ["[0-10]"] * 8


def test_disk_clustering_buckets_get_the_factors(monkeypatch):
    """Every bucket is clustered with the run's factors w_j q / sum w (the Z-order key stays unweighted)."""
    seen = []
    real = D._cluster_bucket

    def spy(space, block, k, rng, tick=None, factors=None):
        seen.append(None if factors is None else factors.tolist())
        return real(space, block, k, rng, tick, factors)

    monkeypatch.setattr(D, "_cluster_bucket", spy)
    table, given = mixed_table(20_000, 2)  # several buckets at 1 MB
    qi = list(table.qi)
    anonymize(table, given, algorithm="disk-clustering", k=5,
              options={"memory_mb": 1, "weights": f"{qi[0]}=1,{qi[1]}=0.25"})
    assert len(seen) > 1 and all(f == pytest.approx([1.6, 0.4]) for f in seen)
    seen.clear()
    anonymize(table, given, algorithm="disk-clustering", k=5, options={"memory_mb": 1})
    assert seen and all(f is None for f in seen)


def test_disk_clustering_equal_weights_are_the_unweighted_run():
    table, given = mixed_table(4_000, 5)
    qi = list(table.qi)
    plain = anonymize(table, given, algorithm="disk-clustering", k=4, options={"memory_mb": 1})
    for text in ("", f"{qi[0]}=0.3,{qi[1]}=0.3", f"{qi[0]}=0.5"):
        same = anonymize(table, given, algorithm="disk-clustering", k=4, options={"memory_mb": 1, "weights": text})
        assert same.output.equals(plain.output)
        assert same.search == plain.search


def _out_of_core(frame: pd.DataFrame, options: dict) -> pd.DataFrame:
    pieces: list[pd.DataFrame] = []
    anonymize_out_of_core(lambda: iter([frame.iloc[:4], frame.iloc[4:]]), {"x": "qi", "y": "qi"}, {}, k=2,
                          options=options, write=pieces.append)
    return pd.concat(pieces, ignore_index=True)


def test_out_of_core_takes_the_weights():
    by_x = _out_of_core(FRAME, {"weights": "x=1,y=0"})
    assert by_x["x"].tolist() == FRAME["x"].tolist()
    by_y = _out_of_core(FRAME, {"weights": "x=0,y=1"})
    assert by_y["y"].tolist() == FRAME["y"].tolist()
    assert _out_of_core(FRAME, {"weights": "x=1,y=1"}).equals(_out_of_core(FRAME, {}))


@pytest.mark.parametrize("algorithm", ["disk-clustering", "mha"])
def test_bad_weights_refused(algorithm):
    table = _mha_table()
    with pytest.raises(InputError, match="'d' is not a quasi-identifier"):
        anonymize(table, algorithm=algorithm, k=2, options={"weights": "d=1"})
    with pytest.raises(InputError, match="at least one quasi-identifier needs a weight above 0"):
        anonymize(table, algorithm=algorithm, k=2, options={"weights": "age=0,sex=0"})


def _mha_table() -> Table:
    rng = np.random.default_rng(8)
    n = 300
    frame = pd.DataFrame({"age": rng.integers(20, 70, n).astype(str), "sex": rng.choice(["m", "f"], n),
                          "salary": rng.choice(["lo", "mid", "hi"], n)})
    return Table(frame, {"age": "qi", "sex": "qi", "salary": "sensitive"})


def test_mha_refinement_takes_the_weights(monkeypatch):
    seen = []
    real = M.refine

    def spy(enc, *args, **kw):
        seen.append(None if enc.factors is None else enc.factors.tolist())
        return real(enc, *args, **kw)

    monkeypatch.setattr(M, "refine", spy)
    table = _mha_table()
    options = {"js l": 0.5, "mha beta": 1.0, "seed": 1}
    plain = anonymize(table, algorithm="mha", k=5, suppression_limit=0.5, options=options)
    assert seen == [None]
    weighted = anonymize(table, algorithm="mha", k=5, suppression_limit=0.5,
                         options=options | {"weights": "age=1,sex=0.25"})
    assert seen[1] == pytest.approx([1.6, 0.4])
    assert weighted.verified and plain.verified
    # steps 1-2 take no weights: the same background-knowledge clusters, published and suppressed alike
    for key in ("bk_clusters", "bk_clusters_published", "suppressed_small_clusters", "suppressed_beta_surplus"):
        assert weighted.search[key] == plain.search[key]
    # the record linkage stays the unweighted attacker's figure; equal weights are the unweighted run
    same = anonymize(table, algorithm="mha", k=5, suppression_limit=0.5, options=options | {"weights": "age=1,sex=1"})
    assert same.output.equals(plain.output) and same.search == plain.search
