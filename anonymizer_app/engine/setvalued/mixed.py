"""Tables with one set-valued column: (k, k^m)-anonymity (Poulis, Loukides, Gkoulalas-Divanis &
Skiadopoulos, "Anonymizing data with relational and transaction attributes", ECML PKDD 2013; the mode
Amnesia offers for such tables).

Formulation followed, and why: the relational QIs are anonymized first (any of the product's
relational algorithms and models, through the run pipeline and its gate), then the set-valued column
is made k^m-anonymous *within every published equivalence class* by AA on that class's records. An
adversary who knows a person's QI values and up to m of their items then still matches at least k
records: the class holds at least k records, and inside it every itemset of at most m items that
occurs does so in at least k of them. The weaker reading (k-anonymity on the QIs and, separately,
k^m on the whole column) lets QI values plus a single item single a record out, which is exactly
the combined knowledge the mixed mode exists to cover. Per-class k^m also gives k^m on the whole
column (an itemset's support is the sum of its per-class supports). Each class is generalized on
its own (local recoding of the items), as in Poulis et al.'s cluster-then-AA scheme; within a class
of at least k records AA always succeeds (in the worst case every item becomes the root).
Suppressed records (class -1) have their set column replaced by the root.
"""

from __future__ import annotations

import numpy as np

from ..errors import Cancelled, InputError
from ..hierarchy import ROOT, Hierarchy
from . import itemsets
from .anonymize import anonymize_transactions
from .measures import frequent_itemsets
from .transactions import Transactions, column_transactions


def anonymize_set_column(values, column: str, delimiter: str, class_of_row: np.ndarray, k: int, m: int, *,
                         algorithm: str = "apriori", hierarchy: Hierarchy | None = None,
                         progress=None) -> tuple[list[str], dict]:
    """The published cells of the set-valued ``column`` (items joined by ``delimiter``) and a report,
    given the relational classes of the published rows (``class_of_row``; -1 suppressed)."""
    tx = column_transactions(list(values), delimiter, column)
    classes = np.asarray(class_of_row, dtype=np.int64)
    if len(classes) != tx.n:
        raise InputError(f"column {column!r}: {tx.n} cells but {len(classes)} classified rows")
    longest = int(tx.distinct().lengths.max()) if tx.n else 0
    if m > longest:
        raise InputError(f"m={m} is larger than the longest record of column {column!r} ({longest} distinct items)")
    out = [ROOT] * tx.n
    rules: dict[str, set[str]] = {}
    generalized = 0
    labels = np.unique(classes[classes >= 0])
    for done, c in enumerate(labels):
        rows = np.flatnonzero(classes == c)
        sub = Transactions.from_records([tx.record(int(r)) for r in rows])
        class_m = min(m, int(sub.distinct().lengths.max()))
        result = anonymize_transactions(sub, k, class_m, algorithm=algorithm, hierarchy=hierarchy,
                                        label_joiner="; " if delimiter == "," else ", ")
        clash = [x for x in result.recoding.labels if delimiter in x and x in result.recoding.rules]
        if clash:
            raise InputError(f"column {column!r}: the generalized item {clash[0]!r} contains the item delimiter "
                             f"{delimiter!r}; choose another delimiter or hierarchy labels without it")
        for r, record in zip(rows, result.records):
            out[int(r)] = delimiter.join(record)
        for label, items in result.recoding.rules.items():
            rules.setdefault(label, set()).update(items)
        generalized += sum(len(v) for v in result.recoding.rules.values())
        if progress is not None and progress(done / max(len(labels), 1), f"k^m in class {done + 1} of {len(labels)}") is False:
            raise Cancelled("cancelled")
    check = column_check(out, delimiter, classes, k, m)
    published = Transactions.from_records([[x for x in cell.split(delimiter) if x] for cell in out])
    size = min(m, 2)
    report = {"column": column, "k": k, "m": m, "algorithm": algorithm, "classes": int(len(labels)),
              "frequent_itemsets": {"size": size, "before": frequent_itemsets(tx, size),
                                    "after": frequent_itemsets(published, size)},
              "generalization_rules": {g: sorted(v) for g, v in rules.items()},
              "generalized_items_in_classes": generalized,
              "records_with_repeated_items": tx.repeated_records(), **check}
    return out, report


def column_check(cells: list[str], delimiter: str, classes: np.ndarray, k: int, m: int) -> dict:
    """k^m within every class of the published rows (suppressed rows excluded): the smallest support."""
    smallest = None
    for c in np.unique(classes[classes >= 0]):
        rows = np.flatnonzero(classes == c)
        tx = Transactions.from_records([[x for x in cells[int(r)].split(delimiter) if x] for r in rows])
        low, _ = itemsets.smallest_support(tx.offsets, tx.codes, m)
        if low is not None and (smallest is None or low < smallest):
            smallest = low
    return {"km_smallest_support_in_classes": smallest, "km_holds": smallest is None or smallest >= k}
