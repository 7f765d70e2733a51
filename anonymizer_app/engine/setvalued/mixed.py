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

Measures of the column (the transaction measures of :mod:`.measures`, over the whole column): NCP is the
mean over the published rows' item occurrences (records as sets) of the loss of each item's published
form in its class, normalized by the column's domain (a hierarchy node covering u of the hierarchy's L
leaves costs u/L; a dynamic set of u items u/|I| with I the column's distinct items; a dynamic range
(hi-lo)/(the column's max-min)); a suppressed row's items cost 1 each. The itemset-support error takes
the column's most frequent itemsets of at most min(m, 2) items and estimates each one's support as the
sum over the classes of its estimate from that class's release (each class is recoded on its own); a
suppressed row contributes nothing to an estimate.
"""

from __future__ import annotations

import numpy as np

from ..errors import Cancelled, InputError
from ..model.hierarchy import ROOT, Hierarchy
from . import itemsets
from .anonymize import SetResult, anonymize_transactions
from .generalizers import parse_number
from .measures import TOP_ITEMSETS, estimated_supports, frequent_itemsets, relative_error, top_itemsets
from .transactions import Transactions, column_transactions


def anonymize_set_column(values, column: str, delimiter: str, class_of_row: np.ndarray, k: int, m: int, *,
                         algorithm: str = "apriori", hierarchy: Hierarchy | None = None,
                         progress=None, numeric: bool = False) -> tuple[list[str], dict]:
    """The published cells of the set-valued ``column`` (items joined by ``delimiter``) and a report,
    given the relational classes of the published rows (``class_of_row``; -1 suppressed). Dynamic
    hierarchies make ranges only of items declared ``numeric``; other items are merged into sets."""
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
    domain = _ColumnDomain(tx, algorithm, hierarchy, numeric)
    size = min(m, 2)
    chosen = top_itemsets(tx, size, TOP_ITEMSETS)
    estimates = np.zeros(len(chosen))
    distinct = tx.distinct()
    occurrences = int(len(distinct.codes))
    lost = float(np.count_nonzero(classes[distinct.record_of] < 0))  # a suppressed row's items cost 1 each
    for done, c in enumerate(labels):
        rows = np.flatnonzero(classes == c)
        sub = Transactions.from_records([tx.record(int(r)) for r in rows])
        class_m = min(m, int(sub.distinct().lengths.max()))
        result = anonymize_transactions(sub, k, class_m, algorithm=algorithm, hierarchy=hierarchy,
                                        numeric=domain.numeric, label_joiner="; " if delimiter == "," else ", ",
                                        measure=False)
        lost += float(domain.losses(sub, result)[sub.distinct().codes].sum())
        estimates += estimated_supports(sub, result.recoding.node_of_item, [names for _, names in chosen])
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
    error = relative_error(chosen, estimates)
    report = {"column": column, "k": k, "m": m, "algorithm": algorithm, "classes": int(len(labels)),
              "ncp": lost / occurrences if occurrences else 0.0, "support_error": error["mean_relative_error"],
              "support_error_itemsets": error["itemsets"], "support_compared": error["compared"],
              "frequent_itemsets": {"size": size, "before": frequent_itemsets(tx, size),
                                    "after": frequent_itemsets(published, size)},
              "generalization_rules": {g: sorted(v) for g, v in rules.items()},
              "generalized_items_in_classes": generalized,
              "records_with_repeated_items": tx.repeated_records(), **check}
    return out, report


class _ColumnDomain:
    """The column's item domain, which normalizes the loss of a published item in any class."""

    def __init__(self, tx: Transactions, algorithm: str, hierarchy: Hierarchy | None, numeric: bool = False):
        self.hierarchy = hierarchy if algorithm == "apriori" else None
        values = [parse_number(str(x)) for x in tx.items]
        if numeric and self.hierarchy is None and None in values:
            bad = next(str(x) for x, v in zip(tx.items, values) if v is None)
            raise InputError(f"numeric dynamic hierarchy: item {bad!r} is not a number")
        # dynamic hierarchies: declared numbers become ranges in every class (one label form per column)
        self.numeric = None if self.hierarchy is not None else bool(values) and numeric
        if self.hierarchy is not None:
            self.size = max(len(self.hierarchy.leaves), 1)
            self.node_leaves = np.concatenate([self.hierarchy.leaf_counts(lv)
                                               for lv in range(len(self.hierarchy.labels))]).astype(np.int64)
        else:
            self.size = max(len(tx.items), 1)
            numbers = [v for v in values if v is not None]
            self.span = float(max(numbers) - min(numbers)) if self.numeric else 0.0

    def losses(self, sub: Transactions, result: SetResult) -> np.ndarray:
        """The loss of every item of ``sub`` (a class's records) as published by ``result``."""
        node_of_item, names, rules = result.recoding.node_of_item, result.recoding.labels, result.recoding.rules
        out = np.ones(len(sub.items))  # a suppressed item costs 1
        for i, node in enumerate(node_of_item.tolist()):
            if node < 0:
                continue
            if self.hierarchy is not None:
                covered = int(self.node_leaves[node])
                out[i] = covered / self.size if covered > 1 else 0.0
                continue
            group = rules.get(names[node], [])
            if len(group) < 2:
                out[i] = 0.0
            elif self.numeric:
                spread = max(float(x) for x in group) - min(float(x) for x in group)
                out[i] = spread / self.span if self.span else 0.0
            else:
                out[i] = len(group) / self.size
        return out


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
