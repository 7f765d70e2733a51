"""What a column's default hierarchy is, in words, generated from the hierarchy that was built (its builder,
the builder's options and its levels), so the help the column page shows can never contradict the tree it
shows (engine.model.defaults chooses the builder; this only describes the outcome)."""

from __future__ import annotations

import pandas as pd

from .builders import BUILDERS, parse_fanout
from .defaults import SKEWNESS_LIMIT, skewness
from .hierarchy import Hierarchy, format_number, without_missing
from .missing import MISSING, NULL_LABEL, present_values

LISTED_VALUES = 3  # values named at each end of a natural order


def level_counts(h: Hierarchy) -> list[int]:
    """Labels per level, leaves first, the missing value's leaf and its (null) labels left out."""
    return [len(labels) for labels in without_missing(h).labels]


def _ladder(counts: list[int], unit: str) -> str:
    """'value (12 distinct) → 6 intervals → 3 → 2 → *' from the labels per level."""
    steps = [f"value ({counts[0]:,} distinct)"]
    for i, n in enumerate(counts[1:-1]):
        steps.append(f"{n:,} {unit}" if i == 0 else f"{n:,}")
    return " → ".join(steps + ["*"])


def _fanout(options: dict) -> str:
    fanouts = parse_fanout(options.get("fanout") or "2")
    per = " then ".join(str(f) for f in fanouts)
    return f"{per} at a time" + (" (the last repeated)" if len(fanouts) > 1 else "")


def _order(options: dict) -> str:
    order = options.get("order") or "alphabetical"
    if order == "custom" and options.get("custom_order"):
        custom = options["custom_order"]
        values = [v for v in (custom.splitlines() if isinstance(custom, str) else list(custom)) if v]
        if len(values) > 2 * LISTED_VALUES:
            shown = ", ".join(values[:LISTED_VALUES]) + ", …, " + ", ".join(values[-LISTED_VALUES:])
        else:
            shown = ", ".join(values)
        return f"in their natural order ({shown})"
    return {"numeric": "in numeric order", "frequency": "from the most to the least frequent"}.get(
        order, "in alphabetical order")


def describe_default(h: Hierarchy, options: dict | None = None, values: pd.Series | None = None) -> str:
    """One sentence on the default hierarchy ``h``: its builder (``h.kind``), the ``options`` it was built with
    (engine.model.defaults.default_builder's, when it was that builder) and its labels per level. ``values``: the
    column's cells, for the skewness that chose quantile intervals."""
    options = options or {}
    counts = level_counts(h)
    kind = h.kind
    if counts[0] <= 1:
        text = "its one value straight to * (value → *): generalizing it can only hide it"
    elif kind == "flat" or len(counts) <= 2:
        text = (f"every value straight to * (value → *): no natural order was found among its {counts[0]:,} "
                f"distinct values, so generalizing it means hiding it")
    elif kind == "intervals":
        shape = _ladder(counts, "intervals")
        if {"lower", "upper", "width"} <= options.keys():
            text = (f"equal-width numeric intervals: [{format_number(options['lower'])}, {format_number(options['upper'])}) cut "
                    f"every {format_number(options['width'])}, then merged {_fanout(options)} up to *: {shape}")
        else:
            text = f"equal-width numeric intervals, merged up to *: {shape}"
    elif kind == "quantiles":
        why = ""
        if values is not None:
            numbers = pd.to_numeric(present_values(values.astype(str)).str.strip(), errors="coerce").dropna()
            g1 = skewness(numbers.to_numpy(dtype=float))
            if abs(g1) > SKEWNESS_LIMIT:
                why = f" (the values are skewed: skewness {g1:.2f}, beyond ±{SKEWNESS_LIMIT:g})"
        bins = options.get("bins")
        asked = f" (up to {int(bins)} asked; repeated cut points count once)" if bins else ""
        text = (f"quantile intervals{why}: {counts[1]:,} intervals holding about equal numbers of records"
                f"{asked}, then merged {_fanout(options)} up to *: {_ladder(counts, 'intervals')}")
    elif kind == "grouping":
        text = (f"ordered grouping: the values {_order(options)}, grouped {_fanout(options)}, then the groups "
                f"grouped, up to *: {_ladder(counts, 'groups')}")
    elif kind == "dates":
        levels = [lv.strip() for lv in str(options.get("levels") or "").split(",") if lv.strip()]
        fmt = f" (read as {options['format']})" if options.get("format") else ""
        names = " → ".join(["date", *levels, "*"]) if levels else "date → … → *"
        text = f"dates{fmt}: {names}: {_ladder(counts, 'labels')}"
    else:
        builder = BUILDERS.get(kind)
        text = f"{builder.label.lower() if builder else kind}: {_ladder(counts, 'labels')}"
    if MISSING in h.leaf_index:
        text += f"; missing cells: a leaf of their own, {NULL_LABEL} below the root"
    return text[0].upper() + text[1:] + "."
