"""UCI Adult with the ARX hierarchies: reference EC counts and Datafly recounted from the output rows."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from anonymizer_app.engine import Table, anonymize, read_hierarchy, read_table
from anonymizer_app.engine.model.table import frequency_set
from tests.reference_data import ADULT

from . import _reference as ref

COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation",
           "salary-class"]
QIS = [c for c in COLUMNS if c != "occupation"]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    df, fmt = read_table(ADULT / "adult.csv")
    assert (fmt.delimiter, fmt.header) == (";", True)
    return df


@pytest.fixture(scope="module")
def hierarchies() -> dict:
    return {c: read_hierarchy(ADULT / f"adult_hierarchy_{c}.csv") for c in COLUMNS}


@pytest.fixture(scope="module")
def raw_rows() -> list[dict]:
    with open(ADULT / "adult.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter=";"))


@pytest.fixture(scope="module")
def ref_hierarchies() -> dict:
    return {c: ref.read_hierarchy(ADULT / f"adult_hierarchy_{c}.csv", delimiter=";") for c in COLUMNS}


def test_data_and_hierarchy_shapes(frame, hierarchies, ref_hierarchies):
    assert frame.shape == (30162, 9)
    assert list(frame.columns) == COLUMNS
    # datasets/README.md: levels including the original
    levels = {"sex": 2, "age": 5, "race": 2, "marital-status": 3, "education": 4, "native-country": 3,
              "workclass": 3, "occupation": 3, "salary-class": 2}
    assert {c: h.level_count for c, h in hierarchies.items()} == levels
    assert {c: ref.height(h) + 1 for c, h in ref_hierarchies.items()} == levels
    lattice = 1
    for c in QIS:
        lattice *= levels[c]
    assert lattice == 4320
    assert lattice * levels["occupation"] == 12960


@pytest.mark.parametrize("qis,expected", [(COLUMNS, 19502), (QIS, 12458)], ids=["all-9", "8-qis"])
def test_raw_equivalence_classes(qis, expected, frame, hierarchies, raw_rows):
    roles = {c: ("quasi-identifying" if c in qis else "sensitive") for c in COLUMNS}
    table = Table(frame, roles)
    assert len(frequency_set(table.encode(hierarchies)).counts) == expected
    # the same count without the engine
    assert len({tuple(r[c] for c in qis) for r in raw_rows}) == expected
    assert len(frame.drop_duplicates(subset=qis)) == expected


# Cross-checked with the reference Datafly of _reference.py (test below asserts the equality).
EXPECTED_LEVELS = {
    0.0: {"sex": 0, "age": 4, "race": 1, "marital-status": 1, "education": 3, "native-country": 2,
          "workclass": 2, "salary-class": 0},
    0.04: {"sex": 0, "age": 3, "race": 0, "marital-status": 1, "education": 1, "native-country": 1,
           "workclass": 1, "salary-class": 0},
}


@pytest.fixture(scope="module")
def results(frame, hierarchies) -> dict:
    roles = {c: "quasi-identifying" for c in QIS}
    roles["occupation"] = "sensitive"
    table = Table(frame, roles)
    out = {}
    for limit in (0.0, 0.04):
        result = anonymize(table, hierarchies, k=5, suppression_limit=limit)
        out[limit] = (table, result)
    return out


@pytest.mark.parametrize("limit", [0.0, 0.04])
def test_datafly_recount(limit, results, hierarchies, frame, ref_hierarchies):
    table, result = results[limit]
    result.verify(table, hierarchies)  # also done inside anonymize()
    assert result.verified
    report = result.report()
    out = result.output
    assert list(out.columns) == COLUMNS
    assert out["occupation"].tolist() == frame["occupation"].tolist()

    # Suppressed rows show '*' in every QI. sex stays at level 0 here, so a kept row never does.
    assert result.transformation["sex"] == 0
    suppressed = (out[QIS] == "*").all(axis=1)
    assert suppressed.tolist() == result.suppressed.tolist()
    assert int(suppressed.sum()) <= int(limit * len(out))

    # every kept cell is the ancestor at the reported level, per the hierarchy file read with csv
    kept = out[~suppressed]
    for c in QIS:
        lv = result.transformation[c]
        expected = [ref_hierarchies[c][v][lv] for v in frame.loc[~suppressed, c]]
        assert kept[c].tolist() == expected, c

    sizes = kept.groupby(QIS, sort=False).size()
    n = len(out)
    n_sup = int(suppressed.sum())
    assert report["k_achieved"] == int(sizes.min()) >= 5
    assert report["equivalence_classes"] == len(sizes)
    assert report["suppressed"] == n_sup
    assert result.metrics["discernibility"] == int((sizes.astype("int64") ** 2).sum()) + n_sup * n


def test_datafly_levels_match_reference(results, raw_rows, ref_hierarchies):
    for limit, levels in EXPECTED_LEVELS.items():
        _, result = results[limit]
        run = ref.datafly(raw_rows, QIS, ref_hierarchies, 5, limit)
        assert run["levels"] == levels
        assert result.transformation == levels
        fig = ref.figures(raw_rows, run, "occupation")
        m = result.metrics
        assert (m["suppressed"], m["equivalence_classes"], m["min_class_size"], m["discernibility"]) == (
            fig["suppressed"], fig["equivalence_classes"], fig["min_class_size"], fig["discernibility"])
        assert (m["homogeneous_classes"], m["homogeneous_records"]) == (
            fig["homogeneous_classes"], fig["homogeneous_records"])
        assert [s.get("generalized") for s in result.steps] == [s.get("generalized") for s in run["steps"]]


def test_datafly_literal_figures(results):
    # k=5, no suppression: 8 classes, smallest 406 (values checked against the reference above)
    m = results[0.0][1].metrics
    assert (m["suppressed"], m["equivalence_classes"], m["min_class_size"]) == (0, 8, 406)
    assert m["discernibility"] == 194239512
    # k=5, 4 % (at most 1206 records): 1178 suppressed, 370 classes of at least 5
    m = results[0.04][1].metrics
    assert (m["suppressed"], m["equivalence_classes"], m["min_class_size"]) == (1178, 370, 5)
    assert m["discernibility"] == 53291920
