"""k^m-anonymity of set-valued records: the worked examples of the seeds exactly, an independent brute
force on random transaction datasets, and bad input."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest

from anonymizer_app.engine.errors import InputError, UnsatisfiableError
from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.setvalued import anonymize_transactions, column_transactions, parse_transactions


# ---- the worked examples ------------------------------------------------------------------------------
def test_seed_002_milk_example_generalizes_only_the_two_milks():
    tx = parse_transactions(["chocolate milk,graviera,feta", "whole milk,graviera", "whole milk,graviera,feta",
                             "chocolate milk,whole milk,feta"], ",")
    food = Hierarchy.from_rows([["chocolate milk", "milk", "*"], ["whole milk", "milk", "*"],
                                ["graviera", "cheese", "*"], ["feta", "cheese", "*"]], "food")
    result = anonymize_transactions(tx, 2, 2, hierarchy=food)
    assert result.records == [["milk", "graviera", "feta"], ["milk", "graviera"], ["milk", "graviera", "feta"],
                              ["milk", "feta"]]
    assert result.recoding.rules == {"milk": ["chocolate milk", "whole milk"]}
    assert result.report["metrics"]["km_smallest_support"] == 2


def test_seed_003_table_19_becomes_table_20():
    tx = parse_transactions(["t1,a1,b1,b2", "t2,a2,b1", "t3,a2,b1,b2", "t4,a1,a2,b2"], ",", has_id=True)
    h = Hierarchy.from_rows([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"]], "figure 22")
    result = anonymize_transactions(tx, 2, 2, hierarchy=h)
    assert result.records == [["A", "b1", "b2"], ["A", "b1"], ["A", "b1", "b2"], ["A", "b2"]]
    assert result.recoding.rules == {"A": ["a1", "a2"]}


def test_seed_003_table_16_with_a_dynamic_hierarchy_becomes_table_18():
    tx = parse_transactions(["John,11000,11000,20000,40000,40000", "Mary,11000,30500,40000",
                             "Nick,11000,11000,40000,40000", "Sandy,11000", "Mark,20000"], ",", has_id=True)
    result = anonymize_transactions(tx, 2, 2, algorithm="dynamic", numeric=True)  # payments: ordered numbers
    assert result.recoding.rules == {"[20000-30500]": ["20000", "30500"]}
    # Table 18 as sets (repetitions are published once: see engine/setvalued/anonymize.py)
    assert result.records == [["11000", "[20000-30500]", "40000"], ["11000", "[20000-30500]", "40000"],
                              ["11000", "40000"], ["11000"], ["[20000-30500]"]]
    assert result.report["records_with_repeated_items"] == 2
    assert result.recoding.hierarchy_rows[1] == ["20000", "[20000-30500]", "*"]
    # NCP: 3 of the 10 item occurrences (as sets) lie in the range, each (30500-20000)/(40000-11000)
    assert result.report["metrics"]["ncp"] == pytest.approx(3 * (10500 / 29000) / 10)


# ---- an independent check on random data -------------------------------------------------------------------
def brute_force_min_support(records: list[list[str]], m: int) -> int | None:
    counts: Counter = Counter()
    for record in records:
        items = sorted(set(record))
        for size in range(1, m + 1):
            counts.update(combinations(items, size))
    return min(counts.values()) if counts else None


def random_case(seed: int):
    rng = random.Random(seed)
    groups = rng.randint(2, 4)
    per = rng.randint(2, 4)
    leaves = [f"i{g}{j}" for g in range(groups) for j in range(per)]
    rows = [[leaf, f"G{leaf[1]}", "*"] for leaf in leaves]
    weights = [1.0 / (1 + i) for i in range(len(leaves))]  # Zipf-like
    records = []
    for _ in range(rng.randint(8, 30)):
        size = rng.randint(1, min(5, len(leaves)))
        records.append(list(dict.fromkeys(rng.choices(leaves, weights, k=size))))
    return records, Hierarchy.from_rows(rows, "items"), {r[0]: r for r in rows}


@pytest.mark.parametrize("seed", range(40))
def test_random_releases_are_km_anonymous_and_valid(seed):
    records, hierarchy, paths = random_case(seed)
    rng = random.Random(seed)
    k, m = rng.randint(2, 3), rng.randint(1, 3)
    m = min(m, max(len(set(r)) for r in records))
    tx = parse_transactions([",".join(r) for r in records], ",") if len(records) > 1 else None
    assert tx is not None
    for algorithm in ("apriori", "dynamic"):
        try:
            result = anonymize_transactions(tx, k, m, algorithm=algorithm, hierarchy=hierarchy,
                                            suppress_at_root=bool(seed % 2))
        except UnsatisfiableError:
            assert brute_force_min_support([["*"]] * len(records), 1) < k
            continue
        smallest = brute_force_min_support(result.records, m)
        assert smallest is None or smallest >= k, (algorithm, result.records)
        suppressed = set(result.recoding.suppressed_items)
        for source, published in zip(records, result.records):
            if algorithm == "apriori":  # every item replaced by itself or one of its ancestors
                image = {next(label for label in paths[item] if label in published or label == "*")
                         for item in source if item not in suppressed}
            else:
                image = set()
                for item in source:
                    group = [g for g, members in result.recoding.rules.items() if item in members]
                    image.add(group[0] if group else item)
            assert set(published) == image, (algorithm, source, published)
            for label in published:
                if algorithm == "apriori":
                    assert any(label in paths[item] for item in source)


# ---- bad input ----------------------------------------------------------------------------------------------
def test_an_empty_record_is_refused_with_its_line():
    with pytest.raises(InputError, match=r"transactions, line 2: the record has no items"):
        parse_transactions(["a,b", "r2,", "c"], ",", has_id=True)


def test_an_item_missing_from_the_hierarchy_is_named():
    tx = parse_transactions(["a,b", "a,c"], ",")
    h = Hierarchy.from_rows([["a", "*"], ["b", "*"]], "items")
    with pytest.raises(InputError, match=r"item hierarchy 'items': 1 item\(s\) of the data are not in it: 'c'"):
        anonymize_transactions(tx, 2, 1, hierarchy=h)


def test_m_larger_than_the_longest_record_is_refused():
    tx = parse_transactions(["a,b", "a,c,c"], ",")
    with pytest.raises(InputError, match=r"m=3 is larger than the longest record \(2 distinct items\)"):
        anonymize_transactions(tx, 2, 3, algorithm="dynamic")


def test_a_delimiter_that_splits_nothing_is_refused():
    with pytest.raises(InputError, match=r"the item delimiter ';' splits no line"):
        parse_transactions(["a,b", "a,c"], ";")
    with pytest.raises(InputError, match=r"column 'basket': the item delimiter '\|' splits no cell"):
        column_transactions(["a;b", "c"], "|", "basket")


def test_an_empty_cell_of_a_set_column_is_refused_with_its_row():
    with pytest.raises(InputError, match=r"column 'basket', row 2: the cell holds no items"):
        column_transactions(["a|b", " ", "c"], "|", "basket")


# ---- a table with a set-valued column ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(10))
def test_mixed_mode_is_k_anonymous_on_the_qis_and_km_within_every_class(seed):
    import numpy as np
    import pandas as pd

    from anonymizer_app.engine import Table, anonymize
    from anonymizer_app.engine.setvalued.mixed import anonymize_set_column

    rng = random.Random(seed)
    records, hierarchy, _ = random_case(seed)
    n = len(records)
    frame = pd.DataFrame({"age": [str(rng.randint(20, 60)) for _ in range(n)],
                          "sex": [rng.choice("MF") for _ in range(n)],
                          "basket": ["|".join(r) for r in records]})
    k, m = 2, rng.randint(1, 2)
    result = anonymize(Table(frame, {"age": "qi", "sex": "qi", "basket": "insensitive"}), None, "mondrian", k=k)
    classes = np.asarray(result.class_of_row)
    cells, report = anonymize_set_column(frame["basket"], "basket", "|", classes, k, m, hierarchy=hierarchy)
    published = result.output.assign(basket=cells)
    kept = classes >= 0
    assert published[kept].groupby(["age", "sex"]).size().min() >= k
    for _, group in published[kept].groupby(["age", "sex"]):
        smallest = brute_force_min_support([c.split("|") for c in group["basket"]], m)
        assert smallest is None or smallest >= k
    assert report["km_holds"]


@pytest.mark.parametrize("algorithm", ["apriori", "dynamic"])
def test_the_pipeline_publishes_a_set_column_km_anonymous_in_every_class(algorithm):
    import pandas as pd

    from anonymizer_app.engine import Table
    from anonymizer_app.engine.run import pipeline
    from anonymizer_app.engine.run.spec import RunSpec, SetColumn

    rng = random.Random(7)
    records, hierarchy, _ = random_case(3)
    n = 60
    frame = pd.DataFrame({"age": [str(rng.randint(20, 60)) for _ in range(n)], "sex": [rng.choice("MF") for _ in range(n)],
                          "basket": [",".join(rng.choice(records)) for _ in range(n)]})
    spec = RunSpec.build(Table(frame, {"age": "qi", "sex": "qi", "basket": "insensitive"}), None, "flash", k=3,
                         set_column=SetColumn("basket", ",", 2, algorithm, hierarchy if algorithm == "apriori" else None))
    publication = pipeline.run(spec)
    assert publication.report["set_column"]["km_holds"]
    for _, group in publication.table.groupby(["age", "sex"]):
        assert len(group) >= 3
        smallest = brute_force_min_support([c.split(",") for c in group["basket"]], 2)
        assert smallest is None or smallest >= 3


def test_a_set_column_must_be_insensitive():
    import pandas as pd

    from anonymizer_app.engine import Table
    from anonymizer_app.engine.run import pipeline
    from anonymizer_app.engine.run.spec import RunSpec, SetColumn

    frame = pd.DataFrame({"age": ["1", "2", "3", "4"], "basket": ["a|b", "a", "b", "a|b"]})
    spec = RunSpec.build(Table(frame, {"age": "qi", "basket": "sensitive"}), None, "flash", k=2,
                         set_column=SetColumn("basket", "|", 1, "dynamic"))
    with pytest.raises(InputError, match=r"set-valued column 'basket' is sensitive; mark it insensitive"):
        pipeline.run(spec)


def test_item_hierarchies_built_from_the_items():
    from anonymizer_app.engine.setvalued.item_hierarchy import build_item_hierarchy

    tx = parse_transactions(["chocolate milk,graviera,feta", "whole milk,graviera", "whole milk,graviera,feta",
                             "chocolate milk,whole milk,feta"], ",")
    # by frequency (feta 3, graviera 3, whole milk 3, chocolate milk 2; ties by name), two at a time
    h = build_item_hierarchy(tx, "grouping", order="frequency", fanout="2")
    assert h.to_rows() == [["feta", "{feta, graviera}", "*"], ["graviera", "{feta, graviera}", "*"],
                           ["whole milk", "{whole milk, chocolate milk}", "*"],
                           ["chocolate milk", "{whole milk, chocolate milk}", "*"]]
    assert anonymize_transactions(tx, 2, 2, hierarchy=h).recoding.rules == {
        "{whole milk, chocolate milk}": ["chocolate milk", "whole milk"]}
    payments = parse_transactions(["11000,11000,20000", "30500,40000", "11000"], ",")
    intervals = build_item_hierarchy(payments, "intervals", width=10000, fanout="2")
    assert [intervals.ancestor("30500", lv) for lv in range(4)] == ["30500", "[30000-40000)", "[30000-50000)", "*"]


# ---- mixed mode: the set column's NCP and itemset-support error -----------------------------------------
MIXED_CELLS = ["chocolate milk|graviera|feta", "whole milk|graviera", "whole milk|graviera|feta",
               "chocolate milk|whole milk|feta", "feta|graviera", "graviera|feta", "whole milk"]
MIXED_CLASSES = [0, 0, 0, 0, 1, 1, -1]  # the milk example, two records of cheese, one suppressed row


def _independent_mixed_measures(cells, published, classes, cost, covers_in_class):
    """NCP and support error recomputed from the cells: ``cost(item, published_cell)`` is the loss of an
    input item in its published record; ``covers_in_class(c)`` maps a published label of class c to the
    input items of that class it covers."""
    records = [set(c.split("|")) for c in cells]
    pub = [set(c.split("|")) for c in published]
    losses = [cost(item, pub[r]) if classes[r] >= 0 else 1.0 for r in range(len(cells)) for item in records[r]]
    ncp = sum(losses) / len(losses)
    support = Counter()
    for rec in records:
        for size in (1, 2):
            support.update(combinations(sorted(rec), size))
    chosen = sorted(support.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[:100]
    errors = []
    for itemset, true in chosen:
        estimate = 0.0
        for c in set(classes) - {-1}:
            covers = covers_in_class(c)
            label_of = {i: label for label, items in covers.items() for i in items}
            rows = [r for r in range(len(cells)) if classes[r] == c]
            present = set().union(*(records[r] for r in rows))
            if not set(itemset) <= present:
                continue
            labels = {label_of.get(i, i) for i in itemset}
            weight = 1.0
            for i in itemset:
                weight /= len(covers.get(label_of.get(i, i), [i]))
            estimate += weight * sum(1 for r in rows if labels <= pub[r])
        errors.append(abs(estimate - true) / true)
    return ncp, sum(errors) / len(errors)


def test_mixed_mode_reports_the_set_columns_ncp_and_support_error_with_a_hierarchy():
    import numpy as np

    from anonymizer_app.engine.setvalued.mixed import anonymize_set_column

    food = Hierarchy.from_rows([["chocolate milk", "milk", "*"], ["whole milk", "milk", "*"],
                                ["graviera", "cheese", "*"], ["feta", "cheese", "*"]], "food")
    cells, report = anonymize_set_column(MIXED_CELLS, "basket", "|", np.array(MIXED_CLASSES), 2, 2, hierarchy=food)
    assert cells == ["milk|graviera|feta", "milk|graviera", "milk|graviera|feta", "milk|feta", "feta|graviera",
                     "graviera|feta", "*"]
    leaves = {"milk": 2, "cheese": 2}

    def cost(item, published):
        return 0.0 if item in published else leaves[next(p for p in published if p in leaves)] / 4

    def covers(c):
        return {"milk": ["chocolate milk", "whole milk"]} if c == 0 else {}

    ncp, error = _independent_mixed_measures(MIXED_CELLS, cells, MIXED_CLASSES, cost, covers)
    # by hand: 5 milk occurrences at 2/4 and the suppressed row's 1 item at 1, over 16 occurrences; of the
    # 10 itemsets, whole milk (est. 2 of 4), {chocolate milk, graviera} (1.5 of 1) and the three other
    # milk pairs (1.5 of 2) are off: (0.5 + 0.5 + 3 * 0.25) / 10
    assert (ncp, error) == (3.5 / 16, 1.75 / 10)
    assert report["ncp"] == pytest.approx(ncp, abs=1e-12)
    assert report["support_error"] == pytest.approx(error, abs=1e-12)
    assert report["support_error_itemsets"] == 10


def test_mixed_mode_reports_the_set_columns_ncp_and_support_error_with_dynamic_hierarchies():
    import numpy as np

    from anonymizer_app.engine.setvalued.mixed import anonymize_set_column

    cells, report = anonymize_set_column(MIXED_CELLS, "basket", "|", np.array(MIXED_CLASSES), 2, 2,
                                         algorithm="dynamic")
    group = "{chocolate milk, feta}"
    assert report["generalization_rules"] == {group: ["chocolate milk", "feta"]}

    def cost(item, published):
        return 0.0 if item in published else 2 / 4  # a set of 2 of the column's 4 items

    def covers(c):
        return {group: ["chocolate milk", "feta"]} if c == 0 else {}

    ncp, error = _independent_mixed_measures(MIXED_CELLS, cells, MIXED_CLASSES, cost, covers)
    assert ncp == 3.5 / 16
    assert report["ncp"] == pytest.approx(ncp, abs=1e-12)
    assert report["support_error"] == pytest.approx(error, abs=1e-12)


def test_mixed_mode_ranges_are_measured_on_the_columns_span():
    import numpy as np

    from anonymizer_app.engine.setvalued.mixed import anonymize_set_column

    cells = ["10|20", "10|30", "10|20|30", "40|50", "40|50", "10|50"]
    published, report = anonymize_set_column(cells, "pay", "|", np.array([0, 0, 0, 1, 1, 1]), 2, 1,
                                             algorithm="dynamic", numeric=True)
    # class 0: every item occurs twice or more; class 1: 10 occurs once and joins its neighbour 40
    assert published == cells[:3] + ["[10-40]|50"] * 3
    assert report["generalization_rules"] == {"[10-40]": ["10", "40"]}
    # the range costs (40-10)/(50-10) of the column's span (not class 1's 40-10 = its whole span): the
    # occurrences of 40, 40 and 10 in class 1, 3 of the column's 13
    assert report["ncp"] == pytest.approx(3 * 0.75 / 13, abs=1e-12)


@pytest.mark.parametrize("joiner,delimiter", [(", ", "|"), ("; ", ",")])
def test_a_dynamic_group_is_never_labelled_like_an_item_of_the_data(joiner, delimiter):
    item = "{a" + joiner + "b}"  # an item that reads like the group of a and b
    tx = parse_transactions([f"{item}{delimiter}c", f"{item}{delimiter}c", f"a{delimiter}c", f"b{delimiter}c"],
                            delimiter)
    result = anonymize_transactions(tx, 2, 1, algorithm="dynamic", label_joiner=joiner)
    group = item + " (group)"
    assert result.recoding.rules == {group: ["a", "b"]}
    assert result.records == [[item, "c"], [item, "c"], [group, "c"], [group, "c"]]


def test_items_named_like_na_markers_are_items():
    """engine.model.missing's markers are for table cells: an item called NA or ? is an item of the hierarchy."""
    from anonymizer_app.engine.setvalued.item_hierarchy import build_item_hierarchy
    from anonymizer_app.engine.setvalued.transactions import Transactions

    tx = Transactions.from_records([["NA", "b"], ["?", "b"], ["c"]])
    assert sorted(map(str, build_item_hierarchy(tx, "grouping").leaves)) == ["?", "NA", "b", "c"]
