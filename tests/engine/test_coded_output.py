"""A full-domain run holds its QI columns as codes into the level's labels (engine/run/coded.py): the cells read
through Result.output, Publication.table and a sink are the labels a loop over the rows finds, as object
cells; verification and the gate check the codes, and refuse a coded column that shows a wrong label."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Role, Table, VerificationError, anonymize, parse_hierarchy
from anonymizer_app.engine.model.hierarchy import ROOT
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.coded import cells_of, level_column, plain_frame
from anonymizer_app.engine.run.result import Result, verify_output
from anonymizer_app.engine.run.sinks import write_to
from anonymizer_app.engine.run.spec import RunSpec

AGE = "\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'young' if a < 40 else 'old'};*" for a in range(20, 60))
CITY = "\n".join(f"c{i};r{i % 3};*" for i in range(6))
AGE_LABELS = {a: [str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "young" if a < 40 else "old", "*"]
              for a in range(20, 60)}
CITY_LABELS = {f"c{i}": [f"c{i}", f"r{i % 3}", "*"] for i in range(6)}


def _table(seed: int, n: int = 500) -> tuple[Table, dict]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(20, 60, n).astype(str), "city": [f"c{i}" for i in rng.integers(0, 6, n)],
                          "note": rng.choice(["a", "b"], n), "disease": rng.choice(["flu", "cold", "hiv"], n)})
    table = Table(frame, {"age": Role.QUASI_IDENTIFYING, "city": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE})
    return table, {"age": parse_hierarchy(AGE, "age"), "city": parse_hierarchy(CITY, "city")}


def _expected(table: Table, levels: dict[str, int], suppressed: np.ndarray) -> pd.DataFrame:
    """The output row by row: each QI's label at its level from the tables above, '*' on a suppressed row."""
    rows = []
    for i, record in enumerate(table.frame.to_dict(orient="records")):
        age = "*" if suppressed[i] else AGE_LABELS[int(record["age"])][levels["age"]]
        city = "*" if suppressed[i] else CITY_LABELS[record["city"]][levels["city"]]
        rows.append({"age": age, "city": city, "note": record["note"], "disease": record["disease"]})
    return pd.DataFrame(rows, columns=["age", "city", "note", "disease"])


def test_level_column_is_each_rows_label() -> None:
    h = parse_hierarchy(AGE, "age")
    rng = np.random.default_rng(3)
    leaves = rng.integers(0, len(h.leaves), 1000)
    suppressed = rng.random(1000) < 0.1
    for level in range(h.level_count):
        column = level_column(h, level, leaves, suppressed)
        assert column is not None
        for i in range(1000):
            want = "*" if suppressed[i] else AGE_LABELS[int(h.leaves[leaves[i]])][level]
            assert column[i] == want
        assert column.categories.is_unique
        assert column.codes.dtype == np.int8  # 41 labels at most: one byte a row


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_run_reads_as_the_labels_of_its_rows(seed: int) -> None:
    table, hs = _table(seed)
    spec = RunSpec.build(table, hs, "flash", k=4 + seed, suppression_limit=0.05 * (seed % 2),
                         options={"metric": "discernibility"})
    chunks: list[pd.DataFrame] = []

    class Sink:
        def write(self, frame, suppressed, rows) -> None:
            chunks.append(frame)

    publication = pipeline.run(spec, sink=Sink())
    result = publication.result
    assert result is not None
    suppressed = np.asarray(result.suppressed, dtype=bool)
    assert result.transformation is not None
    expected = _expected(table, dict(result.transformation), suppressed)
    # the run held its QIs as codes; readers see object cells equal to the rows' labels
    assert all(isinstance(result.coded_output[c].dtype, pd.CategoricalDtype) for c in table.qi)
    written = pd.concat(chunks, ignore_index=True)
    assert all(written[c].dtype == object for c in written.columns)
    kept = expected[~suppressed].reset_index(drop=True)
    assert written.values.tolist() == kept.values.tolist()
    assert publication.table.values.tolist() == kept.values.tolist()
    assert all(publication.table[c].dtype == object for c in publication.table.columns)
    assert result.output.values.tolist() == expected.values.tolist()
    assert all(result.output[c].dtype == object for c in result.output.columns)
    # the published cells' value counts are those of the rows
    for c in table.qi:
        counts = kept[c].value_counts()
        after = publication.report["value_counts"][c]["after"]
        assert after["distinct"] == len(counts)
        assert sorted(zip(after["values"], after["counts"])) == sorted(
            (v, int(counts[v])) for v in after["values"])


def test_a_wrong_label_in_a_coded_column_is_refused() -> None:
    table, hs = _table(5)
    result = anonymize(table, hs, "flash", k=3, options={"metric": "discernibility"})
    coded = result.coded_output.copy()
    column = coded["city"].array
    codes = column.codes.copy()
    row = int(np.flatnonzero(~np.asarray(result.suppressed, dtype=bool))[0])
    codes[row] = (codes[row] + 1) % len(column.categories)  # another label of the level on one row
    coded["city"] = pd.Categorical.from_codes(codes, dtype=column.dtype)
    changed = Result(**{**result.__dict__, "output": coded})
    with pytest.raises(VerificationError):
        verify_output(table, hs, changed.coded_output, result.suppressed, result.models, result.suppression_limit,
                      result.metrics, result.transformation, leaf_codes=result.leaf_codes)


def test_labels_held_by_other_objects_are_checked_by_value() -> None:
    table, hs = _table(6)
    result = anonymize(table, hs, "flash", k=3, options={"metric": "discernibility"})
    coded = result.coded_output.copy()
    for c in table.qi:  # the same labels as new str objects: no longer the hierarchy's, still equal
        column = coded[c].array
        fresh = pd.Index(["".join(list(str(v))) for v in column.categories], dtype=object)
        coded[c] = pd.Categorical.from_codes(column.codes, dtype=pd.CategoricalDtype(fresh))
    verify_output(table, hs, coded, result.suppressed, result.models, result.suppression_limit, result.metrics,
                  result.transformation, leaf_codes=result.leaf_codes)
    assert plain_frame(coded, table.qi).values.tolist() == result.output.values.tolist()


def test_cells_of_takes_only_the_rows_asked() -> None:
    column = pd.Series(pd.Categorical.from_codes([0, 1, 1, 2, 0],
                                                 categories=pd.Index(["x", "y", ROOT], dtype=object)))
    assert cells_of(column, np.array([False, True, False, True, False])).tolist() == ["y", ROOT]
    assert cells_of(column).tolist() == ["x", "y", "y", ROOT, "x"]
    assert cells_of(pd.Series(["a", "b"], dtype=object), np.array([1])).tolist() == ["b"]


def test_write_to_hands_object_cells_in_chunks(monkeypatch) -> None:
    from anonymizer_app.engine.run import sinks

    monkeypatch.setattr(sinks, "SINK_ROWS", 3)
    frame = pd.DataFrame({"q": pd.Categorical.from_codes([0, 1, 0, 1, 1],
                                                          categories=pd.Index(["lo", "hi"], dtype=object)),
                          "other": pd.Series(list("abcde"), dtype=object)})
    got: list[pd.DataFrame] = []

    class Sink:
        def write(self, chunk, suppressed, rows) -> None:
            got.append(chunk)

    write_to(Sink(), frame, np.zeros(5, dtype=bool), np.arange(5), ["q"])
    assert [len(c) for c in got] == [3, 2]
    assert all(c["q"].dtype == object for c in got)
    assert pd.concat(got, ignore_index=True).values.tolist() == [["lo", "a"], ["hi", "b"], ["lo", "c"], ["hi", "d"],
                                                                 ["hi", "e"]]
