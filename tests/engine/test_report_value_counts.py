"""The report's value counts before and after, counted from the run's leaf codes where they stand for the cells,
against pandas' own count of the texts of the input and of the published table (values.astype(str).value_counts():
the same values, counts and order), on random tables: missing cells, suppressed rows removed or kept, labels
'*' below the root, the published '*' of suppressed rows beside a label '*', a dictionary-read table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, Role, Table, parse_hierarchy, read_table
from anonymizer_app.engine.run import pipeline, report
from anonymizer_app.engine.run.spec import RunSpec

QI = Role.QUASI_IDENTIFYING
ROLES = {"age": QI, "city": QI, "sex": QI, "pay": Role.INSENSITIVE}


def expected(values: pd.Series) -> dict:
    counts = values.astype(str).value_counts()
    return {"values": [str(v) for v in counts.index[:30]], "counts": [int(c) for c in counts.to_numpy()[:30]],
            "distinct": int(len(counts)), "rows": int(len(values))}


def random_case(seed: int) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    ages = rng.integers(0, 60, n)
    frame = pd.DataFrame({
        "age": ages.astype(str),
        # 'city' has many values (more than the 30 listed), some of them missing ('' and NA markers)
        "city": np.array([f"c{i}" for i in range(45)] + ["", "NA"], dtype=object)[rng.integers(0, 47, n)],
        "sex": rng.choice(["m", "f"], n),
        "pay": rng.integers(1, 9, n).astype(str),
    })
    hierarchies = {
        # the level below the root already '*' for some ages: two labels '*' on two levels
        "age": "\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'*' if a < 30 else 'old'};*" for a in range(60)),
        "city": "\n".join(f"c{i};r{i % 4};*" for i in range(45)),
        "sex": "m;*\nf;*",
    }
    return frame, hierarchies


def run(frame: pd.DataFrame, texts: dict, suppression: float, keep: bool, k: int):
    """The publication and the input table of a Flash run (k, suppression limit, suppressed rows kept or not)."""
    table = Table(frame, ROLES)
    hs = {c: parse_hierarchy(t, c) for c, t in texts.items()}
    spec = RunSpec.build(table, hs, "flash", k=k, suppression_limit=suppression,
                         suppressed_rows="keep" if keep else "remove", options={"metric": "discernibility"})
    return pipeline.run(spec), table


def check(publication, table: Table) -> None:
    counts = publication.report["value_counts"]
    assert set(counts) == {"age", "city", "sex"}
    for col, found in counts.items():
        assert found["before"] == expected(table.frame[col])
        assert found["after"] == expected(publication.table[col])


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("suppression,keep", [(0.0, False), (0.1, False), (0.1, True)])
def test_counts_from_codes_are_the_text_counts(seed, suppression, keep, monkeypatch):
    frame, texts = random_case(seed)
    hashed: list[str] = []
    original = report._text_counts
    monkeypatch.setattr(report, "_text_counts", lambda values: hashed.append(values.name) or original(values))
    k = int(np.random.default_rng(seed).integers(2, 6))
    try:
        publication, table = run(frame, texts, suppression, keep, k)
    except InputError:  # the suppressed records kept as one class would break k: published without suppression
        publication, table = run(frame, texts, 0.0, keep, k)
    check(publication, table)
    assert not {"age", "city", "sex"} & set(hashed)  # every QI counted from the codes


def test_suppressed_rows_kept_beside_a_label_star():
    # 'b' generalized to its top label '*' and the suppressed rows kept as '*': one value '*' in the report
    a = ["p"] * 10 + ["q"] * 10 + ["r"] * 3 + ["s"] * 2
    b = ["z1"] * 4 + ["z2"] * 6 + ["z1"] * 3 + ["z2"] * 7 + ["z1", "z2", "z1", "z2", "z1"]
    table = Table(pd.DataFrame({"a": a, "b": b}), {"a": Role.QUASI_IDENTIFYING, "b": Role.QUASI_IDENTIFYING})
    hs = {"a": parse_hierarchy("p;P;*\nq;Q;*\nr;R;*\ns;S;*", "a"), "b": parse_hierarchy("z1;*\nz2;*", "b")}
    publication = pipeline.run(RunSpec.build(table, hs, "flash", k=5, suppression_limit=0.2, suppressed_rows="keep",
                                             options={"metric": "discernibility"}))
    assert publication.suppressed.sum() == 5 and set(publication.table["b"]) == {"*"}
    counts = publication.report["value_counts"]
    for col in ("a", "b"):
        assert counts[col]["before"] == expected(table.frame[col])
        assert counts[col]["after"] == expected(publication.table[col])
    assert counts["b"]["after"]["values"] == ["*"] and counts["b"]["after"]["counts"] == [25]


def test_dictionary_read_table():
    frame, texts = random_case(5)
    read, _ = read_table(frame.to_csv(sep=";", index=False).encode(), filename="t.csv", dictionary=True)
    table = Table(read, ROLES)
    assert table.dictionaries
    hs = {c: parse_hierarchy(t, c) for c, t in texts.items()}
    publication = pipeline.run(RunSpec.build(table, hs, "flash", k=3, suppression_limit=0.1,
                                             options={"metric": "discernibility"}))
    check(publication, table)


def test_cells_that_are_not_the_labels_are_hashed():
    # a published column whose cells are not the label objects of the rows' leaves: counted from its cells
    frame, texts = random_case(1)
    publication, table = run(frame, texts, 0.0, False, k=2)
    publication.table["sex"] = publication.table["sex"].map(lambda v: "other " + v)
    coded = report._coded_value_counts(publication, table, publication.result.hierarchies)
    assert "after" not in coded["sex"] and "after" in coded["age"]
    assert report.value_counts(publication.table["sex"]) == expected(publication.table["sex"])
