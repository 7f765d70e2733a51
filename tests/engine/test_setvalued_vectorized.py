"""The vectorized set-valued publish, verify, counting and report helpers against plain-Python references
written here, on random transaction sets (seeded): repeated items, suppressed items, group labels, labels
that read as items of the data, and tampered releases."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from anonymizer_app.engine.errors import VerificationError
from anonymizer_app.engine.setvalued import generalizers, itemsets, measures
from anonymizer_app.engine.setvalued.anonymize import publish, publish_sets, verify
from anonymizer_app.engine.setvalued.apriori import SetRecoding
from anonymizer_app.engine.setvalued.transactions import Transactions

SEEDS = range(40)


def random_transactions(rng: random.Random) -> Transactions:
    items = [f"i{j}" for j in range(rng.randint(1, 12))]
    records = [[rng.choice(items) for _ in range(rng.randint(1, 6))] for _ in range(rng.randint(1, 30))]
    return Transactions.from_records(records)


def random_recoding(rng: random.Random, tx: Transactions) -> SetRecoding:
    """A random global recoding: each item kept, suppressed or put in a group; a group's label is a new
    text, or (sometimes) the text of one of its own items."""
    texts = [str(x) for x in tx.items]
    labels = list(texts)
    node_of_item = np.arange(len(texts), dtype=np.int64)
    groups = rng.randint(0, 3)
    for g in range(groups):
        labels.append(f"G{g}")
    for i in range(len(texts)):
        roll = rng.random()
        if roll < 0.15:
            node_of_item[i] = -1
        elif roll < 0.6 and groups:
            node_of_item[i] = len(texts) + rng.randrange(groups)
    if groups and rng.random() < 0.3:
        members = [i for i in range(len(texts)) if node_of_item[i] == len(texts)]
        if members:
            labels[len(texts)] = texts[members[0]]  # a group read as one of its items
    rules: dict[str, list[str]] = {}
    for i, text in enumerate(texts):
        n = int(node_of_item[i])
        if n >= 0 and labels[n] != text:
            rules.setdefault(labels[n], []).append(text)
    suppressed = sorted(t for i, t in enumerate(texts) if node_of_item[i] < 0)
    return SetRecoding(node_of_item, labels, {g: sorted(v) for g, v in rules.items()}, suppressed, 1)


def reference_publish(tx: Transactions, recoding: SetRecoding) -> list[list[str]]:
    out = []
    for r in range(tx.n):
        seen: list[int] = []
        for c in tx.codes[tx.offsets[r]:tx.offsets[r + 1]]:
            n = int(recoding.node_of_item[int(c)])
            if n >= 0 and n not in seen:
                seen.append(n)
        out.append([recoding.labels[n] for n in seen])
    return out


def reference_checks(tx: Transactions, records: list[list[str]], recoding: SetRecoding, k: int,
                     m: int) -> list[str | None]:
    """The messages verify may raise ([None]: it must pass): the first record at fault, then k^m (an input
    item left out: any of them may be named)."""
    covers = {label: set(items) for label, items in recoding.rules.items()}
    for r, published in enumerate(records):
        source = {str(tx.items[c]) for c in tx.codes[tx.offsets[r]:tx.offsets[r + 1]]}
        if len(set(published)) != len(published):
            return [f"record {r + 1}: an item is published twice"]
        for item in published:
            if not covers.get(item, {item}) & source:
                return [f"record {r + 1}: published item {item!r} covers none of its items"]
        covered = set(published).union(*(covers[p] for p in published if p in covers))
        left = source - set(recoding.suppressed_items) - covered
        if left:
            return [f"record {r + 1}: item {x!r} is neither published nor suppressed" for x in left]
    best: tuple[int, tuple[str, ...]] | None = None
    for size in range(1, m + 1):
        counts = Counter(c for rec in records for c in combinations(sorted(set(rec)), size))
        if not counts:
            break
        low = min(counts.values())
        weakest = min(c for c, v in counts.items() if v == low)
        if best is None or low < best[0]:
            best = (low, weakest)
    if best is not None and best[0] < k:
        return [f"k^m-anonymity (k={k}, m={m}) fails: {{{', '.join(best[1])}}} occurs in {best[0]} record(s)"]
    return [None]


def run_verify(tx, records, recoding, k, m, published=None) -> str | None:
    try:
        verify(tx, records, recoding, k, m, published=published)
    except VerificationError as e:
        return str(e)
    return None


@pytest.mark.parametrize("seed", SEEDS)
def test_publish_matches_plain_python(seed):
    rng = random.Random(seed)
    tx = random_transactions(rng)
    recoding = random_recoding(rng, tx)
    expected = reference_publish(tx, recoding)
    assert publish(tx, recoding) == expected
    coded = publish_sets(tx, recoding)
    again = Transactions.from_records(expected)
    assert coded.items.tolist() == again.items.tolist()
    assert coded.offsets.tolist() == again.offsets.tolist() and coded.codes.tolist() == again.codes.tolist()


@pytest.mark.parametrize("seed", SEEDS)
def test_verify_matches_plain_python(seed):
    rng = random.Random(seed)
    tx = random_transactions(rng)
    recoding = random_recoding(rng, tx)
    records = reference_publish(tx, recoding)
    k, m = rng.randint(1, 4), rng.randint(1, 3)
    want = reference_checks(tx, records, recoding, k, m)
    assert run_verify(tx, records, recoding, k, m) in want
    assert run_verify(tx, records, recoding, k, m, published=publish_sets(tx, recoding)) in want


@pytest.mark.parametrize("seed", SEEDS)
def test_verify_names_the_first_tampered_record(seed):
    rng = random.Random(1000 + seed)
    tx = random_transactions(rng)
    recoding = random_recoding(rng, tx)
    records = [list(r) for r in reference_publish(tx, recoding)]
    r = rng.randrange(tx.n)
    how = rng.choice(["drop", "foreign", "twice", "swap"])
    if how == "drop" and records[r]:
        records[r].pop(rng.randrange(len(records[r])))
    elif how == "foreign":
        records[r].append("not-an-item")
    elif how == "twice" and records[r]:
        records[r].append(records[r][0])
    elif how == "swap":
        records[r] = records[(r + 1) % tx.n]
    want = reference_checks(tx, records, recoding, 1, 1)
    assert run_verify(tx, records, recoding, 1, 1) in want


@pytest.mark.parametrize("seed", SEEDS)
def test_from_cells_matches_splitting_each_cell(seed):
    rng = random.Random(2000 + seed)
    pieces = ["a", "b", "c d", " ", "", "é", "b\ud800"]  # a lone surrogate: Arrow refuses it, Python splits
    cells = [";".join(rng.choice(pieces) for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(0, 12))]
    got = Transactions.from_cells(cells, ";")
    want = Transactions.from_records([[x for x in cell.split(";") if x] for cell in cells])
    assert got.items.tolist() == want.items.tolist()
    assert got.offsets.tolist() == want.offsets.tolist() and got.codes.tolist() == want.codes.tolist()


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("seed", range(10))
def test_supports_match_counting_combinations(seed, dense, monkeypatch):
    monkeypatch.setattr(itemsets, "CHUNK_KEYS", 7)  # many chunks: the merging is exercised
    if not dense:
        monkeypatch.setattr(itemsets, "DENSE_KEYS", 0)
    rng = random.Random(3000 + seed)
    tx = random_transactions(rng)
    records = [{str(tx.items[c]) for c in tx.codes[tx.offsets[r]:tx.offsets[r + 1]]} for r in range(tx.n)]
    code_of = {str(x): i for i, x in enumerate(tx.items)}
    base = len(tx.items)
    for size in (1, 2, 3):
        counts = Counter(c for rec in records for c in combinations(sorted(rec, key=code_of.__getitem__), size))
        want = sorted((sum(code_of[x] * base ** (size - 1 - j) for j, x in enumerate(c)), v) for c, v in counts.items())
        offsets, codes = itemsets.sorted_sets(tx.offsets, tx.codes)
        keys, sup = itemsets.supports(offsets, codes, size, base)
        assert list(zip(keys.tolist(), sup.tolist())) == want


@pytest.mark.parametrize("seed", range(10))
def test_top_itemsets_and_changed_occurrences_match_plain_python(seed):
    rng = random.Random(4000 + seed)
    tx = random_transactions(rng)
    recoding = random_recoding(rng, tx)
    records = [[str(tx.items[c]) for c in tx.codes[tx.offsets[r]:tx.offsets[r + 1]]] for r in range(tx.n)]
    code_of = {str(x): i for i, x in enumerate(tx.items)}
    candidates = []
    for size in (1, 2):
        counts = Counter(c for rec in records for c in combinations(sorted(set(rec), key=code_of.__getitem__), size))
        candidates += [(-v, size, [code_of[x] for x in c], c) for c, v in counts.items()]
    candidates.sort()
    want = [(-v, c) for v, _, _, c in candidates[:5]]
    assert measures.top_itemsets(tx, 2, 5) == want
    occurrences = [(x, int(recoding.node_of_item[code_of[x]])) for rec in records for x in dict.fromkeys(rec)]
    changed = [n < 0 or recoding.labels[n] != x for x, n in occurrences]
    assert measures.changed_occurrences(tx, recoding.node_of_item, recoding.labels) == sum(changed) / len(changed)


@pytest.mark.parametrize("seed", range(20))
def test_untouched_rows_skip_only_what_the_plain_loop_skips(seed, monkeypatch):
    monkeypatch.setattr(generalizers, "ROW_BLOCK", 3)
    rng = random.Random(5000 + seed)
    violating = np.array([sorted(rng.sample(range(15), 2)) for _ in range(rng.randint(0, 40))], dtype=np.int64)
    violating = violating.reshape(-1, 2)
    adds = [rng.sample(range(20), rng.randint(0, 2)) for _ in range(len(violating))]

    def fixed(rows) -> list[list[int]]:  # the rows a fix() loop acts on; each acted-on row touches more items
        touched: set[int] = set()
        acted = []
        for row in rows(touched):
            if not touched.isdisjoint(row):
                continue
            acted.append(row)
            touched.update(row + adds[len(acted) - 1])
        return acted

    assert fixed(lambda touched: generalizers.untouched_rows(violating, touched)) == \
        fixed(lambda touched: violating.tolist())
