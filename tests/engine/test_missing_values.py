"""Missing values (issue 14, definitions.md "Missing values"): Adult with 5% blank ages and blank or NA
categories (seeded) through the pipeline with Flash, Mondrian and Datafly; every figure recomputed here
from the published rows and the hierarchy files, read with the csv module, not the engine."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, read_hierarchy, read_table
from anonymizer_app.engine.model.hierarchy import with_missing
from anonymizer_app.engine.model.missing import MISSING, NULL_LABEL, normalize_missing, parse_markers
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from tests.reference_data import ADULT

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
K, LIMIT = 5, 0.02


@pytest.fixture(scope="module")
def adult_with_blanks():
    frame, _ = read_table(ADULT / "adult.csv")
    rng = np.random.default_rng(14)
    n = len(frame)
    frame = frame.copy()
    frame.loc[rng.random(n) < 0.05, "age"] = ""  # 5% blank ages
    frame.loc[rng.random(n) < 0.03, "workclass"] = ""  # blank categories
    frame.loc[rng.random(n) < 0.02, "education"] = "NA"  # an NA marker
    frame.loc[rng.random(n) < 0.01, "native-country"] = "?"
    roles = {c: "quasi-identifying" for c in QIS} | {"occupation": "sensitive"}
    hs = {c: read_hierarchy(ADULT / f"adult_hierarchy_{c}.csv") for c in QIS}
    return Table(frame, roles), hs, frame


def _paths(column: str, missing: bool = True) -> dict[str, list[str]]:
    """value -> [value, level 1, ..., root] from the ARX file, plus (``missing``: the column has a missing
    cell) the missing value's path."""
    with open(ADULT / f"adult_hierarchy_{column}.csv", newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh, delimiter=";") if r]
    paths = {r[0]: r for r in rows}
    height = len(rows[0]) - 1
    if missing:
        paths[""] = [""] + [NULL_LABEL] * (height - 1) + ["*"]
    return paths


def _ncp_of_cells(column: str, inputs: pd.Series, cells: pd.Series, missing: bool) -> np.ndarray:
    """NCP of every cell (definitions.md): categorical |leaves(g)|/|leaves(root)| with the missing leaf
    counted (when the column has one); age: interval width over the present values / their span; '*' 1;
    the input itself 0."""
    paths = _paths(column, missing)
    height = len(next(iter(paths.values()))) - 1
    if column == "age":
        present = pd.to_numeric(inputs[inputs != ""]).to_numpy()
        span = present.max() - present.min()
        by_label: dict[str, list[int]] = {}
        for v in set(present.tolist()):
            for label in paths[str(v)][1:]:
                by_label.setdefault(label, []).append(v)
        out = []
        for value, cell in zip(inputs, cells):
            if cell == value or cell == NULL_LABEL:
                out.append(0.0)
            elif cell == "*":
                out.append(1.0)
            elif cell in by_label:  # a hierarchy label: the present values under it
                out.append((max(by_label[cell]) - min(by_label[cell])) / span)
            else:  # a Mondrian range [lo-hi]
                lo, hi = (float(x) for x in cell[1:-1].split("-"))
                out.append((hi - lo) / span)
        return np.array(out)
    leaves_under: dict[tuple[int, str], int] = {}
    for path in paths.values():
        for lv in range(1, height + 1):
            leaves_under[(lv, path[lv])] = leaves_under.get((lv, path[lv]), 0) + 1
    total = len(paths)
    out = []
    for value, cell in zip(inputs, cells):
        if cell == value:
            out.append(0.0)
            continue
        lv = next(lv for lv in range(1, height + 1) if paths[value][lv] == cell)
        out.append(leaves_under[(lv, cell)] / total)
    return np.array(out)


def _figures(pub, frame: pd.DataFrame) -> dict:
    """The figures of a publication recomputed from its rows: classes, suppressed records, risks, NCP."""
    n = len(frame)
    rows = pub.rows
    published = pub.table.reset_index(drop=True)
    inputs = normalize_missing_frame(frame).iloc[rows].reset_index(drop=True)
    sizes = published.groupby(QIS, sort=False).size().to_numpy()
    suppressed = n - len(published)
    whole = normalize_missing_frame(frame)
    ncp = sum(_ncp_of_cells(c, inputs[c], published[c], bool((whole[c] == "").any())).sum() for c in QIS)
    ncp = (ncp + suppressed * len(QIS)) / (n * len(QIS))  # a suppressed record's cells cost 1 each
    return {"equivalence_classes": len(sizes), "min_class_size": int(sizes.min()), "suppressed": suppressed,
            "discernibility": int((sizes.astype(np.int64) ** 2).sum() + suppressed * n),
            "prosecutor_risk_highest": 1 / sizes.min(), "prosecutor_risk_average": len(sizes) / (n - suppressed),
            "ncp": ncp}


def normalize_missing_frame(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.apply(normalize_missing)


def _check(pub, frame):
    got = pub.result.metrics
    want = _figures(pub, frame)
    for key in ("equivalence_classes", "min_class_size", "suppressed", "discernibility"):
        assert got[key] == want[key], key
    for key in ("prosecutor_risk_highest", "prosecutor_risk_average", "ncp"):
        assert got[key] == pytest.approx(want[key], abs=1e-12), key
    assert want["min_class_size"] >= K and want["suppressed"] <= LIMIT * len(frame)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["flash", "datafly"])
def test_full_domain_with_missing_values(adult_with_blanks, algorithm):
    table, hs, frame = adult_with_blanks
    pub = pipeline.run(RunSpec.build(table, hs, algorithm, k=K, suppression_limit=LIMIT, sensitive="occupation"))
    _check(pub, frame)
    levels = pub.result.transformation
    inputs = normalize_missing_frame(frame).iloc[pub.rows].reset_index(drop=True)
    published = pub.table.reset_index(drop=True)
    for c in QIS:  # every cell is its input's ancestor at the transformation's level, missing ones too
        paths = _paths(c)
        assert published[c].tolist() == [paths[v][levels[c]] for v in inputs[c]]
    blank_age = inputs["age"] == ""
    assert blank_age.any()
    assert set(published.loc[blank_age, "age"]) == {["", NULL_LABEL, NULL_LABEL, NULL_LABEL, "*"][levels["age"]]}
    if algorithm == "flash":  # the default metric is NCP, and Flash's optimum is the exhaustive search's
        full = pipeline.run(RunSpec.build(table, hs, "exhaustive", k=K, suppression_limit=LIMIT,
                                          sensitive="occupation"))
        assert pub.result.search["metric"] == "ncp"
        assert full.result.metrics["ncp"] == pytest.approx(pub.result.metrics["ncp"], abs=1e-12)


@pytest.mark.slow
def test_mondrian_with_missing_values(adult_with_blanks):
    table, hs, frame = adult_with_blanks
    pub = pipeline.run(RunSpec.build(table, hs, "mondrian", k=K, suppression_limit=LIMIT, sensitive="occupation"))
    _check(pub, frame)
    inputs = normalize_missing_frame(frame).iloc[pub.rows].reset_index(drop=True)
    published = pub.table.reset_index(drop=True)
    # a missing age is published as itself (a class of missing ages) or '*' (a class mixing it with numbers)
    blank = inputs["age"] == ""
    assert set(published.loc[blank, "age"]) <= {"", "*"}
    classes = published.groupby(QIS, sort=False).ngroup()
    for cls in classes[blank & (published["age"] == "*")].unique():
        members = inputs["age"][classes == cls]
        assert (members == "").any() and (members != "").any()
    for cls in classes[blank & (published["age"] == "")].unique():
        assert (inputs["age"][classes == cls] == "").all()


def test_markers_and_the_null_leaf():
    assert parse_markers(None) == ("", "NA", "N/A", "?", "null", "NaN")
    assert parse_markers("?, n/a") == ("", "?", "n/a") and parse_markers("") == ("",)
    s = pd.Series(["3", " na ", "NULL", "None", "?", "nan", ""])
    assert normalize_missing(s).tolist() == ["3", "", "", "None", "", "", ""]
    h = with_missing(read_hierarchy(ADULT / "adult_hierarchy_workclass.csv"))
    assert [h.ancestor(MISSING, lv) for lv in range(h.level_count)] == ["", NULL_LABEL, "*"]
    assert h.missing_values(["Private", "", "NA", "Mars"]) == ["Mars"]


def test_a_missing_numeric_sensitive_value_is_ordered_after_every_number():
    from anonymizer_app.engine.privacy.distributions import sensitive_domain

    frame = pd.DataFrame({"q": ["a", "b", "c", "d"], "income": ["30", "", "4", "NA"]})
    domain = sensitive_domain(Table(frame, {"q": "qi", "income": "sensitive"}).frame, "income")
    assert domain.numeric and list(domain.values) == ["4", "30", ""]


def test_risk_analysis_counts_missing_cells_as_one_value():
    """engine.measure.risk reads blanks and NA markers as a run does: one class for (missing, F) here."""
    from anonymizer_app.engine.measure.risk import analyze

    frame = pd.DataFrame({"age": ["", "NA", "?", "34"], "sex": ["F", "F", "F", "F"]})
    figures = analyze(frame, ["age", "sex"])
    assert (figures["equivalence_classes"], figures["sample_uniques"], figures["max_class_size"]) == (2, 1, 3)
