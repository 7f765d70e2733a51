"""The fast paths around the search (encoding, frequency set, figures, output, verification) give exactly
what the plain computations they replace give: same codes, same groups, bit-identical figures, same frame."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Role, Table, anonymize, parse_hierarchy, read_table
from anonymizer_app.engine.measure.metrics import (
    class_figures,
    class_figures_from_histogram,
    loss_figures,
    ncp_by_label,
    tuple_homogeneity,
)
from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.model.table import frequency_set, group_keys, sorted_order, stable_order
from anonymizer_app.engine.privacy.distributions import sensitive_domain
from anonymizer_app.engine.run.stages import build_output, output_frame, own_class_homogeneity
from anonymizer_app.engine.search.lattice import label_columns

RNG = np.random.default_rng(13)


def _unique(key: np.ndarray):
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return first, inverse.reshape(-1), counts


@pytest.mark.parametrize("n", [1, 7, 2047, 2048, 5000, 60000])
@pytest.mark.parametrize("span", [1, 3, 300, 70_000, 2**20, 2**44])
def test_group_keys_is_np_unique(n, span):
    key = RNG.integers(0, span, n, dtype=np.int64)
    for got, want in zip(group_keys(key), _unique(key)):
        assert got.dtype == np.int64
        assert np.array_equal(got, want)


def test_group_keys_negative_keys_and_orders():
    key = RNG.integers(-50, 50, 5000, dtype=np.int64)
    for got, want in zip(group_keys(key), _unique(key)):
        assert np.array_equal(got, want)
    for n in (10, 3000, 50000):
        values = RNG.integers(0, 2**40, n, dtype=np.int64)
        assert np.array_equal(stable_order(values), np.argsort(values, kind="stable"))
        small = RNG.integers(0, 90_000, n, dtype=np.int64)
        assert np.array_equal(stable_order(small), np.argsort(small, kind="stable"))
        distinct = np.unique(values)
        RNG.shuffle(distinct)
        assert np.array_equal(sorted_order(distinct), np.argsort(distinct))


def test_class_figures_by_counting_is_by_sorting():
    for sizes in (np.zeros(0, np.int64), np.array([4]), RNG.integers(1, 40, 3000), RNG.integers(1, 10**7, 50)):
        values, counts = np.unique(np.asarray(sizes, dtype=np.int64), return_counts=True)
        assert repr(class_figures(sizes, 10**7, 2, 5)) == repr(class_figures_from_histogram(values, counts, 10**7, 2, 5))


def _loss_reference(hierarchies, numeric, codes, levels, suppressed, weights=None) -> dict:
    """metrics.loss_figures as it was computed row by row (masks, per-row log2)."""
    rows, q = codes.shape
    n = rows if weights is None else int(np.sum(weights))
    if n == 0 or q == 0 or (not any(levels) and not suppressed.any()):
        return {"ncp": 0.0, "generalization_height": 0.0, "non_uniform_entropy": 0.0}
    kept = ~suppressed
    wk = None if weights is None else weights[kept]
    ws = None if weights is None else weights[suppressed]
    n_sup = int(suppressed.sum()) if ws is None else int(np.sum(ws))
    ncp_sum = height_sum = entropy = 0.0

    def total(x, w):
        return float(np.sum(x)) if w is None else float(np.sum(x * w))

    for j, (h, lv) in enumerate(zip(hierarchies, levels)):
        col = codes[:, j]
        leaf_count = np.bincount(col, weights=weights, minlength=len(h.leaves))
        label_of_row = h.maps[lv][col]
        label_count = np.bincount(label_of_row, weights=weights, minlength=len(h.labels[lv]))
        if weights is not None:
            leaf_count, label_count = leaf_count.astype(np.int64), label_count.astype(np.int64)
        ncp_sum += total(ncp_by_label(h, lv, leaf_count > 0, numeric[j])[label_of_row[kept]], wk) + n_sup
        height_sum += (lv / h.height if h.height else 0.0) * (n - n_sup) + n_sup
        entropy += total(np.log2(label_count[label_of_row[kept]]) - np.log2(leaf_count[col[kept]]), wk)
        entropy += total(np.log2(n) - np.log2(leaf_count[col[suppressed]]), ws)
    cells = n * q
    return {"ncp": ncp_sum / cells, "generalization_height": height_sum / cells, "non_uniform_entropy": entropy}


def _hierarchies():
    age = np.array([str(a) for a in range(17, 91)], dtype=object)
    decade = np.array([f"[{d}-{d + 10})" for d in range(10, 100, 10)], dtype=object)
    h_age = Hierarchy("age", age, [age, decade, np.array(["*"], dtype=object)],
                      [np.arange(len(age)), (np.arange(17, 91) // 10 - 1), np.zeros(len(age), dtype=np.int64)])
    city = parse_hierarchy("Rome;Centre;*\nFlorence;Centre;*\nMilan;North;*\nTurin;North;*\nNaples;South;*\n", "city")
    return [h_age, city], [True, False]


@pytest.mark.parametrize("levels", [[0, 0], [1, 1], [2, 1], [1, 2], [0, 2]])
def test_loss_figures_bit_identical_to_row_by_row(levels):
    hierarchies, numeric = _hierarchies()
    n = 4000
    codes = np.stack([RNG.integers(0, 60, n), RNG.integers(0, 4, n)], axis=1).astype(np.int32)  # some leaves absent
    freq = frequency_set(codes, np.array([len(h.leaves) for h in hierarchies], dtype=np.int64))
    none = np.zeros(len(freq.counts), dtype=bool)
    whole = RNG.random(len(freq.counts)) < 0.1
    # the three figures the reference computes row by row (ARX's Loss, also in the figures, is checked against
    # ARX's own values in test_arx_loss.py)
    for sup in (none, whole):
        got = loss_figures(hierarchies, numeric, freq.codes, levels, sup, weights=freq.counts)
        ref = _loss_reference(hierarchies, numeric, freq.codes, levels, sup, freq.counts)
        assert "loss" in got and repr({key: got[key] for key in ref}) == repr(ref)
    rows = RNG.random(n) < 0.05
    for sup in (np.zeros(n, dtype=bool), rows):
        got = loss_figures(hierarchies, numeric, codes, levels, sup)
        ref = _loss_reference(hierarchies, numeric, codes, levels, sup)
        assert "loss" in got and repr({key: got[key] for key in ref}) == repr(ref)


def test_leaf_codes_of_is_categorical():
    leaves = np.array(["a", "b", "", "é", "1"], dtype=object)
    h = Hierarchy("x", leaves, [leaves, np.array(["*"], dtype=object)], [np.arange(5), np.zeros(5, dtype=np.int64)])
    mixed = Hierarchy("m", np.array([1, "2"], dtype=object), [np.array([1, "2"], dtype=object)], [np.arange(2)])
    for hier in (h, mixed):
        for values in (["a", "zz", "", "é"], [], ["1", 1], [np.str_("b"), "b"], ["a", None, np.nan], ["2", 2]):
            v = np.asarray(values, dtype=object)
            want = pd.Categorical(v, categories=hier.leaves).codes.astype(np.int32)
            assert np.array_equal(hier.leaf_codes_of(v), want)


CSV = "id;age;city;disease\n" + "".join(
    f"{i};{a};{c};{d}\n" for i, (a, c, d) in enumerate(zip(
        RNG.integers(17, 91, 600), RNG.choice(["Rome", "Milan", "Turin", "Naples"], 600),
        RNG.choice(["flu", "cold", "", "NA", "asthma"], 600))))


def _table(dictionary: bool, sensitive: bool = True) -> tuple[Table, dict]:
    if dictionary:
        frame, _ = read_table(CSV.encode(), filename="t.csv", dictionary=True)
    else:
        frame = pd.read_csv(io.StringIO(CSV), sep=";", dtype=str, keep_default_na=False)
    roles = {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "city": Role.QUASI_IDENTIFYING,
             "disease": Role.SENSITIVE if sensitive else Role.INSENSITIVE}
    hierarchies, _ = _hierarchies()
    return Table(frame, roles, name="t"), {"age": hierarchies[0], "city": hierarchies[1]}


def test_encode_and_sensitive_domain_from_dictionary_equal_row_by_row():
    table, hs = _table(dictionary=True)
    plain, _ = _table(dictionary=False)
    assert table.dictionaries, "the reader gave dictionary-encoded columns"
    hs_run = table.hierarchies(hs)
    codes = table.encode(hs_run)
    assert codes.flags.c_contiguous and codes.dtype == np.int32
    for j, c in enumerate(table.qi):
        assert np.array_equal(codes[:, j], hs_run[c].encode(table.frame[c], c))
    a = sensitive_domain(table.frame, "disease", numeric=False, dictionary=table.dictionaries["disease"])
    b = sensitive_domain(plain.frame, "disease", numeric=False)
    assert list(a.values) == list(b.values)
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.table_counts, b.table_counts)


def test_build_output_block_equals_output_frame_and_results_match_plain_table():
    table, hs = _table(dictionary=True, sensitive=False)
    hs_run = table.hierarchies(hs)
    ordered = [hs_run[c] for c in table.qi]
    codes = table.encode(hs_run)
    for levels in ([1, 1], [0, 2]):
        for suppressed in (np.zeros(table.n, dtype=bool), RNG.random(table.n) < 0.1):
            got = build_output(table, ordered, codes, levels, suppressed)
            cells = {}
            for j, (c, labels) in enumerate(zip(table.qi, label_columns(ordered, levels))):
                cells[c] = np.asarray(labels, dtype=object)[codes[:, j]]
                cells[c][suppressed] = "*"
            want = output_frame(table, cells)
            pd.testing.assert_frame_equal(got, want)
            assert list(got.dtypes) == list(want.dtypes)
    # the same anonymization from the dictionary-encoded table and from the plain one
    plain, _ = _table(dictionary=False, sensitive=True)
    coded, _ = _table(dictionary=True, sensitive=True)
    r1 = anonymize(coded, hs, "flash", k=4, suppression_limit=0.02, sensitive="disease")
    r2 = anonymize(plain, hs, "flash", k=4, suppression_limit=0.02, sensitive="disease")
    assert r1.output.to_csv() == r2.output.to_csv()
    assert repr(r1.metrics) == repr(r2.metrics) and repr(r1.metrics_before) == repr(r2.metrics_before)
    assert r1.attack == r2.attack


def test_build_output_keeps_other_dtypes():
    frame = pd.DataFrame({"city": ["Rome", "Milan", "Rome", "Turin"], "score": np.array([1.5, 2.0, 3.0, 4.0])})
    table = Table(frame, {"city": Role.QUASI_IDENTIFYING, "score": Role.INSENSITIVE}, types={"score": "decimal"})
    _, city = _hierarchies()[0]
    hs = table.hierarchies({"city": city})
    out = build_output(table, [hs["city"]], table.encode(hs), [1], np.zeros(4, dtype=bool))
    assert out["score"].dtype == np.float64 and list(out["city"]) == ["Centre", "North", "Centre", "North"]


def test_own_class_homogeneity_is_tuple_homogeneity_of_the_identity():
    tuples = np.repeat(np.arange(300), RNG.integers(1, 4, 300))
    values = RNG.integers(0, 5, len(tuples))
    pairs = np.unique(tuples * 5 + values)
    t, v = pairs // 5, pairs % 5
    c = RNG.integers(1, 9, len(t))
    sizes = np.bincount(t, weights=c).astype(np.int64)
    assert own_class_homogeneity(t, sizes) == tuple_homogeneity(np.arange(300), t, v, c)


def test_leaf_numbers_is_to_numeric_of_a_series():
    from anonymizer_app.engine.measure.metrics import leaf_numbers

    for values in (["1", "2"], ["99999999999999999999", "1"], ["1.5", "", "x"], [], ["inf", "nan", " 7 "],
                   ["1e400", "+3"], [1, "2"]):
        v = np.array(values, dtype=object)
        want = pd.to_numeric(pd.Series(v), errors="coerce").to_numpy(dtype=float)
        got = leaf_numbers(v)
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


def test_value_counts_from_the_dictionary_are_the_text_counts():
    from anonymizer_app.engine.run.report import value_counts

    table, _ = _table(dictionary=True)
    plain, _ = _table(dictionary=False)
    for c in ("age", "city", "disease"):
        got = value_counts(table.frame[c], dictionary=table.dictionaries[c])
        assert got == value_counts(plain.frame[c]) == value_counts(table.frame[c])
        assert got["distinct"] > 1
    # codes that no longer describe the column are not used
    other = table.frame["city"].copy()
    other.iloc[0] = "Florence"
    assert value_counts(other, dictionary=table.dictionaries["city"]) == value_counts(other)
