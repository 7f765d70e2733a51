"""The gate's check of a coded full-domain output a block of rows at a time (issue 32): the label codes it keeps for
the report are each row's leaf's label, computed here by a plain loop over the hierarchy's labels; a released cell
that is another label is refused (the gate then checks the cells by value and raises); the published frame shared
from the output is the frame frame_of builds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Role, Table, VerificationError, parse_hierarchy
from anonymizer_app.engine.run import gate, pipeline, stages
from anonymizer_app.engine.run.coded import frame_of, rows_of, shared_frame
from anonymizer_app.engine.run.spec import RunSpec

QI = Role.QUASI_IDENTIFYING
AGE = "\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'young' if a < 40 else 'old'};*" for a in range(20, 60))
CITY = "\n".join(f"c{i};r{i % 3};*" for i in range(6))


def case(seed: int, n: int = 500):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(20, 60, n).astype(str), "city": [f"c{i}" for i in rng.integers(0, 6, n)],
                          "note": rng.choice(["a", "b"], n), "pay": rng.integers(0, 9, n)})
    table = Table(frame, {"age": QI, "city": QI, "note": Role.INSENSITIVE, "pay": Role.INSENSITIVE})
    hs = {"age": parse_hierarchy(AGE, "age"), "city": parse_hierarchy(CITY, "city")}
    return table, hs


@pytest.mark.parametrize("block", [7, 1 << 16])
@pytest.mark.parametrize("seed", range(4))
def test_label_codes_are_the_leaves_labels(seed, block, monkeypatch):
    monkeypatch.setattr(gate, "GATE_BLOCK", block)  # many blocks, or one
    table, hs = case(seed)
    spec = RunSpec.build(table, hs, "flash", k=3, suppression_limit=0.05 * (seed % 2),
                         options={"metric": "discernibility"})
    result = stages.compute(spec, None)
    publication = gate.publish(result, spec, table, result.hierarchies)
    assert publication.row_labels is not None
    for col in table.qi:
        h, level, codes = publication.row_labels[col]
        assert h is result.hierarchies[col] and level == result.transformation[col]
        labels = list(h.labels[level])
        text = {line.split(";")[0]: line.split(";") for line in (AGE if col == "age" else CITY).splitlines()}
        expected = [labels.index(text[v][level]) for v in table.frame[col]]
        assert codes.tolist() == expected
    # the classes as hashing the published cells gives them
    plain = publication.table
    released = ~np.asarray(result.suppressed, dtype=bool)
    keys = pd.Series(list(zip(*(plain[c] for c in table.qi))))
    sizes = keys.value_counts().sort_values().tolist()
    assert sorted(publication.class_sizes.tolist()) == sizes
    assert (publication.class_of_row[~released] == -1).all()


def test_a_released_cell_showing_another_label_is_refused():
    table, hs = case(0)
    spec = RunSpec.build(table, hs, "flash", k=3, suppression_limit=0.0, options={"metric": "discernibility"})
    result = stages.compute(spec, None)
    col = next(c for c in table.qi if len(result.coded_output[c].array.categories) > 1)
    column = result.coded_output[col]
    codes = column.array.codes.copy()
    codes[3] = (codes[3] + 1) % len(column.array.categories)  # another of the level's labels
    result.coded_output[col] = pd.Categorical.from_codes(codes, dtype=column.dtype)
    assert gate.released_classes_by_labels(table, result.hierarchies, result, np.ones(table.n, dtype=bool),
                                           np.zeros(table.n, dtype=bool)) is None
    with pytest.raises(VerificationError):
        gate.publish(result, spec, table, result.hierarchies)


@pytest.mark.parametrize("first", ["x", None, 3])
def test_shared_frame_is_frame_of(first):
    n = 6
    frame = pd.DataFrame({"a": pd.Categorical(["p", "q"] * 3), "b": np.arange(n),
                          "c": np.array([first] + ["y"] * (n - 1), dtype=object)})
    made = frame_of({c: rows_of(frame[c], None) for c in frame.columns}, pd.RangeIndex(n))
    shared = shared_frame(frame, list(frame.columns))
    if first != "x":  # an object column frame_of hands to pandas: not shared
        assert shared is None
        return
    assert shared is not None
    pd.testing.assert_frame_equal(shared, made)
    assert list(shared.dtypes) == list(made.dtypes)
    assert shared_frame(frame, ["a", "b"]) is None  # not every column
    shared["d"] = 1  # a column added to the publication is not the output's
    assert "d" not in frame.columns


def test_pipeline_report_drops_the_label_codes():
    table, hs = case(1)
    publication = pipeline.run(RunSpec.build(table, hs, "flash", k=3, suppression_limit=0.0,
                                             options={"metric": "discernibility"}))
    assert publication.row_labels is None and publication.report["value_counts"]
