"""Verification of a full-domain output by the identity of its cells' objects (result.level_key) decides
exactly as the check by value: same classes, same refusals; a cell held by another object is checked by value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, VerificationError, anonymize, parse_hierarchy
from anonymizer_app.engine.measure.metrics import ncp_by_label, tuple_homogeneity
from anonymizer_app.engine.model.table import FrequencySet, frequency_set
from anonymizer_app.engine.privacy.distributions import sensitive_domain
from anonymizer_app.engine.run.gate import released_classes, released_classes_by_labels
from anonymizer_app.engine.run.result import (
    Result,
    _verify_cells,
    factorize_cells,
    level_key,
    unchanged,
    verify_output,
)
from anonymizer_app.engine.run.stages import _input_classes, output_frame
from anonymizer_app.engine.search.lattice import equivalence_classes

AGE = "\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'young' if a < 40 else 'old'};*" for a in range(20, 60))
CITY = "\n".join(f"c{i};r{i % 3};*" for i in range(6))


def relabel(cells: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The cells with those rows' values held by new objects (equal values, other addresses)."""
    out = cells.copy()
    for i in rows:
        out[i] = "".join(list(str(out[i])))
    return out


@pytest.fixture(params=[0, 1, 2])
def case(request):
    return _case(request.param)


def _case(seed: int):
    rng = np.random.default_rng(seed)
    n = 400
    frame = pd.DataFrame({"age": rng.integers(20, 60, n).astype(str), "city": [f"c{i}" for i in rng.integers(0, 6, n)],
                          "note": rng.choice(["a", "b"], n), "disease": rng.choice(["flu", "cold", "hiv"], n)})
    table = Table(frame, {"age": "qi", "city": "qi", "disease": "sensitive"})
    hs = {"age": parse_hierarchy(AGE, "age"), "city": parse_hierarchy(CITY, "city")}
    result = anonymize(table, hs, "flash", k=4, suppression_limit=0.05, options={"metric": "discernibility"})
    return table, hs, result


def classes_by_value(table, hs, result, output):
    return _verify_cells(table, hs, output, np.asarray(result.suppressed, dtype=bool), result.transformation, None)


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = np.unique(np.stack([a, b], axis=1), axis=0)
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


def test_classes_from_the_labels_equal_the_classes_of_the_cells(case):
    table, hs, result = case
    kept = ~np.asarray(result.suppressed, dtype=bool)
    key = level_key(result.output, table.qi, hs, result.transformation, result.leaf_codes.codes, kept)
    assert key is not None  # the builder writes the hierarchy's own label objects
    sizes, row_class = classes_by_value(table, hs, result, result.output)
    assert len(np.unique(key)) == len(sizes)
    assert sorted(np.unique(key, return_counts=True)[1].tolist()) == sorted(sizes.tolist())
    assert same_partition(key, row_class[kept])
    verify_output(table, hs, result.output, result.suppressed, result.models, result.suppression_limit,
                  result.metrics, result.transformation, leaf_codes=result.leaf_codes)


def test_a_cell_held_by_another_object_is_checked_by_value(case):
    table, hs, result = case
    kept = np.flatnonzero(~np.asarray(result.suppressed, dtype=bool))
    out = result.output.copy()
    out["age"] = relabel(out["age"].to_numpy(dtype=object), kept[:5])
    assert level_key(out, table.qi, hs, result.transformation, result.leaf_codes.codes,
                     ~np.asarray(result.suppressed, dtype=bool)) is None
    verify_output(table, hs, out, result.suppressed, result.models, result.suppression_limit, result.metrics,
                  result.transformation, leaf_codes=result.leaf_codes)


@pytest.mark.parametrize("codes", [False, True])
def test_a_wrong_label_is_refused_with_or_without_the_leaf_codes(case, codes):
    table, hs, result = case
    kept = np.flatnonzero(~np.asarray(result.suppressed, dtype=bool))
    i = int(kept[0])
    level = result.transformation["city"]
    out = result.output.copy()
    cells = out["city"].to_numpy(dtype=object).copy()
    labels = hs["city"].labels[level]
    cells[i] = next(x for x in labels if x != cells[i]) if len(labels) > 1 else "elsewhere"
    out["city"] = cells
    with pytest.raises(VerificationError, match=rf"row {i + 1}, column 'city'"):
        verify_output(table, hs, out, result.suppressed, result.models, result.suppression_limit, result.metrics,
                      result.transformation, leaf_codes=result.leaf_codes if codes else None)


def test_a_suppressed_row_showing_a_value_is_refused():
    # the first seeds' tables whose result suppresses records (some of the fixture's suppress none)
    cases = (_case(seed) for seed in range(20))
    table, hs, result = next(c for c in cases if np.asarray(c[2].suppressed, dtype=bool).any())
    sup = np.flatnonzero(np.asarray(result.suppressed, dtype=bool))
    out = result.output.copy()
    cells = out["age"].to_numpy(dtype=object).copy()
    cells[sup[0]] = table.frame["age"].iloc[sup[0]]
    out["age"] = cells
    with pytest.raises(VerificationError, match="a suppressed record shows a value in 'age'"):
        verify_output(table, hs, out, result.suppressed, result.models, result.suppression_limit, result.metrics,
                      result.transformation, leaf_codes=result.leaf_codes)


def test_unchanged_compares_values_where_objects_differ():
    a = np.array(["x", "y", "z"] * 3, dtype=object)
    assert unchanged(a.copy(), a)
    assert unchanged(relabel(a, np.array([1, 4])), a)
    b = a.copy()
    b[4] = "w"
    assert not unchanged(b, a)
    assert not unchanged(a[:-1], a)
    assert unchanged(np.arange(5), np.arange(5)) and not unchanged(np.arange(5), np.arange(1, 6))


def test_a_changed_column_that_is_not_a_qi_is_refused(case):
    table, hs, result = case
    out = result.output.copy()
    notes = out["note"].to_numpy(dtype=object).copy()
    notes[3] = "c"
    out["note"] = notes
    with pytest.raises(VerificationError, match="column 'note' is not a QI but was changed"):
        verify_output(table, hs, out, result.suppressed, result.models, result.suppression_limit, result.metrics,
                      result.transformation, leaf_codes=result.leaf_codes)


@pytest.mark.parametrize("seed", range(6))
def test_the_gate_numbers_the_classes_as_hashing_the_cells_does(seed):
    rng = np.random.default_rng(seed)
    n = 300
    frame = pd.DataFrame({"age": rng.integers(20, 60, n).astype(str), "city": [f"c{i}" for i in rng.integers(0, 6, n)],
                          "disease": rng.choice(["flu", "cold", "hiv"], n)})
    table = Table(frame, {"age": "qi", "city": "qi", "disease": "sensitive"})
    hs = {"age": parse_hierarchy(AGE, "age"), "city": parse_hierarchy(CITY, "city")}
    # levels up to the root ('*' is then a published label as well as the suppressed rows' cells)
    levels = f"{1 + seed % 3},{1 + seed % 2}" if seed < 5 else "3,2"
    result = anonymize(table, hs, "full-domain", k=3, suppression_limit=0.5, options={"levels": levels})
    suppressed = np.asarray(result.suppressed, dtype=bool)
    released = ~suppressed
    fast = released_classes_by_labels(table, hs, result, released, suppressed)
    assert fast is not None
    factorized = {c: factorize_cells(result.output[c].to_numpy(dtype=object)) for c in table.qi}
    row_class, sizes = released_classes(result.output, table.qi, released, factorized)
    assert fast[0].tolist() == row_class.tolist()
    assert fast[1].tolist() == sizes.tolist()
    out = result.output.copy()
    kept = np.flatnonzero(released)
    # a one-character str is one cached object in CPython: relabel a column with longer labels
    column = next((c for c in table.qi if len(str(out[c].iloc[kept[0]])) > 1), None) if len(kept) else None
    if column is not None:
        out[column] = relabel(out[column].to_numpy(dtype=object), kept[:2])
        changed = Result(**{**result.__dict__, "output": out})
        assert released_classes_by_labels(table, hs, changed, released, suppressed) is None


def test_the_output_frame_is_the_input_copied_with_the_qis_replaced():
    frame = pd.DataFrame({"id": ["a", "b", "c"], "age": ["21", "24", "33"], "n": [1, 2, 3],
                          "s": pd.array(["x", None, "z"], dtype="string"), "city": ["c1", "c2", "c1"]},
                         index=[10, 11, 12])
    table = Table(frame, {"id": "identifying", "age": "qi", "city": "qi", "s": "sensitive"})
    cells = {"age": np.array(["2*", "2*", "3*"], dtype=object), "city": np.array(["*"] * 3, dtype=object)}
    out = output_frame(table, cells)
    old = table.frame[["age", "n", "s", "city"]].copy()  # the former construction
    for c, v in cells.items():
        old[c] = v
    pd.testing.assert_frame_equal(out, old)
    assert out["s"].dtype == "string" and out["n"].dtype == np.int64
    out.loc[10, "n"] = 7  # a copy: the input is untouched
    assert table.frame.loc[10, "n"] == 1


@pytest.mark.parametrize("seed", range(4))
def test_tuple_triplets_are_np_unique_of_the_pairs(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    frame = pd.DataFrame({"s": rng.choice(["a", "b", "c", "d"], n)})
    dom = sensitive_domain(frame, "s")
    tuples = rng.integers(0, 50, n)
    pair = tuples * dom.m + dom.codes
    uniq, counts = np.unique(pair, return_counts=True)
    t, v, c = dom.tuple_triplets(tuples)
    assert t.tolist() == (uniq // dom.m).tolist() and v.tolist() == (uniq % dom.m).tolist()
    assert c.tolist() == counts.tolist()


def test_tuple_homogeneity_counts_as_the_sorted_pairs_did():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n_tuples = int(rng.integers(1, 200))
        tuple_class = rng.integers(-1, int(rng.integers(1, n_tuples + 1)), n_tuples)  # -1: suppressed
        m = int(rng.integers(1, 6))
        pairs = np.unique(rng.integers(0, n_tuples, 3 * n_tuples) * m + rng.integers(0, m, 3 * n_tuples))
        tuples, values, counts = pairs // m, pairs % m, rng.integers(1, 5, len(pairs))
        cls = tuple_class[tuples]
        kept = cls >= 0
        expected = {"homogeneous_classes": 0, "homogeneous_records": 0}
        if kept.any():  # the former computation: the distinct (class, value) pairs sorted
            width = int(values[kept].max()) + 1
            distinct = np.bincount(np.unique(cls[kept] * width + values[kept]) // width)
            sizes = np.bincount(cls[kept], weights=counts[kept]).astype(np.int64)
            expected = {"homogeneous_classes": int((distinct == 1).sum()),
                        "homogeneous_records": int(sizes[distinct == 1].sum())}
        assert tuple_homogeneity(tuple_class, tuples, values, counts) == expected


def test_ncp_of_numeric_labels_as_the_groupby_gave():
    h = parse_hierarchy(AGE, "age")
    rng = np.random.default_rng(0)
    values = pd.to_numeric(pd.Series(h.leaves), errors="coerce").to_numpy(dtype=float)
    for level in range(1, h.level_count):
        for _ in range(20):
            present = rng.random(len(h.leaves)) < 0.3
            got = ncp_by_label(h, level, present, True)
            expected = np.zeros(len(h.labels[level]))
            if present.any():
                span = values[present].max() - values[present].min()
                agg = pd.DataFrame({"label": h.maps[level][present], "v": values[present]}).groupby("label")["v"].agg(
                    ["min", "max"])
                if span > 0:
                    expected[agg.index.to_numpy()] = (agg["max"] - agg["min"]).to_numpy() / span
                assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_the_input_classes_are_the_frequency_sets_tuples(seed):
    rng = np.random.default_rng(seed)
    n = 500
    frame = pd.DataFrame({"age": rng.integers(20, 60, n).astype(str), "city": [f"c{i}" for i in rng.integers(0, 6, n)]})
    table = Table(frame, {"age": "qi", "city": "qi"})
    hs = [parse_hierarchy(AGE, "age"), parse_hierarchy(CITY, "city")]
    codes = table.encode(dict(zip(table.qi, hs)))
    freq = frequency_set(codes, np.array([len(h.leaves) for h in hs], dtype=np.int64))
    inverse, sizes = _input_classes(freq, hs)
    expected_inverse, expected_sizes = equivalence_classes(freq.codes, freq.counts, hs, [0, 0])
    assert inverse.tolist() == expected_inverse.tolist() and sizes.tolist() == expected_sizes.tolist()
    shuffled = FrequencySet(freq.codes[::-1].copy(), freq.counts[::-1].copy(), freq.inverse)  # keys not ascending
    inverse, sizes = _input_classes(shuffled, hs)
    expected_inverse, expected_sizes = equivalence_classes(shuffled.codes, shuffled.counts, hs, [0, 0])
    assert inverse.tolist() == expected_inverse.tolist() and sizes.tolist() == expected_sizes.tolist()
