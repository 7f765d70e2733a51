"""Automatic generalization hierarchies built from a column's values.

Each builder takes the column's values (text) and keyword options whose defaults come from the
data, and returns a ``Hierarchy`` whose ``kind`` is the builder's name. ``BUILDERS`` describes them
for forms and CLI flags (the same way ``ALGORITHMS`` and ``PRIVACY_MODELS`` do), and ``build``
validates the options and runs one.

Labels say what a node holds (``[20-30)``, ``Bachelors..Masters``, ``{a, b, c}``, ``6701*``,
``2024-03``), never generated ids.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..errors import HierarchyError, InputError
from ..parameters import Parameter
from .hierarchy import MAX_LISTED, ROOT, Hierarchy, format_number, interval_label, nice_width, with_missing
from .missing import has_missing, present_values
from .order import natural_order

SMALL_GROUP = 3  # groups of at most this many values are labelled by listing them
# Intervals one builder may lay between lower and upper (the web app passes its setting
# HIERARCHY_BUILDER_MAX_INTERVALS): a width of 1e-9 over [20, 60) would ask for 4e10 of them.
MAX_INTERVALS = 100_000
# Largest magnitude of a bound, a width or a value laid out: 1e308 - (-1e308) overflows to infinity; within
# ±1e300 differences, and spans merged by fanouts up to MAX_FANOUT, stay finite.
MAX_BOUND = 1e300
MAX_FANOUT = 1_000_000  # more merges one level than any column has values
MAX_FANOUT_LEVELS = 64  # fanouts listed per level (engine.model.hierarchy.MAX_LEVELS)


# ---- shared helpers ----------------------------------------------------------------------------
def _strings(name: str, values: pd.Series | Sequence[str]) -> pd.Series:
    """The values a builder builds its nodes from: the present ones (missing cells, blank or an NA
    marker, get their own leaf afterwards: BuilderInfo.run)."""
    s = pd.Series(values, dtype=object) if not isinstance(values, pd.Series) else values
    s = present_values(s.dropna().astype(str))
    if s.empty:
        raise HierarchyError(f"column {name!r} has no values to build a hierarchy from (every cell is missing)")
    return s.reset_index(drop=True)


def _listed(values: Sequence[str]) -> str:
    shown = ", ".join(repr(v) for v in values[:MAX_LISTED])
    more = f" and {len(values) - MAX_LISTED} more" if len(values) > MAX_LISTED else ""
    return shown + more


def parse_numbers(name: str, strings: Sequence[str]) -> np.ndarray:
    nums = pd.to_numeric(pd.Series(list(strings), dtype=object).str.strip(), errors="coerce")
    bad = [s for s, n in zip(strings, nums) if pd.isna(n)]
    if bad:
        raise HierarchyError(f"column {name!r}: value {bad[0]!r} is not a number")
    arr = nums.to_numpy(dtype=float)
    if not np.isfinite(arr).all():
        raise HierarchyError(f"column {name!r}: value {strings[int(np.flatnonzero(~np.isfinite(arr))[0])]!r} "
                             f"is not a finite number")
    return arr


def is_numeric(strings: Sequence[str]) -> bool:
    nums = pd.to_numeric(pd.Series(list(strings), dtype=object).str.strip(), errors="coerce")
    return bool(nums.notna().all()) and bool(np.isfinite(nums.to_numpy(dtype=float)).all())


def parse_fanout(fanout: str | int | Sequence[int]) -> list[int]:
    """'2' or '2,5' (one per level, the last one repeated) -> [2, 5]; each at least 2."""
    if isinstance(fanout, int):
        parts: list = [fanout]
    elif isinstance(fanout, str):
        parts = [p.strip() for p in fanout.split(",")]
    else:
        parts = list(fanout)
    try:
        out = [int(p) for p in parts]
    except (TypeError, ValueError):
        raise InputError(f"fanout must be an integer or integers separated by commas, got {fanout!r}") from None
    if not out or any(f < 2 for f in out):
        raise InputError(f"fanout must be at least 2 on every level, got {fanout!r}")
    if any(f > MAX_FANOUT for f in out) or len(out) > MAX_FANOUT_LEVELS:
        raise InputError(f"fanout must be at most {MAX_FANOUT:,} on every level and list at most "
                         f"{MAX_FANOUT_LEVELS} levels, got {fanout if len(str(fanout)) < 60 else str(fanout)[:60] + '…'!r}")
    return out


def _finish(name: str, columns: list[list[str]], kind: str, notes: Sequence[str] = ()) -> Hierarchy:
    """Rows from level columns; the root '*' on top."""
    if any(c != ROOT for c in columns[-1]) or len(columns) == 1:
        columns = columns + [[ROOT] * len(columns[0])]
    rows = [list(r) for r in zip(*columns)]
    h = Hierarchy.from_rows(rows, name, f"{kind} hierarchy of {name!r}", kind=kind)
    h.notes.extend(notes)
    return h


def _group_label(members: Sequence[str]) -> str:
    """{a, b, c} for a few values, first..last for a run of the order."""
    if len(members) == 1:
        return members[0]
    if len(members) <= SMALL_GROUP:
        return "{" + ", ".join(members) + "}"
    return f"{members[0]}..{members[-1]}"


def _ordered(name: str, strings: pd.Series, order: str, custom_order: Sequence[str] | str | None = None
             ) -> list[str]:
    """Distinct values in the chosen order."""
    counts = strings.value_counts(sort=False)
    distinct = [str(v) for v in counts.index]
    if order == "alphabetical":
        return sorted(distinct, key=lambda v: (v.casefold(), v))
    if order == "frequency":  # most frequent first; ties alphabetical, so the result is stable
        return sorted(distinct, key=lambda v: (-int(counts[v]), v.casefold(), v))
    if order == "numeric":
        nums = parse_numbers(name, distinct)
        return [distinct[i] for i in np.argsort(nums, kind="stable")]
    if order == "custom":
        wanted = _custom_list(custom_order)
        if not wanted:
            raise HierarchyError(f"column {name!r}: the custom order is empty; list every value of the column")
        repeated = sorted({v for v in wanted if wanted.count(v) > 1})
        if repeated:
            raise HierarchyError(f"column {name!r}: the custom order lists {_listed(repeated)} more than once")
        have = set(distinct)
        missing = [v for v in distinct if v not in set(wanted)]
        if missing:
            raise HierarchyError(f"column {name!r}: the custom order lacks {len(missing)} value(s) of the "
                                 f"column: {_listed(missing)}")
        unknown = [v for v in wanted if v not in have]
        if unknown:
            raise HierarchyError(f"column {name!r}: the custom order names {len(unknown)} value(s) not in "
                                 f"the column: {_listed(unknown)}")
        return list(wanted)
    raise InputError(f"order must be one of alphabetical, frequency, numeric, custom, got {order!r}")


def _custom_list(custom_order: Sequence[str] | str | None) -> list[str]:
    """A list, or text with one value per line (commas when it is one line, e.g. on the CLI)."""
    if custom_order is None:
        return []
    if isinstance(custom_order, str):
        sep = "\n" if "\n" in custom_order else ","
        return [p.strip() for p in custom_order.replace("\r\n", "\n").split(sep) if p.strip()]
    return [str(v) for v in custom_order]


# ---- numeric intervals -----------------------------------------------------------------------
def _snap(x: float) -> float:
    """Round away binary noise (0.1 * 7 = 0.7000000000000001) so labels and comparisons are exact."""
    return round(x, 9)


def interval_defaults(values: pd.Series) -> dict:
    """lower: the minimum snapped to a multiple of a 'nice' width; upper: past the maximum."""
    arr = parse_numbers("values", _strings("values", values).unique().tolist())
    arr = np.clip(arr, -MAX_BOUND / 10, MAX_BOUND / 10)  # suggestions within build_intervals' limits
    lo, hi = float(arr.min()), float(arr.max())
    integral = bool(np.all(np.mod(arr, 1) == 0))
    width = nice_width(hi - lo, 10, integral)
    lower = _snap(math.floor(_snap(lo / width)) * width)
    upper = _snap(lower + (math.floor(_snap((hi - lower) / width)) + 1) * width)
    return {"lower": lower, "upper": upper, "width": width, "fanout": "2", "outside": "nodes"}


def build_intervals(
    name: str,
    values: pd.Series,
    lower: float | None = None,
    upper: float | None = None,
    width: float | None = None,
    fanout: str = "2",
    outside: str = "nodes",
    max_intervals: int = MAX_INTERVALS,
) -> Hierarchy:
    """value -> [lo-hi) of ``width`` from ``lower`` -> ``fanout`` of those merged -> ... -> '*'.

    Intervals cover [lower, upper); values below go to a '<lower' node and values from upper on to a
    '>=upper' node (``outside='nodes'``), or are refused (``outside='refuse'``). A width that lays more
    than ``max_intervals`` intervals over [lower, upper), or whose labels cannot be told apart at their
    printed precision, is refused with the smallest width that would do."""
    strings = _strings(name, values)
    distinct = strings.unique().tolist()
    arr = parse_numbers(name, distinct)
    fanouts = parse_fanout(fanout)
    if outside not in ("nodes", "refuse"):
        raise InputError(f"outside must be one of nodes, refuse, got {outside!r}")
    lower, upper, width = (None if v is None else _parameter(p, v)
                           for p, v in (("lower", lower), ("upper", upper), ("width", width)))
    if lower is None or upper is None:  # laid out from the data: its values must be within the limit too
        big = np.flatnonzero(np.abs(arr) > MAX_BOUND)
        if big.size:
            raise InputError(f"column {name!r}: value {distinct[int(big[0])]!r} is beyond ±{MAX_BOUND:g}, the "
                             f"largest magnitude the intervals builder lays out; set lower and upper (values "
                             f"outside them go to the '<lower' and '>=upper' nodes)")
    if width is None:
        lo = float(arr.min()) if lower is None else float(lower)
        hi = float(arr.max()) if upper is None else float(upper)
        width = nice_width(hi - lo, 10, bool(np.all(np.mod(arr, 1) == 0)) and float(lo).is_integer())
    width = float(width)
    if not (width > 0 and math.isfinite(width)):
        raise InputError(f"width must be a positive number, got {width!r}")
    if lower is None:
        lower = _snap(math.floor(_snap(float(arr.min()) / width)) * width)
    lower = float(lower)
    if upper is None:
        upper = _snap(lower + (math.floor(_snap((float(arr.max()) - lower) / width)) + 1) * width)
    upper = float(upper)
    if not upper > lower:
        raise InputError(f"upper ({format_number(upper)}) must be greater than lower ({format_number(lower)})")
    if not (math.isfinite(lower) and math.isfinite(upper)):
        raise InputError(f"lower and upper must be finite numbers, got {lower!r} and {upper!r}")
    count = (upper - lower) / width
    if count > max_intervals:
        shown = f"{math.ceil(_snap(count)):,}" if count < 1e12 else f"{count:.3g}" if math.isfinite(count) else \
            "more than 1e+308"
        raise InputError(f"width {width:g} lays {shown} intervals over [{lower:g}, {upper:g}), more "
                         f"than the limit of {max_intervals:,}; choose a width of at least "
                         f"{_at_least((upper - lower) / max_intervals)}")

    order = np.argsort(arr, kind="stable")  # rows and labels listed low to high
    distinct = [distinct[i] for i in order]
    arr = arr[order]
    below, above = arr < lower, arr >= upper
    if outside == "refuse" and (below.any() or above.any()):
        out = [distinct[i] for i in np.flatnonzero(below | above)]
        raise HierarchyError(f"column {name!r}: {len(out)} value(s) outside [{format_number(lower)}, {format_number(upper)}): "
                             f"{_listed(out)}")
    low_label, high_label = f"<{format_number(lower)}", f">={format_number(upper)}"
    # rounding first: (0.7 - 0) / 0.1 is 6.999..., whose floor would put 0.7 in [0.6-0.7)
    inside = ~(below | above)
    # outside values (however large) are not laid out: their index is never used
    index = np.floor(np.round((np.where(inside, arr, lower) - lower) / width, 9)).astype(np.int64)

    def label(start: int, span: int) -> str:
        lo = _snap(lower + start * width)
        hi = min(_snap(lower + (start + span) * width), upper)  # the last node stops at upper
        return interval_label(lo, hi)

    _check_labels(width, [(_snap(lower + int(g) * width), min(_snap(lower + (int(g) + 1) * width), upper))
                          for g in np.unique(index[inside])])
    columns = [distinct]
    span = 1
    level = 0
    has_outside = bool(below.any() or above.any())
    while True:
        groups = index // span
        single = len(np.unique(groups[inside])) <= 1
        if single and level > 0 and not has_outside:
            break  # one interval holding every value says no more than the root
        columns.append([low_label if below[i] else high_label if above[i] else label(int(groups[i]) * span, span)
                        for i in range(len(distinct))])
        if single:
            break
        span *= fanouts[min(level, len(fanouts) - 1)]
        level += 1
    notes = []
    if below.any() or above.any():
        notes.append(f"{int(below.sum() + above.sum())} value(s) outside [{format_number(lower)}, {format_number(upper)}) "
                     f"kept in the nodes {low_label!r} / {high_label!r}")
    return _finish(name, columns, "intervals", notes)


def _parameter(name: str, value: object) -> float:
    """lower, upper or width as a float: a number, finite, within ±MAX_BOUND (the message names it)."""
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise InputError(f"{name} must be a finite number, got {value!r}")
    if abs(x) > MAX_BOUND:
        raise InputError(f"{name} {x:g} is beyond the limit of ±{MAX_BOUND:g} for interval bounds and widths")
    return x


def _at_least(width: float) -> str:
    """A round width (1, 2 or 5 x 10^n) no smaller than ``width``, as people type it."""
    return f"{nice_width(width * 10, 10, False):g}" if width > 0 else "a positive number"


def _check_labels(width: float, bounds: list[tuple[float, float]]) -> None:
    """Every first-level interval must print as its own label with lo < hi: bounds are printed rounded
    to 9 decimals and 10 significant digits, so a width of 1e-9 would give '[20-20)'."""
    seen: set[tuple[str, str]] = set()
    for lo, hi in bounds:
        printed = (format_number(lo), format_number(hi))
        if printed[0] == printed[1] or printed in seen:
            raise InputError(f"width {width:g} is too small for the labels' precision: the interval "
                             f"{interval_label(lo, hi)} cannot be told apart from "
                             f"{'an empty one' if printed[0] == printed[1] else 'its neighbour'}; choose a "
                             f"wider width")
        seen.add(printed)


# ---- ordered grouping -----------------------------------------------------------------------------
def grouping_defaults(values: pd.Series) -> dict:
    """Numbers in numeric order; values with a natural order (engine.model.order: a known ladder such as
    education levels or a Likert scale, or a number leading every value) in that order; else
    alphabetical."""
    distinct = _strings("values", values).unique().tolist()
    if is_numeric(distinct):
        return {"order": "numeric", "custom_order": None, "fanout": "2"}
    natural = natural_order(distinct)
    if natural is not None:
        return {"order": "custom", "custom_order": "\n".join(natural), "fanout": "2"}
    return {"order": "alphabetical", "custom_order": None, "fanout": "2"}


def build_grouping(
    name: str,
    values: pd.Series,
    order: str = "alphabetical",
    custom_order: Sequence[str] | str | None = None,
    fanout: str = "2",
) -> Hierarchy:
    """Values in an order, grouped ``fanout`` at a time, groups grouped again, up to '*'."""
    strings = _strings(name, values)
    ordered = _ordered(name, strings, order, custom_order)
    fanouts = parse_fanout(fanout)
    groups: list[list[str]] = [[v] for v in ordered]  # the leaves under each node of the current level
    position = {v: i for i, v in enumerate(ordered)}
    node_of = list(range(len(ordered)))  # leaf position -> its node at the current level
    columns = [ordered]
    level = 0
    while len(groups) > 1:
        f = fanouts[min(level, len(fanouts) - 1)]
        groups = [sum(groups[i:i + f], []) for i in range(0, len(groups), f)]
        node_of = [n // f for n in node_of]
        if len(groups) == 1:
            break
        columns.append([_group_label(groups[node_of[position[v]]]) for v in ordered])
        level += 1
    return _finish(name, columns, "grouping")


# ---- masking ----------------------------------------------------------------------------------------
def masking_defaults(values: pd.Series) -> dict:
    distinct = _strings("values", values).unique().tolist()
    return {"from_right": True, "mask": "*", "levels": max(1, max(len(v) for v in distinct))}


def build_masking(
    name: str,
    values: pd.Series,
    from_right: bool = True,
    mask: str = "*",
    levels: int | None = None,
) -> Hierarchy:
    """One more character masked per level: 67012 -> 6701* -> 670** -> ... -> '*'.

    Shorter values are padded with the mask character on the masked side to the longest length
    (so '670' counts as '670**' and joins 67012 at level 2)."""
    if not isinstance(mask, str) or len(mask) != 1:
        raise InputError(f"mask must be one character, got {mask!r}")
    distinct = _strings(name, values).unique().tolist()
    distinct.sort(key=lambda v: (v.casefold(), v))
    width = max(len(v) for v in distinct)
    if width == 0:
        raise HierarchyError(f"column {name!r}: every value is empty, nothing to mask")
    levels = width if levels is None else int(levels)
    if levels < 1:
        raise InputError(f"levels must be at least 1, got {levels}")
    if levels > width:
        longest = max(distinct, key=len)
        raise InputError(f"levels {levels} masks more characters than the values of column {name!r} have: "
                         f"the longest, {longest!r}, has {width}; choose at most {width} levels")
    padded = [v.ljust(width, mask) if from_right else v.rjust(width, mask) for v in distinct]
    columns = [distinct]
    for k in range(1, levels + 1):
        if k == width:
            columns.append([ROOT] * len(distinct))  # everything masked: the root
        elif from_right:
            columns.append([p[: width - k] + mask * k for p in padded])
        else:
            columns.append([mask * k + p[k:] for p in padded])
    notes = []
    short = [i for i, v in enumerate(distinct) if len(v) < width]
    if short:
        side = "right" if from_right else "left"
        notes.append(f"{len(short)} value(s) shorter than {width} characters padded with {mask!r} on the "
                     f"{side} (e.g. {distinct[short[0]]!r} counts as {padded[short[0]]!r})")
    return _finish(name, columns, "masking", notes)


# ---- dates ------------------------------------------------------------------------------------------
DATE_LEVELS = ("day", "month", "quarter", "year", "decade", "century")
DATE_FORMATS = {  # name shown to users -> strptime pattern; tried in this order
    "yyyy-mm-dd": "%Y-%m-%d",
    "yyyy-mm-dd hh:mm:ss": "%Y-%m-%d %H:%M:%S",
    "yyyy-mm-ddThh:mm:ss": "%Y-%m-%dT%H:%M:%S",
    "yyyy-mm-dd hh:mm": "%Y-%m-%d %H:%M",
    "yyyy/mm/dd": "%Y/%m/%d",
    "dd/mm/yyyy": "%d/%m/%Y",
    "mm/dd/yyyy": "%m/%d/%Y",
    "dd.mm.yyyy": "%d.%m.%Y",
    "dd-mm-yyyy": "%d-%m-%Y",
    "mm-dd-yyyy": "%m-%d-%Y",
    "yyyymmdd": "%Y%m%d",
}


def _pattern(fmt: str) -> str:
    if fmt in DATE_FORMATS:
        return DATE_FORMATS[fmt]
    if fmt.lower() == "iso":
        return DATE_FORMATS["yyyy-mm-dd"]
    if "%" in fmt:
        return fmt
    raise InputError(f"format must be one of {', '.join(DATE_FORMATS)} or a strptime pattern such as "
                     f"%d/%m/%Y, got {fmt!r}")


def _parse_all(strings: Sequence[str], pattern: str) -> tuple[list[datetime | None], int]:
    out: list[datetime | None] = []
    bad = 0
    for s in strings:
        try:
            out.append(datetime.strptime(s.strip(), pattern))
        except ValueError:
            out.append(None)
            bad += 1
    return out, bad


def detect_date_format(name: str, strings: Sequence[str]) -> str:
    """The format name that reads every value; day/month orders must not both fit."""
    results = {f: _parse_all(strings, p)[1] for f, p in DATE_FORMATS.items()}
    fitting = [f for f, bad in results.items() if bad == 0]
    pairs = (("dd/mm/yyyy", "mm/dd/yyyy"), ("dd-mm-yyyy", "mm-dd-yyyy"))
    for a, b in pairs:
        if a in fitting and b in fitting:
            raise HierarchyError(f"column {name!r}: the dates read both as {a} and as {b} (no day above 12); "
                                 f"choose the format")
    if fitting:
        return fitting[0]
    best = min(results, key=lambda f: results[f])
    parsed, _ = _parse_all(strings, DATE_FORMATS[best])
    first_bad = next(s for s, d in zip(strings, parsed) if d is None)
    if results[best] == len(strings):
        raise HierarchyError(f"column {name!r}: value {first_bad!r} is not a date in a known format "
                             f"({', '.join(DATE_FORMATS)})")
    raise HierarchyError(f"column {name!r}: value {first_bad!r} is not a date in the format {best} of "
                         f"the other values")


def _date_label(d: datetime, level: str) -> str:
    if level == "day":
        return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
    if level == "month":
        return f"{d.year:04d}-{d.month:02d}"
    if level == "quarter":
        return f"{d.year:04d}-Q{(d.month - 1) // 3 + 1}"
    if level == "year":
        return f"{d.year:04d}"
    if level == "decade":
        return f"{d.year // 10 * 10}s"
    start = d.year // 100 * 100  # century: 1900-1999 (not '1900s', which reads as a decade)
    return f"{start}-{start + 99}"


def parse_date_levels(levels: str | Sequence[str]) -> list[str]:
    parts = [p.strip().lower() for p in (levels.split(",") if isinstance(levels, str) else levels)]
    parts = [p for p in parts if p]
    unknown = [p for p in parts if p not in DATE_LEVELS]
    if unknown or not parts:
        raise InputError(f"levels must be some of {', '.join(DATE_LEVELS)} separated by commas, got {levels!r}")
    return sorted(set(parts), key=DATE_LEVELS.index)  # finest first, whatever order they were given in


def dates_defaults(values: pd.Series) -> dict:
    distinct = _strings("values", values).unique().tolist()
    try:
        fmt: str | None = detect_date_format("values", distinct)
    except HierarchyError:
        fmt = None
    # no 'day' level by default: a day rewritten as yyyy-mm-dd hides nothing and costs a lattice level
    return {"levels": "month,quarter,year,decade", "format": fmt}


def build_dates(
    name: str,
    values: pd.Series,
    levels: str = "day,month,year,decade",
    format: str | None = None,
) -> Hierarchy:
    """2024-03-15 -> 2024-03 -> 2024 -> 2020s -> '*', with the levels the user chose.

    The 'day' level is left out when the values are already ISO days (it would repeat them)."""
    strings = _strings(name, values)
    distinct = strings.unique().tolist()
    wanted = parse_date_levels(levels)
    fmt = format or detect_date_format(name, distinct)
    parsed, bad = _parse_all(distinct, _pattern(fmt))
    if bad:
        first = next(s for s, d in zip(distinct, parsed) if d is None)
        raise HierarchyError(f"column {name!r}: value {first!r} is not a date in the format {fmt}")
    dates: list[datetime] = [d for d in parsed if d is not None]
    order = sorted(range(len(distinct)), key=lambda i: (dates[i], distinct[i]))
    distinct = [distinct[i] for i in order]
    dates = [dates[i] for i in order]
    columns = [distinct]
    for level in wanted:
        col = [_date_label(d, level) for d in dates]
        if level == "day" and col == distinct:
            continue
        columns.append(col)
    return _finish(name, columns, "dates", [f"dates read as {fmt}"])


# ---- data-driven grouping (seed 002: generalize only the values that need it) ---------------------
def data_driven_defaults(values: pd.Series) -> dict:
    distinct = _strings("values", values).unique().tolist()
    return {"k": 5, "order": "numeric" if is_numeric(distinct) else "alphabetical"}


def build_data_driven(
    name: str,
    values: pd.Series,
    k: int = 5,
    order: str | None = None,
) -> Hierarchy:
    """Merge the rarest value (or group) with its rarer neighbour in the order, repeatedly, until
    every group holds at least k records; values with k or more records stay themselves at level 1.
    Level 2 is '*'. With fewer than k records in all, level 1 is one group of everything."""
    strings = _strings(name, values)
    k = int(k)
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if order is None:
        order = "numeric" if is_numeric(strings.unique().tolist()) else "alphabetical"
    if order not in ("numeric", "alphabetical", "frequency"):
        raise InputError(f"order must be one of numeric, alphabetical, frequency, got {order!r}")
    ordered = _ordered(name, strings, order)
    freq = strings.value_counts()
    n = len(ordered)
    count = [int(freq[v]) for v in ordered]
    first = list(range(n))  # group i spans positions first[i]..last[i]; groups keyed by first position
    last = list(range(n))
    prev = list(range(-1, n - 1))
    nxt = list(range(1, n + 1))
    alive = [True] * n
    heap = [(count[i], i) for i in range(n)]
    heapq.heapify(heap)
    groups = n
    while heap and groups > 1:
        c, g = heapq.heappop(heap)
        if not alive[g] or c != count[g]:
            continue  # stale entry
        if c >= k:
            break  # the rarest group is large enough: all are
        left, right = prev[g], (nxt[g] if nxt[g] < n else -1)
        # merge with the rarer neighbour (the left one on a tie), so groups stay as small as possible
        if right < 0 or (left >= 0 and count[left] <= count[right]):
            a, b = left, g
        else:
            a, b = g, right
        count[a] += count[b]
        last[a] = last[b]
        alive[b] = False
        nxt[a] = nxt[b]
        if nxt[b] < n:
            prev[nxt[b]] = a
        groups -= 1
        heapq.heappush(heap, (count[a], a))
    level1 = [""] * n
    for g in range(n):
        if alive[g]:
            label = _group_label(ordered[first[g]:last[g] + 1])
            for i in range(first[g], last[g] + 1):
                level1[i] = label
    merged = n - groups
    notes = [f"{merged} merge(s): {groups} node(s) at level 1, each with at least {k} record(s)"
             if len(strings) >= k else f"fewer than {k} records in all: one node at level 1"]
    return _finish(name, [ordered, level1], "data-driven", notes)


# ---- quantile intervals (skewed numbers) --------------------------------------------------------------
def quantile_defaults(values: pd.Series) -> dict:
    return {"bins": 10, "fanout": "2"}


def _closed_label(lo: float, hi: float) -> str:
    """[lo-hi] for the last interval, which holds the maximum."""
    return f"[{format_number(lo)}, {format_number(hi)}]" if lo < 0 or hi < 0 else f"[{format_number(lo)}-{format_number(hi)}]"


def build_quantiles(name: str, values: pd.Series, bins: int = 10, fanout: str = "2") -> Hierarchy:
    """value -> one of about ``bins`` intervals holding about as many records each -> ``fanout`` of those
    merged -> ... -> '*'.

    The cuts are the records' i/bins quantiles (i = 1..bins-1; numpy's "higher" method, so a cut is
    always a value of the column); repeated cuts count once, so a value holding many records starts an
    interval of its own. Intervals
    are [cut, next cut), the last one [cut, maximum]. Equal-width intervals put most values of a skewed
    column into one interval ([0-1000) holding 94 of 99 charges); these split it where the records are."""
    strings = _strings(name, values)
    bins = int(bins)
    if bins < 2:
        raise InputError(f"bins must be at least 2, got {bins}")
    fanouts = parse_fanout(fanout)
    per_record = parse_numbers(name, strings.tolist())
    distinct = strings.unique().tolist()
    arr = parse_numbers(name, distinct)
    order = np.argsort(arr, kind="stable")
    distinct = [distinct[i] for i in order]
    arr = arr[order]
    lo, hi = float(arr.min()), float(arr.max())
    cuts = np.unique(np.quantile(per_record, np.arange(1, bins) / bins, method="higher"))
    cuts = cuts[cuts > lo]
    bounds = np.r_[lo, cuts]  # interval i = [bounds[i], bounds[i+1]), the last up to hi, closed
    index = np.searchsorted(bounds, arr, side="right") - 1
    n = len(bounds)

    def label(first: int, last: int) -> str:  # intervals first..last merged
        return _closed_label(bounds[first], hi) if last == n - 1 else interval_label(bounds[first], bounds[last + 1])

    columns = [distinct]
    span = 1
    level = 0
    while True:
        groups = index // span
        if len(np.unique(groups)) <= 1:
            break
        columns.append([label(int(g) * span, min(int(g) * span + span - 1, n - 1)) for g in groups])
        span *= fanouts[min(level, len(fanouts) - 1)]
        level += 1
    notes = [f"{n} quantile interval(s) at level 1 (about {len(per_record) / n:.0f} records each)"]
    return _finish(name, columns, "quantiles", notes)


# ---- flat: every value straight to the root ---------------------------------------------------------------
def flat_defaults(values: pd.Series) -> dict:
    return {}


def build_flat(name: str, values: pd.Series) -> Hierarchy:
    """value -> '*': a categorical column without a natural order (the default hierarchy of such a
    column): generalizing it means hiding it."""
    distinct = _strings(name, values).unique().tolist()
    return _finish(name, [distinct], "flat")


# ---- registry ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class BuilderInfo:
    name: str
    label: str
    summary: str
    build: Callable[..., Hierarchy]
    parameters: tuple[Parameter, ...]
    defaults: Callable[[pd.Series], dict]  # data-derived defaults for the form
    needs: str = ""  # "numbers" or "dates": the values it can build from ("" any text)

    @property
    def limited(self) -> bool:
        """Takes ``max_intervals`` (the web app's and the CLI's cap on the intervals it lays)."""
        return self.build is build_intervals

    def refusal(self, name: str, values: pd.Series | Sequence[str]) -> str | None:
        """Why this builder cannot build from the column's values (naming the column, a value that does
        not fit and the builders that do), or None when it can."""
        if not self.needs:
            return None
        distinct = _strings(name, values).unique().tolist()
        misfit = _misfit(self.needs, distinct)
        if misfit is None:
            return None
        able = [b.label for b in BUILDERS.values() if not b.needs or _misfit(b.needs, distinct) is None]
        return (f"column {name!r}: value {misfit[1]!r} {misfit[0]}: the {self.label.lower()} builder cannot "
                f"use this column; builders that fit: {', '.join(able)}")

    def run(self, name: str, values: pd.Series, options: dict, max_intervals: int | None = None) -> Hierarchy:
        """Build from validated ``options``; a column the builder cannot use is refused first. The nodes
        are built from the present values; a column with missing cells gets the missing leaf too
        (hierarchy.with_missing: ``(null)`` up to the root)."""
        refused = self.refusal(name, values)
        if refused:
            raise HierarchyError(refused)
        if self.limited and max_intervals is not None:
            built = self.build(name, values, max_intervals=max_intervals, **options)
        else:
            built = self.build(name, values, **options)
        s = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
        return with_missing(built) if has_missing(s.dropna().astype(str)) else built

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise InputError(f"builder {self.name!r} has no option {name!r}; options: "
                         f"{', '.join(p.name for p in self.parameters)}")


def _misfit(needs: str, distinct: list[str]) -> tuple[str, str] | None:
    """(what is wrong, a value showing it) when the distinct values are not what ``needs`` asks for."""
    if needs == "numbers":
        nums = pd.to_numeric(pd.Series(distinct, dtype=object).str.strip(), errors="coerce")
        finite = np.isfinite(nums.to_numpy(dtype=float, na_value=np.nan))
        return None if finite.all() else ("is not a number", distinct[int(np.flatnonzero(~finite)[0])])
    probe = distinct[:1000]
    if any(_parse_all(probe, p)[1] < len(probe) for p in DATE_FORMATS.values()):
        return None  # some values are dates: a value that is not is named by the builder itself
    return "is not a date in a known format (no value of the column is)", distinct[0]


_ORDERS = ("alphabetical", "frequency", "numeric", "custom")
BUILDERS: dict[str, BuilderInfo] = {
    info.name: info
    for info in (
        BuilderInfo(
            "intervals", "Numeric intervals",
            "value -> [lo-hi) intervals of a width -> wider intervals (fanout per level) -> *",
            build_intervals,
            (
                Parameter("lower", float, None, "start of the first interval (default: the minimum, rounded down)"),
                Parameter("upper", float, None, "end of the intervals, excluded (default: past the maximum)"),
                Parameter("width", float, None, "width of the first level's intervals (default: a round "
                          "width giving about 10 intervals)", minimum=0),
                Parameter("fanout", str, "2", "intervals merged per level: one number, or one per level "
                          "separated by commas (e.g. 2,5)"),
                Parameter("outside", str, "nodes", "values outside [lower, upper): nodes '<lower' and "
                          "'>=upper', or refuse", choices=("nodes", "refuse")),
            ),
            interval_defaults,
            needs="numbers",
        ),
        BuilderInfo(
            "grouping", "Ordered grouping",
            "values in an order, grouped fanout at a time, then the groups grouped, up to *",
            build_grouping,
            (
                Parameter("order", str, "alphabetical", "order of the values", choices=_ORDERS),
                Parameter("custom_order", str, None, "for order=custom: every value, one per line "
                          "(or separated by commas)"),
                Parameter("fanout", str, "2", "values (then groups) per group: one number, or one per level "
                          "separated by commas"),
            ),
            grouping_defaults,
        ),
        BuilderInfo(
            "masking", "Masking",
            "one more character masked per level (67012 -> 6701* -> 670** ...) up to *",
            build_masking,
            (
                Parameter("from_right", bool, True, "mask from the right (from the left when off)"),
                Parameter("mask", str, "*", "the masking character"),
                Parameter("levels", int, None, "number of masked levels (default: the longest value's "
                          "length)", minimum=1),
            ),
            masking_defaults,
        ),
        BuilderInfo(
            "dates", "Dates",
            "day -> month -> year -> decade (levels of your choice) -> *, format detected",
            build_dates,
            (
                Parameter("levels", str, "day,month,year,decade", "levels, separated by commas, among "
                          + ", ".join(DATE_LEVELS)),
                Parameter("format", str, None, "date format (default: detected), e.g. dd/mm/yyyy or %d/%m/%Y"),
            ),
            dates_defaults,
            needs="dates",
        ),
        BuilderInfo(
            "data-driven", "Data-driven grouping for k",
            "merge the rarest values with their neighbours until every node holds at least k records; "
            "the others stay themselves",
            build_data_driven,
            (
                Parameter("k", int, 5, "smallest number of records per node", minimum=1),
                Parameter("order", str, None, "order in which neighbours are merged (default: numeric for "
                          "numbers, else alphabetical)", choices=("numeric", "alphabetical", "frequency")),
            ),
            data_driven_defaults,
        ),
        BuilderInfo(
            "quantiles", "Quantile intervals",
            "value -> intervals holding about equal numbers of records (for skewed numbers) -> wider "
            "intervals (fanout per level) -> *",
            build_quantiles,
            (
                Parameter("bins", int, 10, "number of intervals at level 1 (fewer when values repeat)",
                          minimum=2, maximum=1000),
                Parameter("fanout", str, "2", "intervals merged per level: one number, or one per level "
                          "separated by commas"),
            ),
            quantile_defaults,
            needs="numbers",
        ),
        BuilderInfo(
            "flat", "Value → *",
            "every value straight to * (a category without a natural order)",
            build_flat,
            (),
            flat_defaults,
        ),
    )
}

_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def validate_options(kind: str, options: dict) -> dict:
    """Options of a builder checked and converted; None or '' means 'derive from the data'.

    Raises InputError naming the option."""
    info = get_builder(kind)
    out: dict = {}
    for key, value in options.items():
        p = info.parameter(key)
        if value is None or (isinstance(value, str) and value.strip() == "" and p.default is None):
            continue
        if p.kind is bool:
            if isinstance(value, bool):
                out[key] = value
            elif str(value).strip().lower() in _TRUE + _FALSE:
                out[key] = str(value).strip().lower() in _TRUE
            else:
                raise InputError(f"{p.name} must be yes or no, got {value!r}")
        elif p.kind is str and p.choices is None:
            out[key] = value if isinstance(value, (list, tuple)) else str(value)
        else:
            out[key] = p.validate(value)
    return out


def get_builder(kind: str) -> BuilderInfo:
    try:
        return BUILDERS[kind]
    except KeyError:
        raise InputError(f"kind must be one of {', '.join(BUILDERS)}, got {kind!r}") from None


def build(kind: str, name: str, values: pd.Series, **options: object) -> Hierarchy:
    """Validate the options and run the builder ``kind``; ``max_intervals=N`` among them caps the intervals
    the intervals builder lays (the CLI passes the web app's setting)."""
    info = get_builder(kind)
    cap = options.pop("max_intervals", None)
    return info.run(name, values, validate_options(kind, options), None if cap is None else int(str(cap)))
