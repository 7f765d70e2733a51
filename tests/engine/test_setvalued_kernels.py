"""The compiled set-valued loops (engine/setvalued/_set_kernel.py through setvalued/kernels.py) against
plain-Python references (itertools.combinations over the records as sets) on random records (seeded):
repeated items, empty records, images that drop or merge codes; and whole runs (the engine call and the
pipeline with its gate) with the loops forced on against the same runs on numpy's paths: the same
published records and the same report."""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.setvalued import anonymize_transactions, itemsets, kernels
from anonymizer_app.engine.setvalued.anonymize import published_records
from anonymizer_app.engine.setvalued.transactions import Transactions, dedupe_records

from .test_setvalued_vectorized import SEEDS
from .test_setvalued_vectorized import test_from_cells_matches_splitting_each_cell as _from_cells_matches
from .test_setvalued_vectorized import test_publish_matches_plain_python as _publish_matches
from .test_setvalued_vectorized import (
    test_top_itemsets_and_changed_occurrences_match_plain_python as _top_matches,
)
from .test_setvalued_vectorized import test_verify_matches_plain_python as _verify_matches
from .test_setvalued_vectorized import test_verify_names_the_first_tampered_record as _tampered

numba = pytest.importorskip("numba")


@pytest.fixture
def compiled(monkeypatch):
    """The compiled loops for records of any size."""
    monkeypatch.setattr(kernels, "KERNEL_MIN_OCCURRENCES", 0)
    kernel = kernels.load(0)
    assert kernel is not None
    return kernel


def random_records(rng: random.Random, items: int) -> tuple[np.ndarray, np.ndarray]:
    lengths = [rng.randint(0, 9) for _ in range(rng.randint(0, 40))]
    codes = [rng.randrange(items) for _ in range(sum(lengths))]
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), np.array(codes, dtype=np.int64)


def random_image(rng: random.Random, items: int) -> tuple[np.ndarray, int]:
    """Each code dropped (-1), kept apart or merged with others, into images below the returned base."""
    base = rng.randint(1, items + 2)
    return np.array([-1 if rng.random() < 0.2 else rng.randrange(base) for _ in range(items)], dtype=np.int64), base


def image_records(offsets, codes, image) -> list[list[int]]:
    """Each record's images, first appearance kept, dropped ones left out (plain Python)."""
    out = []
    for r in range(len(offsets) - 1):
        seen: list[int] = []
        for c in codes[offsets[r]:offsets[r + 1]].tolist():
            x = int(image[c])
            if x >= 0 and x not in seen:
                seen.append(x)
        out.append(seen)
    return out


def brute_counts(records: list[list[int]], size: int, base: int) -> list[tuple[int, int]]:
    counts = Counter(c for rec in records for c in combinations(sorted(rec), size))
    return sorted((sum(x * base ** (size - 1 - j) for j, x in enumerate(c)), v) for c, v in counts.items())


def as_csr(records: list[list[int]]) -> tuple[list[int], list[int]]:
    return [0, *np.cumsum([len(r) for r in records]).tolist()], [x for r in records for x in r]


@pytest.mark.parametrize("seed", range(60))
def test_image_sets_and_counts_match_plain_python(seed, compiled):
    rng = random.Random(7000 + seed)
    items = rng.randint(1, 70)  # over 64: records' bitmaps span more than one word
    offsets, codes = random_records(rng, items)
    image, base = random_image(rng, items)
    want = image_records(offsets, codes, image)
    got = kernels.image_sets(compiled, offsets, codes, image, base)
    assert (got[0].tolist(), got[1].tolist()) == as_csr(want)
    got = kernels.image_sets(compiled, offsets, codes, image, base, ordered=True)
    assert (got[0].tolist(), got[1].tolist()) == as_csr([sorted(r) for r in want])
    counted = kernels.counts(compiled, offsets, codes, image, base, 2)
    for size in (1, 2):
        assert list(zip(*(a.tolist() for a in counted[size]))) == brute_counts(want, size, base)
    assert set(kernels.counts(compiled, offsets, codes, image, base, 1)) == {1}
    # the codes themselves: as sets (what dedupe_records gives) and counted in the same read
    sets_offsets, sets_codes, counted = kernels.sets_and_counts(compiled, offsets, codes, items, 2)
    plain = image_records(offsets, codes, np.arange(items))
    assert (sets_offsets.tolist(), sets_codes.tolist()) == as_csr(plain)
    for size in (1, 2):
        assert list(zip(*(a.tolist() for a in counted[size]))) == brute_counts(plain, size, items)


@pytest.mark.parametrize("seed", range(60))
def test_images_equal_only_for_the_images_in_first_appearance_order(seed, compiled):
    rng = random.Random(8000 + seed)
    items = rng.randint(1, 70)
    offsets, codes = random_records(rng, items)
    image, base = random_image(rng, items)
    shown = image_records(offsets, codes, image)
    tamper = rng.choice(["none", "drop", "add", "twice", "swap", "reorder", "records"])
    r = rng.randrange(len(shown)) if shown else 0
    if shown and tamper == "drop" and shown[r]:
        shown[r].pop()
    elif shown and tamper == "add":
        shown[r].append(rng.randrange(base))
    elif shown and tamper == "twice" and shown[r]:
        shown[r].append(shown[r][0])
    elif shown and tamper == "swap":
        shown[r] = shown[(r + 1) % len(shown)]
    elif shown and tamper == "reorder":
        shown[r] = shown[r][::-1]
    elif tamper == "records":
        shown.append([])
    want = shown == image_records(offsets, codes, image)
    shown_offsets, shown_codes = as_csr(shown)
    assert kernels.images_equal(compiled, offsets, codes, image, base, np.array(shown_offsets),
                                np.array(shown_codes, dtype=np.int64)) == want


@pytest.mark.parametrize("seed", range(30))
def test_dedupe_and_supports_of_transactions_are_numpy_s(seed, compiled, monkeypatch):
    rng = random.Random(9000 + seed)
    items = rng.randint(1, 70)
    offsets, codes = random_records(rng, items)
    names = np.array([f"i{j:02d}" for j in range(items)], dtype=object)
    fast = [kernels.image_sets(compiled, offsets, codes, None, items), None]
    with monkeypatch.context() as m:
        m.setattr(kernels, "KERNEL_MIN_OCCURRENCES", 10 ** 12)
        plain = dedupe_records(offsets, codes)
        plain_tx = Transactions(names, offsets, codes)
        want = [itemsets.itemset_supports(plain_tx, s) for s in (1, 2, 3)]
        want_smallest = itemsets.smallest_support_of(Transactions(names, offsets, codes), 3)
    assert [a.tolist() for a in dedupe_records(offsets, codes)] == [a.tolist() for a in plain]
    assert [a.tolist() for a in fast[0]] == [a.tolist() for a in plain]
    tx = Transactions(names, offsets, codes)
    got = [itemsets.itemset_supports(tx, s, upto=2) for s in (1, 2, 3)]
    assert [[a.tolist() for a in g] for g in got] == [[a.tolist() for a in w] for w in want]
    assert [a.tolist() for a in (tx.distinct().offsets, tx.distinct().codes)] == [a.tolist() for a in plain]
    assert itemsets.smallest_support_of(Transactions(names, offsets, codes), 3) == want_smallest


# the vectorized helpers' reference tests, with the compiled loops forced on
@pytest.mark.parametrize("seed", SEEDS)
def test_publish_compiled_matches_plain_python(seed, compiled):
    _publish_matches(seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_verify_compiled_matches_plain_python(seed, compiled):
    _verify_matches(seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_verify_compiled_names_the_first_tampered_record(seed, compiled):
    _tampered(seed)


@pytest.mark.parametrize("seed", range(10))
def test_top_itemsets_compiled_match_plain_python(seed, compiled):
    _top_matches(seed)


def generated(seed: int, records: int, items: int) -> tuple[Transactions, Hierarchy]:
    """Zipf-like records with repeats (as benchmarks/bench_setvalued.py makes them) and a 4-level hierarchy."""
    rng = np.random.default_rng(seed)
    lengths = np.maximum(1, rng.poisson(6, records))
    weights = 1.0 / np.arange(1, items + 1)
    codes = rng.choice(items, size=int(lengths.sum()), p=weights / weights.sum())
    names = np.array([f"item{i:03d}" for i in range(items)], dtype=object)
    tx = Transactions(names, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), codes.astype(np.int64))
    rows = [[str(names[i]), f"g{i // 5:02d}", f"G{i // 25}", "*"] for i in range(items)]
    return tx, Hierarchy.from_rows(rows, "items")


def without_seconds(value):
    if isinstance(value, dict):
        return {k: without_seconds(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [without_seconds(v) for v in value]
    return value


def engine_call(tx: Transactions, hierarchy, algorithm: str, k: int, m: int, suppress: bool) -> tuple:
    result = anonymize_transactions(tx, k, m, algorithm=algorithm, hierarchy=hierarchy, suppress_at_root=suppress)
    return published_records(result.published), json.dumps(without_seconds(result.report), sort_keys=True,
                                                              default=str)


def pipeline_call(tx: Transactions, hierarchy, algorithm: str, k: int, m: int) -> tuple:
    from anonymizer_app.engine.run.pipeline import run
    from anonymizer_app.engine.run.spec import RunSpec, TransactionSet

    publication = run(RunSpec.build(TransactionSet(tx, m, algorithm, hierarchy), k=k))
    return publication.table.to_csv(index=False), json.dumps(without_seconds(publication.built_report.to_dict()),
                                                             sort_keys=True)


@pytest.mark.parametrize("seed,algorithm,m,suppress", [
    (0, "apriori", 1, False), (1, "apriori", 2, False), (2, "apriori", 3, False), (3, "apriori", 2, True),
    (4, "dynamic", 2, False), (5, "dynamic", 3, False), (6, "apriori", 3, True)])
def test_runs_with_the_compiled_loops_publish_and_report_the_same(seed, algorithm, m, suppress, monkeypatch):
    tx, hierarchy = generated(seed, 3000, 120)
    hierarchy_or_none = hierarchy if algorithm == "apriori" else None
    monkeypatch.setattr(kernels, "KERNEL_MIN_OCCURRENCES", 10 ** 12)
    want = engine_call(generated(seed, 3000, 120)[0], hierarchy_or_none, algorithm, 4, m, suppress)
    want_pipeline = pipeline_call(generated(seed, 3000, 120)[0], hierarchy_or_none, algorithm, 4, m) \
        if not suppress else None
    monkeypatch.setattr(kernels, "KERNEL_MIN_OCCURRENCES", 0)
    assert engine_call(tx, hierarchy_or_none, algorithm, 4, m, suppress) == want
    if want_pipeline is not None:
        assert pipeline_call(generated(seed, 3000, 120)[0], hierarchy_or_none, algorithm, 4, m) == want_pipeline


@pytest.mark.parametrize("seed", range(30))
def test_joined_cells_compiled_are_each_record_joined(seed, compiled):
    rng = random.Random(10000 + seed)
    pieces = ["a", "bé", "c d", "x中", "", "long item"]
    records = [[rng.choice(pieces) + str(rng.randrange(3)) for _ in range(rng.randint(0, 5))]
               for _ in range(rng.randint(0, 20))]
    tx = Transactions.from_records(records)
    delimiter = rng.choice([",", ";", ", ", "|"])
    want = [delimiter.join(r) for r in records]
    assert kernels.joined_bytes(compiled, tx.offsets, tx.codes, tx.items, delimiter).to_pylist() == want
    from anonymizer_app.engine.setvalued.transactions import joined_cells

    assert list(joined_cells(tx, delimiter)) == want
    # a lone surrogate: not UTF-8, so not laid out by the loop (Python joins it)
    odd = Transactions.from_records([["b\ud800", "a"]])
    assert kernels.joined_bytes(compiled, odd.offsets, odd.codes, odd.items, delimiter) is None
    assert list(joined_cells(odd, delimiter)) == [delimiter.join(["b\ud800", "a"])]


@pytest.mark.parametrize("seed", SEEDS)
def test_from_cells_compiled_matches_splitting_each_cell(seed, compiled):
    _from_cells_matches(seed)


@pytest.mark.parametrize("seed", range(40))
def test_split_cells_compiled_matches_str_split(seed, compiled):
    rng = random.Random(11000 + seed)
    delimiter = rng.choice([";", ",", ", ", "ab", "中", "||"])
    pieces = ["a", "b", "ab", "aab", " ", "", "é", "x中y", ",", ";", "|"]
    cells = ["".join(rng.choice(pieces + [delimiter]) for _ in range(rng.randint(0, 8)))
             for _ in range(rng.randint(1, 40))]
    got = Transactions.from_cells(cells, delimiter)
    want = Transactions.from_records([[x for x in cell.split(delimiter) if x] for cell in cells])
    assert got.items.tolist() == want.items.tolist()
    assert got.offsets.tolist() == want.offsets.tolist() and got.codes.tolist() == want.codes.tolist()


def test_split_cells_compiled_codes_many_distinct_items(compiled):
    """More distinct items than the hash table's first size: it grows, and every item keeps its code."""
    rng = random.Random(12000)
    cells = [";".join(f"item{rng.randrange(5000)}" for _ in range(rng.randint(1, 9))) for _ in range(3000)]
    got = Transactions.from_cells(cells, ";")
    want = Transactions.from_records([cell.split(";") for cell in cells])
    assert got.items.tolist() == want.items.tolist() and got.codes.tolist() == want.codes.tolist()


def test_compile_cached_checks_every_loop_on_toy_records(monkeypatch):
    """`make test-venv` compiles the loops into numba's cache with this; it checks what each loop gives."""
    assert kernels.compile_cached() is True
    monkeypatch.setattr(kernels, "_loaded", [None])  # numba missing or failing: nothing to compile
    assert kernels.compile_cached() is False


def test_items_without_utf8_are_coded_by_python_s_own_equality():
    """Text with no UTF-8 form (a lone surrogate, from a Python caller) is factorized by a dict, not by pandas'
    hash table, which came out with one such item twice in some runs: each item once, codes as brute force."""
    from anonymizer_app.engine.setvalued import transactions as tmod

    assert tmod._utf8(np.array(["a", "é"], dtype=object)) and not tmod._utf8(np.array(["a", "b\ud800"], dtype=object))
    text = ";".join(["b\ud800", "a", "b\ud800", "b", "b\ud800"] * 50)
    records = [text.split(";")[i:i + 5] for i in range(0, 250, 5)]  # a new string object for every occurrence
    tx = Transactions.from_records(records)
    assert tx.items.tolist() == ["a", "b", "b\ud800"]
    assert tx.records() == records
    cells = [";".join(r) for r in records]
    assert Transactions.from_cells(cells, ";").items.tolist() == ["a", "b", "b\ud800"]
