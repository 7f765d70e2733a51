"""Item hierarchies built from the data: the relational builders (engine.model.builders) on the items.

Every builder that groups a column's values works on items too when it is given one value per item
occurrence (records as sets): grouping by frequency puts the most frequent items together first,
alphabetical grouping by name, numeric items get nested intervals; each with its fanout. The web
app's builder page and the CLI call this with the builder's name and options."""

from __future__ import annotations

import pandas as pd

from ..model import builders
from ..model.hierarchy import Hierarchy
from ..model.missing import markers_in_use
from .transactions import Transactions

ITEM_BUILDERS = ("grouping", "intervals", "masking", "data-driven")


def item_occurrences(tx: Transactions) -> pd.Series:
    """One value per (record, item) pair: the items as a column the builders can read."""
    d = tx.distinct()
    return pd.Series(tx.items[d.codes], dtype=object).astype(str)


def build_item_hierarchy(tx: Transactions, kind: str = "grouping", name: str = "items", **options: object) -> Hierarchy:
    """The hierarchy of the items by builder ``kind`` (grouping: order alphabetical|frequency|numeric,
    fanout; intervals: width, fanout, ...). Items are nominal unless the order asked is numeric (or the
    builder is intervals): grouping defaults to frequency buckets, and a group of many items is labelled as
    a set ({7, 50, … +4}), never first..last, which would read as a range of ids such as 7..1023."""
    if kind in ("grouping", "data-driven"):
        options.setdefault("order", "frequency")
    # an item is never missing: an item named NA or ? is an item like any other (engine.model.missing's markers
    # are for table cells; a record without items is refused when it is read)
    with markers_in_use(()):
        hierarchy = builders.build(kind, name, item_occurrences(tx), **options)
    if kind in ("grouping", "data-driven") and options.get("order") != "numeric":
        hierarchy = _set_labels(hierarchy)
    return hierarchy


def _set_labels(hierarchy: Hierarchy) -> Hierarchy:
    """Every group label ``first..last`` of a level replaced by its members as a set: the first two and how
    many more (groups of a level are disjoint, so the label stays unique); an item's own text is never
    taken by a group."""
    rows = hierarchy.to_rows()
    items = {row[0] for row in rows}
    for level in range(1, len(rows[0]) - 1 if rows else 0):
        members: dict[str, list[str]] = {}
        for row in rows:
            members.setdefault(row[level], []).append(row[0])
        renamed = {}
        for label, leaves in members.items():
            if ".." not in label or len(leaves) < 3 or label in items:
                continue
            text = "{" + ", ".join(leaves[:2]) + f", … +{len(leaves) - 2}}}"
            while text in items:
                text += " (group)"
            renamed[label] = text
        for row in rows:
            row[level] = renamed.get(row[level], row[level])
    return Hierarchy.from_rows(rows, hierarchy.name, hierarchy.source, kind=hierarchy.kind)
