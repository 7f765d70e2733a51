"""The default hierarchy of a column: one builder and its options, chosen from the column's type and
distribution (definitions.md, "Default hierarchies"). The column page, the builder page's first preview,
the run (engine.Table.hierarchies), the CLI and out-of-core runs all take it from here, so the default is
the same wherever it is shown.

- date columns: the dates builder (day -> month -> year -> decade -> *, format detected);
- numbers: equal-width intervals (the intervals builder with its data-derived defaults), or, when the
  distribution is skewed (|sample skewness| > 1 over the records), quantile intervals (about equal
  numbers of records per interval);
- text with a natural order (engine.model.order: a known ladder such as education levels or a Likert scale,
  or a number leading every value): ordered grouping in that order, two at a time;
- other text: value -> * (the flat builder).

Missing cells (engine.model.missing) take no part in the choice; the builder gives them their own leaf.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import HierarchyError, InputError
from .builders import BUILDERS, build_flat, is_numeric, parse_numbers
from .column_types import NUMERIC_TYPES, infer_type
from .hierarchy import ROOT, Hierarchy, interval_hierarchy, with_missing
from .missing import has_missing, present_values
from .order import natural_order

SKEWNESS_LIMIT = 1.0  # Bulmer's rule of thumb: |skewness| above 1 is a highly skewed distribution


def skewness(numbers: np.ndarray) -> float:
    """Fisher-Pearson sample skewness g1 = m3 / m2^1.5 (0 for a constant column)."""
    x = np.asarray(numbers, dtype=float)
    if len(x) < 3:
        return 0.0
    d = x - x.mean()
    m2 = float(np.mean(d**2))
    return float(np.mean(d**3) / m2**1.5) if m2 > 0 else 0.0


def default_builder(values: pd.Series, column_type: str) -> tuple[str, dict]:
    """(builder name, options) of a column's default hierarchy; options the builder page shows."""
    present = present_values(values.astype(str))
    distinct = pd.unique(present).tolist()
    if len(distinct) < 2:  # one value: generalizing it can only hide it
        return "flat", {}
    if column_type == "date" and BUILDERS["dates"].refusal("values", distinct) is None:
        return "dates", BUILDERS["dates"].defaults(present)
    if column_type in NUMERIC_TYPES and is_numeric(distinct):
        numbers = pd.to_numeric(present.str.strip(), errors="coerce").to_numpy(dtype=float)
        if len(distinct) > 2 and abs(skewness(numbers)) > SKEWNESS_LIMIT:
            return "quantiles", BUILDERS["quantiles"].defaults(present)
        return "intervals", BUILDERS["intervals"].defaults(present)
    if column_type not in NUMERIC_TYPES and natural_order(distinct) is not None:
        return "grouping", BUILDERS["grouping"].defaults(present)
    return "flat", {}


def default_column_hierarchy(name: str, values: pd.Series, numeric: bool, column_type: str | None = None
                             ) -> Hierarchy:
    """The default hierarchy of a column (see the module's docstring), with the missing leaf when the
    column has missing cells. ``numeric`` wins over ``column_type``: a numeric column whose values are
    not all numbers is refused naming the first one that is not."""
    values = values.astype(str)
    present = present_values(values)
    missing = has_missing(values)
    if present.empty:  # every cell missing: the missing leaf under the root
        return Hierarchy.from_rows([["", ROOT]], name, f"default hierarchy of {name!r}", kind="flat")
    if numeric:
        parse_numbers(name, pd.unique(present).tolist())  # names a value that is not a number
        column_type = column_type if column_type in NUMERIC_TYPES else "decimal"
    elif column_type is None or column_type in NUMERIC_TYPES:
        column_type = infer_type(values)
        column_type = "string" if column_type in NUMERIC_TYPES else column_type
    kind, options = default_builder(values, column_type)
    try:
        h = BUILDERS[kind].run(name, values, options)
    except (HierarchyError, InputError):
        # e.g. dates whose day and month orders cannot be told apart, a width too fine to print:
        # the plain defaults of the type
        h = interval_hierarchy(name, pd.unique(present).tolist()) if numeric else build_flat(name, values)
        h = with_missing(h) if missing else h
        kind = "intervals" if numeric else "flat"
    h.source = f"default hierarchy of {name!r} ({BUILDERS[kind].label.lower()})"
    return h


def default_hierarchy(name: str, values: pd.Series, numeric: bool, column_type: str | None = None) -> Hierarchy:
    """The default hierarchy of a column from its values (the column's type and distribution decide); a
    missing value, when the column has one, gets its own leaf (with_missing)."""
    return default_column_hierarchy(name, values, numeric, column_type)
