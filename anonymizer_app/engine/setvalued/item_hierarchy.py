"""Item hierarchies built from the data: the relational builders (engine.builders) on the items.

Every builder that groups a column's values works on items too when it is given one value per item
occurrence (records as sets): grouping by frequency puts the most frequent items together first,
alphabetical grouping by name, numeric items get nested intervals; each with its fanout. The web
app's builder page and the CLI call this with the builder's name and options."""

from __future__ import annotations

import pandas as pd

from .. import builders
from ..hierarchy import Hierarchy
from ..missing import markers_in_use
from .transactions import Transactions

ITEM_BUILDERS = ("grouping", "intervals", "masking", "data-driven")


def item_occurrences(tx: Transactions) -> pd.Series:
    """One value per (record, item) pair: the items as a column the builders can read."""
    d = tx.distinct()
    return pd.Series(tx.items[d.codes], dtype=object).astype(str)


def build_item_hierarchy(tx: Transactions, kind: str = "grouping", name: str = "items", **options: object) -> Hierarchy:
    """The hierarchy of the items by builder ``kind`` (grouping: order alphabetical|frequency|numeric,
    fanout; intervals: width, fanout, ...)."""
    # an item is never missing: an item named NA or ? is an item like any other (engine.missing's markers
    # are for table cells; a record without items is refused when it is read)
    with markers_in_use(()):
        return builders.build(kind, name, item_occurrences(tx), **options)
