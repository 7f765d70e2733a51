"""The memory-lean paths of the run after the search (issue 32, peak at 5M rows): the leaf codes held narrowed to the
smallest integer type their hierarchies need (the same codes), the gate's class key of the kept rows packed a block at
a time, and the columns that are not QIs compared with the input a block of published rows at a time - a changed cell
is still refused, whatever the block it falls in and whatever the column's dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Role, Table, VerificationError, parse_hierarchy
from anonymizer_app.engine.run import gate, stages
from anonymizer_app.engine.run.result import LeafCodes
from anonymizer_app.engine.run.spec import RunSpec

QI = Role.QUASI_IDENTIFYING
AGE = "\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'young' if a < 40 else 'old'};*" for a in range(20, 60))
CITY = "\n".join(f"c{i};r{i % 3};*" for i in range(6))


def case(seed: int, n: int = 400):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(20, 60, n).astype(str), "city": [f"c{i}" for i in rng.integers(0, 6, n)],
                          "note": rng.choice(["a", "b", "c"], n).astype(object), "pay": rng.integers(0, 9, n),
                          "day": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="h")})
    table = Table(frame, {"age": QI, "city": QI, "note": Role.INSENSITIVE, "pay": Role.INSENSITIVE,
                          "day": Role.INSENSITIVE})
    hs = {"age": parse_hierarchy(AGE, "age"), "city": parse_hierarchy(CITY, "city")}
    return table, hs


def suppressing_run(k: int = 6):
    """A run that suppresses some rows (the published rows are not every row) and keeps most."""
    for seed in range(40):
        table, hs = case(seed)
        spec = RunSpec.build(table, hs, "flash", k=k, suppression_limit=0.1, options={"metric": "discernibility"})
        result = stages.compute(spec, None)
        suppressed = np.asarray(result.suppressed, dtype=bool)
        if 0 < suppressed.sum() < table.n // 2:
            return table, spec, result
    raise AssertionError("no seed suppresses some rows")


def test_leaf_codes_narrowed_to_the_same_codes():
    table, spec, result = suppressing_run()
    held = result.leaf_codes
    assert held is not None and held.codes.dtype == np.int8 and not held.codes.flags.writeable
    wide = table.encode_columns({c: result.hierarchies[c] for c in table.qi}).T
    assert np.array_equal(held.codes, wide)
    assert held.codes.T.flags.c_contiguous  # each QI's column contiguous, as the run laid them out


@pytest.mark.parametrize("leaves, width", [(128, np.int8), (129, np.int16), (2**15, np.int16), (2**15 + 1, np.int32)])
def test_narrowed_width(leaves, width):
    h = parse_hierarchy("\n".join(f"v{i};*" for i in range(leaves)), "x")
    codes = np.array([[0], [leaves - 1], [leaves // 2]], dtype=np.int32)
    narrow = stages.narrowed(LeafCodes.freeze(codes, [h]))
    assert narrow.codes.dtype == width and narrow.codes.tolist() == codes.tolist()
    assert narrow.hierarchies == (h,) and not narrow.codes.flags.writeable


@pytest.mark.parametrize("block", [5, 1 << 18])
def test_published_rows_match_and_classes_as_hashed(block, monkeypatch):
    monkeypatch.setattr(gate, "LEVEL_KEY_BLOCK", block)
    monkeypatch.setattr(gate, "GATE_BLOCK", 7 if block == 5 else 1 << 16)
    table, spec, result = suppressing_run()
    publication = gate.publish(result, spec, table, result.hierarchies)
    rows = publication.rows
    assert np.array_equal(rows, np.flatnonzero(~np.asarray(result.suppressed, dtype=bool)))
    for col in ("note", "pay", "day"):
        pd.testing.assert_series_equal(publication.table[col], table.frame[col].iloc[rows].reset_index(drop=True))
    plain = publication.table
    keys = pd.Series(list(zip(*(plain[c] for c in table.qi))))
    assert sorted(publication.class_sizes.tolist()) == keys.value_counts().sort_values().tolist()


@pytest.mark.parametrize("col", ["note", "pay", "day"])
@pytest.mark.parametrize("where", ["first", "last"])
def test_a_changed_column_that_is_no_qi_is_refused(col, where, monkeypatch):
    monkeypatch.setattr(gate, "LEVEL_KEY_BLOCK", 5)  # the published rows compared in many blocks
    table, spec, result = suppressing_run()
    kept = np.flatnonzero(~np.asarray(result.suppressed, dtype=bool))
    row = int(kept[0] if where == "first" else kept[-1])
    output = result.coded_output
    values = output[col].copy()
    values.iloc[row] = {"note": "zzz", "pay": 99, "day": pd.Timestamp("1999-01-01")}[col]
    output[col] = values
    with pytest.raises(VerificationError, match="is not a QI but was changed"):
        gate.publish(result, spec, table, result.hierarchies)
