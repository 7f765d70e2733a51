"""The report of a run: one typed structure, built in one place from the result and its publication.

Every entry point (web job, CLI, lattice node, API) stores or shows this report; the figures of the
model cards are those of the classes the publishing gate checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, NamedTuple

import numpy as np
import pandas as pd

from ..algorithms.base import CellRecoding
from ..measure.metrics import RISK_THRESHOLD, attribute_figures, class_figures, homogeneity
from ..measure.risk import sample_risks
from ..model.cells import ColumnDictionary
from ..model.hierarchy import ROOT, Hierarchy
from ..model.table import Table
from ..privacy import parse_marker, research_column
from ..privacy.distributions import SensitiveDomain, domain_for
from ..setvalued.measures import frequent_itemsets
from ..setvalued.transactions import Transactions
from .coded import cells_of, first_rows, is_coded
from .gate import ITEMS, Publication
from .merged import counted_figures
from .person_report import person_section
from .report_model import ModelCheck, Report, ReportKeys, model_check
from .research import published_classes, research_domain, research_flags, verdicts
from .result import (
    LEVEL_KEY_BLOCK,
    class_size_histogram,
    encoded_input,
    factorize_cells,
    object_addresses,
    plain,
    report_head,
)
from .spec import SUPPRESSED_ROWS, RunSpec, TransactionSet
from .stages import cell_label, input_figures, level_labels, result_figures, weighted_attack
from .weighted import (
    AttackRows,
    ColumnFigures,
    CountedClasses,
    CountedLabels,
    PublishedClasses,
    ResultClasses,
    WeightedRows,
)

TOP_VALUES = 30


class Tally(NamedTuple):
    """A column's distinct texts and the rows of each (int64), in the order they first occur (what
    values.astype(str).value_counts() counts before it sorts), or in any order when no two counts are equal
    (any order then sorts the same); value_counts lists it as pandas sorts it."""

    texts: np.ndarray
    counts: np.ndarray


def value_counts(values: pd.Series, top: int = TOP_VALUES, dictionary: ColumnDictionary | None = None,
                 counts: pd.Series | Tally | None = None) -> dict:
    """The ``top`` most frequent values with their counts, and how many distinct values there are.
    ``dictionary``: the column's codes into its categories (Table.dictionaries), used when they describe it;
    ``counts``: values.astype(str).value_counts() (or its Tally) when the caller has it from codes
    (_coded_value_counts)."""
    if counts is None and dictionary is not None:
        counts = _dictionary_counts(values, dictionary)
    if counts is None:
        counts = _text_counts(pd.Series(values))
    return _listing(counts, len(values), top)


def _listing(counts: pd.Series | Tally, rows: int, top: int) -> dict:
    """value_counts' entry from a sorted count (a Series) or a Tally, sorted here as pandas sorts it."""
    if isinstance(counts, Tally):
        order = _descending(counts.counts)[:top]
        return {"values": [str(v) for v in counts.texts[order]], "counts": counts.counts[order].tolist(),
                "distinct": int(len(counts.counts)), "rows": int(rows)}
    return {"values": [str(v) for v in counts.index[:top]], "counts": [int(c) for c in counts.to_numpy()[:top]],
            "distinct": int(len(counts)), "rows": int(rows)}


def _descending(counts: np.ndarray) -> np.ndarray:
    """The positions of pd.Series(counts).sort_values(ascending=False) (int64 counts, none missing): pandas'
    nargsort, the same numpy sort on the same values, so ties come out in the very same order (its quicksort is
    not stable)."""
    m = len(counts)
    # nargsort: the values reversed, argsorted, the positions mapped back and the order reversed
    return (m - 1 - np.asarray(counts, dtype=np.int64)[::-1].argsort(kind="quicksort"))[::-1]


def counted_values(values: np.ndarray, counts: np.ndarray, rows: int, top: int = TOP_VALUES) -> dict:
    """value_counts over weighted frequency data: ``values`` in order of first appearance with their
    ``counts`` (pandas' value_counts orders the same: counts in first-appearance order, sorted descending by
    the same sort)."""
    present = counts > 0
    ordered = pd.Series(counts[present], index=pd.Index(values[present].astype(str), dtype=object))
    ordered = ordered.sort_values(ascending=False)
    return {"values": [str(v) for v in ordered.index[:top]], "counts": [int(c) for c in ordered.to_numpy()[:top]],
            "distinct": int(len(ordered)), "rows": int(rows)}


def ranked_values(values: np.ndarray, counts: np.ndarray, rows: int, top: int = TOP_VALUES) -> dict:
    """value_counts from exact counts whose ties keep the order of ``values`` (an out-of-core run's leaves in
    hierarchy order, its labels as first written): counts descending, then position."""
    present = np.flatnonzero(counts > 0)
    order = present[np.lexsort((present, -counts[present]))]
    return {"values": [str(values[i]) for i in order[:top]], "counts": [int(counts[i]) for i in order[:top]],
            "distinct": int(len(present)), "rows": int(rows)}


def _text_counts(values: pd.Series) -> pd.Series | Tally:
    """values.astype(str).value_counts() (as a Tally, unsorted), from one hashing of the cells
    (result.factorize_cells: by object, then by value) and a count per distinct value: the distinct texts in
    first-seen order, as value_counts counts them before it sorts. A missing cell, or two distinct values with
    one text (1 and '1'), takes pandas' own path."""
    codes, distinct = factorize_cells(values.to_numpy(dtype=object))
    texts = [str(v) for v in distinct]
    if (codes < 0).any() or len(set(texts)) != len(texts):
        return values.astype(str).value_counts()
    return Tally(np.asarray(texts, dtype=object).reshape(-1),
                 np.bincount(codes, minlength=len(texts)).astype(np.int64))


def _dictionary_counts(values: pd.Series, dictionary: ColumnDictionary) -> Tally | None:
    """_text_counts(values) from the column's dictionary codes, when they describe its cells (each cell the str
    object its code names): the rows per category are known, the categories put in the order they first occur
    (the rows read up to where the last one first occurs, no hashing of the cells). None otherwise."""
    cells = values.to_numpy(dtype=object) if values.dtype == object else None
    if cells is None or not dictionary.describes(cells):
        return None
    counts = dictionary.counts
    return _ordered_counts(dictionary.categories, counts,
                           lambda: first_rows(dictionary.codes, len(dictionary.categories), counts))


class _Lazy:
    """A value computed on its first call and kept."""

    def __init__(self, make: Callable[[], np.ndarray]) -> None:
        self._make: Callable[[], np.ndarray] | None = make
        self._value: np.ndarray | None = None

    def __call__(self) -> np.ndarray:
        if self._make is not None:
            self._value, self._make = self._make(), None
        assert self._value is not None
        return self._value


def _ordered_counts(categories: np.ndarray, counts: np.ndarray,
                    first: np.ndarray | Callable[[], np.ndarray]) -> Tally | None:
    """values.astype(str).value_counts()'s Tally of a column whose cells are str objects equal to the categories
    their codes name, from the rows per category (``counts``) and each one's first row (or a function giving
    them, called only when needed): the texts in the order they first occur (categories of one text merged),
    as pandas' value_counts counts them - or in category order when no two counts are equal, as then any order
    sorts the same. None when a category some row holds is not a str (its cells' texts could differ: 1 and
    1.0)."""
    present = np.flatnonzero(counts > 0)
    rows = np.asarray(counts[present], dtype=np.int64)
    texts = categories[present]
    listed = texts.tolist()
    if not all(type(v) is str for v in listed):
        return None
    distinct_texts = len(set(listed)) == len(listed)
    if distinct_texts and len(set(rows.tolist())) == len(rows):  # no tie: the sort alone gives the order
        return Tally(np.asarray(texts, dtype=object), rows)
    firsts = first() if callable(first) else first
    in_order = np.argsort(firsts[present], kind="stable")
    texts, rows = texts[in_order], rows[in_order]
    if not distinct_texts:  # one text twice (a label '*' and the suppressed rows' '*')
        merged: dict[str, int] = {}
        for text, count in zip(texts.tolist(), rows.tolist()):
            merged[text] = merged.get(text, 0) + count  # kept where the text first occurs
        texts, rows = np.asarray(list(merged), dtype=object), np.fromiter(merged.values(), np.int64, len(merged))
    return Tally(np.asarray(texts, dtype=object), rows)


def _coded_value_counts(publication: Publication, table: Table, hierarchies: dict) -> dict[str, dict[str, Tally]]:
    """QI -> {"before": counts, "after": counts} (as _text_counts counts the input's and the published column)
    from the leaf codes the run encoded the input with (Result.leaf_codes), where they stand for the cells: the
    input column, when the leaves its rows hold are str (a cell equal to a str leaf is that text); the published
    column of a full-domain recoding, when every published cell is the very object (compared by address) of the
    label its row's leaf has at the QI's level, or ROOT on a suppressed row. The other columns are left out
    (value_counts then hashes their cells). ``leaf_counts``: filled with each QI's rows per leaf."""
    return _coded_counts(publication, table, hierarchies)[0]


def _coded_counts(publication: Publication, table: Table,
                  hierarchies: dict) -> tuple[dict[str, dict[str, Tally]], dict[str, np.ndarray]]:
    """_coded_value_counts, and each QI's rows per leaf (np.bincount of its leaf codes) for the loss figures."""
    result = publication.result
    assert result is not None
    codes = encoded_input(table, hierarchies, result.leaf_codes)
    if codes is None:
        return {}, {}
    n = len(codes)
    rows, suppressed = publication.rows, np.asarray(publication.suppressed, dtype=bool)
    # the published rows are the input's, in order, none of them a '*' row (asked once: a pass over the rows)
    any_suppressed = bool(suppressed.any())
    every_row = len(rows) == n and not any_suppressed and np.array_equal(rows, np.arange(n))
    out: dict[str, dict[str, Tally]] = {}
    per_leaf: dict[str, np.ndarray] = {}
    for j, col in enumerate(table.qi):
        h = hierarchies[col]
        leaf_codes = codes[:, j]
        leaf_counts = per_leaf[col] = np.bincount(leaf_codes, minlength=len(h.leaves))
        leaf_first = _Lazy(partial(first_rows, leaf_codes, len(h.leaves), leaf_counts))
        found = {}
        before = _ordered_counts(h.leaves, leaf_counts, leaf_first)
        if before is not None:
            found["before"] = before
        level = (result.transformation or {}).get(col) if result.recoding == "full-domain" else None
        if level is not None and col in publication.coded_table.columns:
            after = _published_counts(publication, col, h, int(level), leaf_codes, leaf_counts, leaf_first,
                                      every_row, any_suppressed)
            if after is not None:
                found["after"] = after
        out[col] = found
    return out, per_leaf


def _published_counts(publication: Publication, col: str, h: Hierarchy, level: int, leaf_codes: np.ndarray,
                      leaf_counts: np.ndarray, leaf_first: Callable[[], np.ndarray], every_row: bool,
                      any_suppressed: bool) -> Tally | None:
    """_coded_value_counts' published column, or None when its cells are not the labels of the rows' leaves.
    ``every_row``: the published rows are the input's, in order, none of them a '*' row; ``any_suppressed``:
    some published row is a '*' row."""
    values = publication.coded_table[col]
    if values.dtype != object and not is_coded(values):
        return None
    label_of = np.asarray(h.maps[level])
    categories = np.append(np.asarray(h.labels[level], dtype=object), np.array([ROOT], dtype=object))
    # a code per row in the narrowest integer (one byte for most levels): the row comparison below reads less
    width = np.int8 if len(categories) < 2**7 else np.int16 if len(categories) < 2**15 else np.int32
    taken = (publication.row_labels or {}).get(col)
    if taken is not None and taken[0] is h and taken[1] == level and len(taken[2]) == len(leaf_codes):
        # the label code of each row's leaf as the gate took it (labels[level] numbered alike)
        label_codes = taken[2] if every_row else taken[2][publication.rows]
    else:
        leaves = leaf_codes if every_row else leaf_codes[publication.rows]
        # mode="wrap": no bounds pass (leaf codes are the hierarchy's: encode checked them)
        label_codes = np.take(label_of.astype(width), leaves, mode="wrap")
    if any_suppressed:  # a copy (never the gate's), wide enough for the appended ROOT's code
        label_codes = label_codes.astype(np.promote_types(label_codes.dtype, width))
        label_codes[np.asarray(publication.suppressed, dtype=bool)] = len(categories) - 1
    if not _shows_codes(values, label_codes, categories):
        return None
    if every_row:  # the labels' rows and first rows from their leaves' (no pass over the rows)
        counts = np.bincount(label_of, weights=leaf_counts, minlength=len(categories)).astype(np.int64)

        def first() -> np.ndarray:
            rows = np.full(len(categories), len(leaf_codes), dtype=np.int64)
            np.minimum.at(rows, label_of, leaf_first())
            return rows
    else:
        counts = np.bincount(label_codes, minlength=len(categories))

        def first() -> np.ndarray:
            return first_rows(label_codes, len(categories), counts)
    return _ordered_counts(categories, counts, first)


def _shows_codes(values: pd.Series, label_codes: np.ndarray, categories: np.ndarray) -> bool:
    """Is every cell of ``values`` the very object categories[label_codes[row]]? A coded column (coded.py) is
    compared through its categories' addresses, without its cells as objects: its codes with ``label_codes``
    directly when its categories are those objects in that order (as the output builder makes them)."""
    if not is_coded(values):
        return ColumnDictionary(label_codes, categories).describes(cells_of(values))
    column = values.array
    shown = object_addresses(np.asarray(column.categories, dtype=object))
    wanted = object_addresses(np.asarray(categories, dtype=object))
    codes = column.codes
    if shown is None or wanted is None or len(codes) != len(label_codes):
        return False
    both = min(len(shown), len(wanted))
    if np.array_equal(shown[:both], wanted[:both]):
        # the column's categories are the wanted ones in their order: a code equal to the label code names the
        # very object wanted (a missing cell's -1 equals no label code)
        if _same_codes(codes, label_codes):
            return True
        listed = wanted.tolist()
        if (len(set(listed)) == len(listed) and len(set(shown.tolist())) == len(shown)
                and set(shown[both:].tolist()).isdisjoint(listed)):
            return False  # no object is two categories: other codes, other objects
    # each object as one number: the first of the wanted categories that is that object (-1: none is)
    first_of: dict[int, int] = {}
    for i, a in enumerate(wanted.tolist()):
        first_of.setdefault(a, i)
    wanted_as = np.array([first_of[a] for a in wanted.tolist()], dtype=np.int64)
    shown_as = np.array([first_of.get(a, -1) for a in shown.tolist()], dtype=np.int64)
    if len(codes) and int(codes.min()) < 0:  # a missing cell: no category's object
        return False
    for start in range(0, len(codes), LEVEL_KEY_BLOCK):
        rows = slice(start, start + LEVEL_KEY_BLOCK)
        if not np.array_equal(np.take(shown_as, codes[rows]), np.take(wanted_as, label_codes[rows])):
            return False
    return True


def _same_codes(a: np.ndarray, b: np.ndarray) -> bool:
    """np.array_equal of two code arrays, a block of rows at a time in one integer type (no temporary of the
    column's length in a wider one)."""
    if a.dtype != b.dtype:
        wide = np.promote_types(a.dtype, b.dtype)
        for start in range(0, len(a), LEVEL_KEY_BLOCK):
            rows = slice(start, start + LEVEL_KEY_BLOCK)
            if not np.array_equal(a[rows].astype(wide), b[rows].astype(wide)):
                return False
        return True
    return bool(np.array_equal(a, b))


def model_checks(table: Table, models: list, hierarchies: dict, sizes: np.ndarray,
                 row_class: np.ndarray) -> list[ModelCheck]:
    """Per privacy model: whether it holds on the classes (row -> class, -1 not released) and its figure."""
    return checks_on_classes(models, sizes, row_class,
                             lambda m: domain_for(m, table.frame, hierarchies, table.is_numeric(m.column)))


def checks_on_classes(models: list, sizes: np.ndarray, row_class: np.ndarray,
                      domain_of: Callable[[Any], Any], flags: np.ndarray | None = None,
                      research_domain_of: Callable[[Any], Any] | None = None) -> list[ModelCheck]:
    """model_checks with the sensitive domain of each model given by ``domain_of(model)`` (rows aligned with
    ``row_class``): a table's rows here, the cluster's weighted merged classes in distributed.backend. With a
    research subset (``flags``), each model on the classes it counts (research.verdicts)."""
    return [model_check(v) for v in verdicts(models, sizes, row_class, domain_of, flags, research_domain_of)]


def build_report(publication: Publication, spec: RunSpec, table: Table, hierarchies: dict,
                 set_column: dict | None = None, identifiers: list[dict] | None = None,
                 sdc: dict | None = None) -> Report:
    """The report of a published result, built once: ``set_column`` the k^m report of the spec's set-valued
    column (gate.publish_set_column), ``identifiers`` the identifying columns' entries (gate.publish_identifiers),
    ``spec.population`` the population dataset's name (its research section)."""
    result = publication.result
    assert result is not None
    sizes = publication.class_sizes if publication.class_sizes is not None else np.zeros(0, np.int64)
    row_class = publication.class_of_row if publication.class_of_row is not None else np.full(table.n, -1)
    suppressed = int(np.asarray(result.suppressed, dtype=bool).sum())
    in_scope = _in_scope(publication, table)
    before = table.frame if in_scope == table.n else table.frame.iloc[_scope_rows(publication, table)]
    # the value counts from the run's codes where they stand for the cells (else each column's cells hashed)
    coded, per_leaf = _coded_counts(publication, table, hierarchies) if before is table.frame else ({}, {})
    publication.row_labels = None  # read (a byte or more per row and QI): not held with the publication
    flags = research_flags(table.frame, result.models) if result.recoding not in ("anatomy", "m-invariance") \
        else None
    head = result.report()
    if flags is not None:  # the figures of the classes published: research records (definitions.md)
        sizes_shown, _ = published_classes(sizes, row_class, flags)
        research_suppressed = int((np.asarray(result.suppressed, dtype=bool) & flags).sum())
        figures = class_figures(sizes_shown, int(flags.sum()), research_suppressed, result.k)
        smallest = int(sizes_shown.min()) if len(sizes_shown) else 0
        head.update(k_achieved=smallest, min_class_size=smallest, equivalence_classes=int(len(sizes_shown)),
                    class_size_histogram=class_size_histogram(sizes_shown),
                    metrics=plain({**head["metrics"], **figures}), suppressed=research_suppressed)
    report = publication_sections(
        head, spec.publishing.suppressed_rows, result.models, sizes, row_class,
        lambda m: domain_for(m, table.frame, hierarchies, table.is_numeric(m.column)),
        flags=flags,
        research_domain_of=None if flags is None else (
            lambda m: research_domain(lambda f: domain_for(m, f, hierarchies, table.is_numeric(m.column)),
                                      table.frame, flags)),
        # Anatomy's classes are groups, not QI classes: no risk figures from them
        risk=result.recoding != "anatomy", input_records=table.n, published=len(publication.coded_table),
        suppressed=suppressed if flags is None else head["suppressed"],
        suppressed_published=int(publication.suppressed.sum()),
        suppressed_removed=in_scope - len(publication.coded_table),
        value_counts={qi: {"before": value_counts(before[qi], dictionary=table.dictionaries.get(qi)
                                                  if before is table.frame else None,
                                                  counts=coded.get(qi, {}).get("before")),
                           "after": value_counts(publication.coded_table[qi],
                                                 counts=coded.get(qi, {}).get("after"))}
                      for qi in result.qi if qi in publication.coded_table.columns})
    if result.transformation is not None and result.leaf_codes is not None and result.recoding == "full-domain":
        # per QI: level, ARX's Loss, NCP, height, shares published as '*' and suppressed (issue 30)
        report["attributes"] = attribute_figures(
            list(result.qi), list(result.leaf_codes.hierarchies), [table.is_numeric(c) for c in result.qi],
            result.leaf_codes.codes, [int(result.transformation[c]) for c in result.qi],
            np.asarray(result.suppressed, dtype=bool),
            # the rows per leaf the value counts took (of these very codes, in this QI order), not counted again
            leaf_counts=[per_leaf[c] for c in result.qi] if per_leaf and list(per_leaf) == list(result.qi) else None)
    marker = research_column(result.models)
    if marker is not None:
        research = int(in_scope)
        report["research_subset"] = {"column": marker, "population_records": int(table.n),
                                     "research_records": research, "written": int(len(publication.coded_table)),
                                     "suppressed": int(research - len(publication.coded_table)),
                                     "population_suppressed": suppressed}
        if spec.population is not None:
            report["research_subset"]["population"] = spec.population
    if result.recoding == "anatomy":
        report.update(_anatomy_figures(publication, table, result))
        for check in report["model_checks"]:
            if check["model"] == "k-anonymity":  # Anatomy's k sizes its groups; the QIT is not k-anonymous
                check["describe"] = (f"groups of at least {result.k} records (the QIT alone is not "
                                     f"{result.k}-anonymous)")
                check["value_label"] = "smallest group"
    if set_column is not None:
        report["set_column"] = set_column
    if sdc is not None:  # the SDC steps after the recoding and the gate's recount of their guarantees (run/sdc.py)
        report["sdc"] = sdc
    if identifiers is not None:
        report["identifiers"] = identifiers
        published = {e["column"] for e in identifiers if e["treatment"] != "remove"}
        report["identifying_removed"] = [c for c in report.get("identifying_removed", []) if c not in published]
    if spec.population is not None and marker is None:
        report["research_subset"] = {"population": spec.population}
    if table.person is not None:  # the published classes counted in persons too (definitions.md)
        report["persons"] = person_section(
            result.persons, table, result.models, sizes, row_class,
            lambda m: domain_for(m, table.frame, hierarchies, table.is_numeric(m.column)), result.suppression_limit)
    return Report.of(report)


def publication_sections(head: dict, suppressed_rows: str, models: list, sizes: np.ndarray, row_class: np.ndarray,
                         domain_of: Callable[[Any], Any], *, risk: bool, input_records: int, published: int,
                         suppressed: int, suppressed_published: int, suppressed_removed: int,
                         value_counts: dict, flags: np.ndarray | None = None,
                         research_domain_of: Callable[[Any], Any] | None = None) -> dict:
    """The sections every report of a published table adds to the result's own keys (``head``, as
    Result.report() writes them): the model checks and risk figures on the classes the gate checked
    (row -> class, -1 not released), the publishing figures, the value counts before and after. One
    function for the single-process report (build_report) and the cluster's (distributed.backend)."""
    report = dict(head)
    report["model_checks"] = checks_on_classes(list(models), sizes, row_class, domain_of, flags, research_domain_of)
    shown = sizes if flags is None else published_classes(sizes, row_class, flags)[0]
    if risk and len(shown):
        # the published classes' risk figures and bands, as engine.measure.risk computes them for every table
        report["risk"] = sample_risks(shown, RISK_THRESHOLD)
    report["records"] = int(published)
    report["input_records"] = int(input_records)
    report["publishing"] = publishing_section(suppressed_rows, SUPPRESSED_ROWS[suppressed_rows], suppressed,
                                              suppressed_published, suppressed_removed, published)
    report["value_counts"] = value_counts
    return report


def publishing_section(suppressed_rows: str, description: str, suppressed: int, suppressed_published: int,
                       suppressed_removed: int, published: int) -> dict:
    """The report's "publishing" section, the same keys for every kind of run: what the published table does with
    suppressed records, and the records suppressed, published as '*' rows, removed and published."""
    return {"suppressed_rows": suppressed_rows, "description": description, "suppressed": int(suppressed),
            "suppressed_published": int(suppressed_published), "suppressed_removed": int(suppressed_removed),
            "published_records": int(published)}


@dataclass(frozen=True)
class RunSettings:
    """The run as its report states it."""

    algorithm: str
    models: list
    suppression_limit: float
    options: dict
    suppressed_rows: str  # what the published table does with suppressed records (spec.SUPPRESSED_ROWS)
    seconds: float


@dataclass(frozen=True)
class QIColumns:
    """The columns as the report names them."""

    qi: list[str]
    sensitive: str | None
    identifying: list[str]  # removed from the output
    hierarchies: list[Hierarchy]  # in QI order
    numeric: list[bool]  # per QI


@dataclass(frozen=True)
class WeightedFigures:
    """What the report of a run over weighted rows (a cluster run's merged frequency data: each row a distinct
    combination standing for ``weights[i]`` records) is built from, one bundle per concern: the run, its
    columns, the input's value counts, the weighted rows, the result's classes on them, the rows the attack
    report lists and the classes the gate checked on the published table."""

    run: RunSettings
    columns: QIColumns
    scanned: ColumnFigures  # the input's records and each QI's values with counts
    rows: WeightedRows
    result: ResultClasses
    attack: AttackRows
    published: PublishedClasses


def weighted_report(f: WeightedFigures) -> Report:
    """report.build_report's figures over weighted rows, by the run core's measuring functions
    (stages.result_figures, input_figures, weighted_attack) and its report sections (result.report_head,
    publication_sections: the one code for every backend)."""
    run, cols, rows, res, pub = f.run, f.columns, f.rows, f.result, f.published
    rec = res.recoding
    cells = isinstance(rec, CellRecoding)
    levels = [] if isinstance(rec, CellRecoding) else list(rec.levels)
    k = max((getattr(m, "k", 1) for m in run.models), default=1)
    records = f.scanned.records
    n_sup = res.suppressed_records(rows.weights)
    s = None if cols.sensitive is None else rows.domains[cols.sensitive].codes
    metrics = result_figures(
        cols.hierarchies, cols.numeric, rows.qi_codes, rows.weights, res.suppressed, res.row_class, res.sizes,
        records, k, levels=None if cells else levels, sensitive=s,
        cells=[(res.cells[0][:, j], res.cells[1][j]) for j in range(len(cols.qi))] if res.cells is not None else None)
    before = input_figures(rows.freq, cols.hierarchies, records, k, None if s is None else (
        lambda inv, sizes, own: homogeneity(inv[rows.freq.inverse], s, rows.weights)))
    head = report_head(
        algorithm=run.algorithm, models=run.models, suppression_limit=run.suppression_limit, qi=cols.qi,
        sensitive=cols.sensitive, class_sizes=res.sizes, suppressed=n_sup, records=int(pub.records),
        recoding=rec.recoding if isinstance(rec, CellRecoding) else "full-domain",
        transformation=None if cells else dict(zip(cols.qi, levels)), metrics=metrics, metrics_before=before,
        options=run.options, search=dict(rec.info), steps=rec.steps,
        notes=list(rec.notes) + [note for h in cols.hierarchies for note in h.notes],
        transformation_labels=_weighted_labels(f, levels), identifying_removed=cols.identifying, verified=True,
        seconds=run.seconds,
        attack=weighted_attack(dict[str, SensitiveDomain](rows.domains), res.row_class, rows.weights, f.attack.rows, f.attack.limit))
    report = publication_sections(
        head, run.suppressed_rows, run.models, pub.sizes, pub.row_class,
        lambda m: rows.domain_over(m.target, pub.codes, pub.weights), risk=True,
        input_records=records, published=pub.records, suppressed=n_sup,
        suppressed_published=pub.suppressed, suppressed_removed=records - pub.records,
        value_counts={c: {"before": counted_values(*f.scanned.values[c], records),
                          "after": counted_values(*pub.values[c], pub.records)} for c in cols.qi})
    if not cells:  # per QI of a full-domain transformation, as build_report gives them (over the weighted rows)
        report["attributes"] = attribute_figures(cols.qi, cols.hierarchies, cols.numeric, rows.qi_codes, levels,
                                                 res.suppressed, weights=rows.weights)
    return Report.of(report)


@dataclass(frozen=True)
class CountedFigures:
    """What the report of an out-of-core run is built from (its weighted data are chunk summaries): the run, its
    columns, the records, the attacked columns (the homogeneity column first), the input's and the output's
    classes counted partition by partition, the output's labels counted chunk by chunk, the search's figures and
    the backend's notes. A cell recoding that suppresses nothing: every record is published."""

    run: RunSettings
    columns: QIColumns
    records: int
    attacked: list[str]
    before: CountedClasses
    after: CountedClasses
    labels: CountedLabels
    search: dict
    notes: list[str]  # the backend's own (how it processed the table), before the hierarchies'


def counted_report(f: CountedFigures) -> Report:
    """report.build_report's figures over chunk summaries, by the run core's measuring function
    (merged.counted_figures) and its report sections (result.report_head, publication_sections)."""
    run, cols, n = f.run, f.columns, f.records
    k = max((getattr(m, "k", 1) for m in run.models), default=1)
    metrics, before, attack = counted_figures(cols.hierarchies, cols.numeric, k, n, f.before, f.after, f.labels,
                                              f.attacked, cols.sensitive)
    class_sizes = f.after.class_sizes()
    head = report_head(
        algorithm=run.algorithm, models=run.models, suppression_limit=run.suppression_limit, qi=cols.qi,
        sensitive=cols.sensitive, class_sizes=class_sizes, suppressed=0, records=n, recoding="local",
        transformation=None, metrics=metrics, metrics_before=before, options=run.options, search=f.search, steps=[],
        notes=list(f.notes) + [note for h in cols.hierarchies for note in h.notes],
        transformation_labels={c: cell_label("local", len(f.labels.labels[j])) for j, c in enumerate(cols.qi)},
        identifying_removed=cols.identifying, verified=True, seconds=run.seconds, attack=attack)
    # the model checks on the class sizes alone: k-anonymity reads no sensitive domain
    sections = publication_sections(
        head, run.suppressed_rows, run.models, class_sizes, np.zeros(0, dtype=np.int64), lambda m: None, risk=True,
        input_records=n, published=n, suppressed=0, suppressed_published=0, suppressed_removed=0,
        value_counts={c: {"before": ranked_values(h.leaves, f.labels.leaf_counts[j], n),
                          "after": ranked_values(f.labels.labels[j], f.labels.label_counts[j], n)}
                      for j, (c, h) in enumerate(zip(cols.qi, cols.hierarchies))})
    return Report.of(sections)


def _weighted_labels(f: WeightedFigures, levels: list[int]) -> dict[str, str]:
    """Each QI's transformation label: its level's description, or a cell recoding's distinct outputs."""
    rec, qi = f.result.recoding, f.columns.qi
    if isinstance(rec, CellRecoding):
        assert f.result.cells is not None
        kept = ~f.result.suppressed
        return {c: cell_label(rec.recoding, len(np.unique(f.result.cells[0][kept, j]))) for j, c in enumerate(qi)}
    return level_labels(qi, f.columns.hierarchies, levels)


def _scope_rows(publication: Publication, table: Table) -> np.ndarray:
    """The input rows the publication speaks for: the research subset with a population table, else all."""
    result = publication.result
    marker = research_column(result.models) if result else None
    if marker is None:
        return np.arange(table.n)
    return np.flatnonzero(parse_marker(table.frame[marker], marker))


def _in_scope(publication: Publication, table: Table) -> int:
    return int(len(_scope_rows(publication, table)))


def _anatomy_figures(publication: Publication, table: Table, result) -> dict:
    """Anatomy's QIT publishes raw QIs: re-identification risk is computed on the QIT's QI classes (as
    definitions.md defines it), the group-based figure (an attacker's belief in a sensitive value) beside it."""
    qit = publication.table
    n_pub = len(qit)
    if n_pub and table.qi:
        codes = np.stack([pd.factorize(qit[c].to_numpy(dtype=object))[0] for c in table.qi], axis=1)
        _, counts = np.unique(codes, axis=0, return_counts=True)
    else:
        counts = np.zeros(0, dtype=np.int64)
    k = result.k
    qi_figures = class_figures(counts.astype(np.int64), table.n, table.n - n_pub, k)
    groups = publication.class_sizes if publication.class_sizes is not None else np.zeros(0, np.int64)
    l_reached = int(result.search.get("l", 0)) or (int(groups.min()) if len(groups) else 0)
    metrics = dict(result.report()["metrics"])
    # the QIT's own classes decide re-identification; the groups decide attribute disclosure
    for key in ("prosecutor_risk_highest", "prosecutor_risk_average", "records_at_risk", "marketer_risk",
                "sample_uniques", "equivalence_classes", "min_class_size", "c_avg"):
        if key in qi_figures:
            metrics[key] = qi_figures[key]
    metrics["groups"] = int(len(groups))
    metrics["smallest_group"] = int(groups.min()) if len(groups) else 0
    metrics["attribute_disclosure_highest"] = (1.0 / l_reached) if l_reached else None
    smallest_qi = int(counts.min()) if len(counts) else 0
    return {
        "metrics": plain(metrics),
        "k_achieved": smallest_qi,
        "min_class_size": smallest_qi,
        "equivalence_classes": int(len(counts)),
        "guarantee": (f"Anatomy: {len(groups):,} groups of at least {int(groups.min()) if len(groups) else 0} "
                      f"records with {l_reached} or more distinct sensitive values each link the QIT to the ST, "
                      f"so an attacker's belief in a record's sensitive value is at most 1/{l_reached}. The QIT "
                      f"publishes the quasi-identifiers unchanged and alone is not {k}-anonymous: "
                      f"{int((counts == 1).sum()):,} of its records are unique on the quasi-identifiers "
                      f"(highest re-identification risk {qi_figures['prosecutor_risk_highest']:.0%})."),
    }


def build_set_report(publication: Publication, spec: RunSpec, engine_report: dict) -> Report:
    """The report of a published transaction dataset: the set-valued engine's figures (rules, NCP,
    itemset-support error, repeated items), the k^m figure as the gate recounted it from the published
    records, and the publishing keys every report has."""
    source = spec.table
    assert isinstance(source, TransactionSet)
    km = publication.km
    assert km is not None
    report: dict = dict(engine_report)
    published = publication.published_records
    if not isinstance(published, Transactions):
        published = Transactions.from_records([[x for x in str(cell).split(source.delimiter) if x]
                                               for cell in publication.table[ITEMS]])
    size = min(source.m, 2)
    report["frequent_itemsets"] = {"size": size, "before": frequent_itemsets(source.transactions, size),
                                   "after": frequent_itemsets(published, size)}
    report["metrics"] = dict(report["metrics"], km_smallest_support=km["smallest_support"],
                             km_weakest_itemset=km["weakest_itemset"])
    n = int(len(publication.table))
    report.update({
        "k_achieved": km["smallest_support"] if km["smallest_support"] is not None else n,
        "records": n,
        "input_records": int(source.transactions.n),
        "suppressed": 0,
        "layout": {"kind": "transactions", "item_delimiter": source.delimiter, "record_id": source.has_ids,
                   "name": source.name},
        "item_suppression": source.item_suppression,
        "publishing": publishing_section(spec.publishing.suppressed_rows, "every record is published; items are "
                                         "generalized or suppressed, never records", 0, 0, 0, n),
        "verified": True,
    })
    return Report.of(report)


__all__ = ["CountedFigures", "ModelCheck", "Report", "ReportKeys", "TOP_VALUES", "build_report", "build_set_report",
           "checks_on_classes", "counted_report",
           "model_checks", "publication_sections", "value_counts"]
