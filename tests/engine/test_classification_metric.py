"""ARX's classification metric (MetricSDClassification, one target column outside the QIs) as a lattice metric:
the optimum of Flash and of the exhaustive search equals a brute force over every node of the lattice, computed
here from the hierarchy files with pandas (classes by the generalized values, the k test, the suppression
budget, each class's target counts, the tie rule), on a small table by hand and on Adult's 7-QI lattice with
salary-class as the target."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, Table, anonymize, read_hierarchy, read_table
from tests.reference_data import ADULT

Q7 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


def _levels_of(path) -> list[dict]:
    """Per level, leaf value -> label, read from an ARX hierarchy file (leaf;level1;...)."""
    rows = pd.read_csv(path, sep=";", header=None, dtype=str, keep_default_na=False)
    return [dict(zip(rows[0], rows[lv])) for lv in range(rows.shape[1])]


def _penalty(frame: pd.DataFrame, qi: list[str], target: str, maps: dict, levels: tuple, k: int,
             budget: int) -> float | None:
    """The metric of a node by brute force (None: the node is not k-anonymous within the budget)."""
    gen = pd.DataFrame({c: frame[c].astype(str).map(maps[c][lv]) for c, lv in zip(qi, levels)})
    key = gen.apply(tuple, axis=1)
    size = key.map(key.value_counts())
    small = size < k
    if int(small.sum()) > budget:
        return None
    penalty = int(small.sum())
    kept = pd.DataFrame({"key": key[~small], "y": frame[target].astype(str)[~small]})
    for _, group in kept.groupby("key"):
        counts = sorted(group["y"].value_counts().tolist(), reverse=True)
        tied = len(counts) > 1 and counts[0] == counts[1]
        penalty += len(group) if tied else len(group) - counts[0]
    return penalty / len(frame)


def _brute_optimum(frame, qi, target, maps, k, budget):
    heights = [len(maps[c]) - 1 for c in qi]
    best, at = math.inf, []
    for levels in itertools.product(*[range(h + 1) for h in heights]):
        value = _penalty(frame, qi, target, maps, levels, k, budget)
        if value is None:
            continue
        if value < best - 1e-12:
            best, at = value, [levels]
        elif abs(value - best) <= 1e-12:
            at.append(levels)
    return best, at


@pytest.fixture
def small(tmp_path):
    """12 records, QIs age (3 levels) and zip (3 levels), target y with a tie in some classes."""
    frame = pd.DataFrame({
        "age": ["21", "22", "23", "24", "31", "32", "33", "34", "41", "42", "43", "44"],
        "zip": ["100", "101", "100", "101", "200", "201", "200", "201", "100", "201", "100", "201"],
        "y": ["a", "a", "b", "a", "b", "b", "a", "b", "a", "b", "b", "a"],
    })
    age = [[a, a[0] + "x", "*"] for a in frame["age"]]
    zipc = [[z, z[0] + "xx", "*"] for z in sorted(set(frame["zip"]))]
    (tmp_path / "age.csv").write_text("\n".join(";".join(r) for r in age) + "\n")
    (tmp_path / "zip.csv").write_text("\n".join(";".join(r) for r in zipc) + "\n")
    hs = {"age": read_hierarchy(tmp_path / "age.csv", "age"), "zip": read_hierarchy(tmp_path / "zip.csv", "zip")}
    maps = {"age": _levels_of(tmp_path / "age.csv"), "zip": _levels_of(tmp_path / "zip.csv")}
    return frame, hs, maps


def test_penalty_by_hand(small):
    frame, _, maps = small
    # level (1, 2): classes by decade, zip removed: 2x: a a b a -> 1; 3x: b b a b -> 1; 4x: a b b a -> tie, 4
    assert _penalty(frame, ["age", "zip"], "y", maps, (1, 2), 2, 0) == pytest.approx(6 / 12)
    # (2, 2): one class of 6 a / 6 b: a tie, every record costs 1
    assert _penalty(frame, ["age", "zip"], "y", maps, (2, 2), 2, 0) == pytest.approx(1.0)


@pytest.mark.parametrize("algorithm", ["flash", "exhaustive"])
@pytest.mark.parametrize("k,limit", [(2, 0.0), (2, 0.25), (3, 0.0), (3, 0.5)])
def test_small_table_equals_brute_force(small, algorithm, k, limit):
    frame, hs, maps = small
    table = Table(frame, {"age": "quasi-identifying", "zip": "quasi-identifying", "y": "insensitive"})
    result = anonymize(table, hs, algorithm, k=k, suppression_limit=limit,
                       options={"metric": "classification", "target": "y"})
    best, at = _brute_optimum(frame, ["age", "zip"], "y", maps, k, math.floor(limit * len(frame) + 1e-9))
    levels = tuple(result.search["optimum_levels"][c] for c in ("age", "zip"))
    assert result.search["optimum_value"] == pytest.approx(best)
    assert levels in at


@pytest.fixture(scope="module")
def adult():
    frame, _ = read_table(ADULT / "adult.csv")
    hs = {c: read_hierarchy(ADULT / f"adult_hierarchy_{c}.csv", c) for c in Q7}
    maps = {c: _levels_of(ADULT / f"adult_hierarchy_{c}.csv") for c in Q7}
    return frame[Q7 + ["salary-class"]], hs, maps


def _adult_brute(frame, maps, k, budget):
    """Every node of the 7-QI lattice at once with numpy: per QI and level the label codes, per node the classes
    (np.unique of the code rows), the k test, and each class's target counts."""
    y = pd.factorize(frame["salary-class"].astype(str))[0]
    codes = {c: [pd.factorize(frame[c].astype(str).map(maps[c][lv]))[0] for lv in range(len(maps[c]))]
             for c in Q7}
    heights = [len(maps[c]) - 1 for c in Q7]
    values = {}
    for levels in itertools.product(*[range(h + 1) for h in heights]):
        key = np.zeros(len(frame), dtype=np.int64)
        for c, lv in zip(Q7, levels):  # the generalized tuple as one mixed-radix number
            key = key * (int(codes[c][lv].max()) + 1) + codes[c][lv]
        _, cls, sizes = np.unique(key, return_inverse=True, return_counts=True)
        cls = cls.reshape(-1)
        small = sizes[cls] < k
        if int(small.sum()) > budget:
            continue
        table = np.zeros((len(sizes), 2), dtype=np.int64)
        np.add.at(table, (cls[~small], y[~small]), 1)
        top = table.max(axis=1)
        tied = (table[:, 0] == table[:, 1]) & (table.sum(axis=1) > 0)
        cost = np.where(tied, table.sum(axis=1), table.sum(axis=1) - top)
        values[levels] = (int(cost.sum()) + int(small.sum())) / len(frame)
    return values


@pytest.mark.slow
@pytest.mark.parametrize("limit", [0.0, 0.02])
def test_adult_lattice_equals_brute_force(adult, limit):
    frame, hs, maps = adult
    values = _adult_brute(frame, maps, 5, math.floor(limit * len(frame) + 1e-9))
    best = min(values.values())
    table = Table(frame, {**{c: "quasi-identifying" for c in Q7}, "salary-class": "insensitive"})
    result = anonymize(table, hs, "flash", k=5, suppression_limit=limit,
                       options={"metric": "classification", "target": "salary-class"})
    levels = tuple(result.search["optimum_levels"][c] for c in Q7)
    assert result.search["optimum_value"] == pytest.approx(best)
    assert values[levels] == pytest.approx(best)


def test_target_refused_when_missing_or_a_qi(small):
    frame, hs, _ = small
    table = Table(frame, {"age": "quasi-identifying", "zip": "quasi-identifying", "y": "insensitive"})
    with pytest.raises(InputError, match="needs a target column"):
        anonymize(table, hs, "flash", k=2, options={"metric": "classification"})
    with pytest.raises(InputError, match="is a quasi-identifier"):
        anonymize(table, hs, "flash", k=2, options={"metric": "classification", "target": "age"})
    with pytest.raises(InputError, match="unknown column"):
        anonymize(table, hs, "flash", k=2, options={"metric": "classification", "target": "nope"})
