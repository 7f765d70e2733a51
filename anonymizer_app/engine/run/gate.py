"""The publishing gate: the one place that decides which rows leave the product, and checks them.

Whatever leaves (a stored result, a CSV or Parquet file, a lattice node's table, a download, an API
response) comes out of :func:`publish`. It selects the rows by one rule and rechecks the full run
specification on exactly those rows, independently of the algorithm:

- suppressed records are removed (default) or, when the run asks to keep them, published as rows
  with ``*`` in every QI, and then only when the suppressed records taken together satisfy every
  model of the run (definitions.md): a small all-``*`` group would disclose its sensitive values;
- a population table (δ-presence, k-map against a population table): the published table holds the
  research subset only, without its marker column (the marker is read by the one parser of marker
  values, ``privacy.parse_marker``); each model counts the published record (engine/run/research.py,
  definitions.md "The unit counted"): δ-presence the classes of the generalized population, k-map the
  population records of each class holding a research record, every other model the published classes
  (their research records);
- every model of the run on every published class (identical published QI tuples; a kept group of
  suppressed records is such a class); every cell a valid generalization of its input; columns
  that are not QIs unchanged; identifying columns absent;
- the algorithm's own guarantee (``AlgorithmInfo.check_published``, e.g. MHA's Jensen-Shannon
  bound) on the published classes;
- Anatomy: the QIT shows no sensitive column, the ST's counts are the input's, every model holds on
  the groups (its guarantee: l-diverse groups linking QIT and ST).
- m-invariance (a release of a sequence): against the history the caller gives (RunSpec.republication), with
  the record ids keyed from the input again: every group m-unique counterfeits included, its counterfeit
  count its number of counterfeit rows, every real row its own value and a generalization of its QIs, every
  returning record in a group with exactly its earlier signature (engine/republication/check.py).

A result that fails raises :class:`~.errors.VerificationError` (or :class:`~.errors.InputError` when
the request itself cannot be honoured, e.g. keeping a suppressed group that breaks a model); nothing
is returned, so nothing can be stored or written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ..algorithms import get_algorithm
from ..algorithms.base import PublishedClasses
from ..algorithms.m_invariance import cell_checker, republication_keys
from ..errors import InputError, VerificationError
from ..model.hierarchy import ROOT, Hierarchy
from ..model.table import Role, Table, group_keys, group_rows
from ..privacy import MInvariance, PrivacyModel, parse_marker, research_column, research_models
from ..privacy.differential_privacy import EDDifferentialPrivacy
from ..republication.check import GROUP, check_release
from ..safepub import publication as safepub_publication
from ..setvalued import itemsets
from ..setvalued.mixed import anonymize_set_column
from ..setvalued.transactions import Transactions
from . import identifiers as id_rules
from .coded import cells_of, first_rows, frame_of, is_coded, plain_frame, rows_of, shared_frame
from .report_model import Report
from .research import research_flags, verdicts
from .result import (
    LEVEL_KEY_BLOCK,
    Result,
    check_cells,
    check_models,
    dense_span,
    encoded_input,
    factorize_cells,
    level_key,
    object_addresses,
    raise_failures,
    take_in_place,
    unchanged,
    verify_anatomy,
)
from .spec import KEEP, RunSpec, TransactionSet


@dataclass
class Publication:
    """The rows that leave the product, and the report that goes with them."""

    # the published rows (input order), exactly the columns that leave; read as object cells (_table below): the
    # run core reads ``coded_table``, where a full-domain run's QIs are Categoricals of their level's labels
    table: pd.DataFrame
    suppressed: np.ndarray  # per published row: a kept suppressed record ('*' in every QI)
    rows: np.ndarray  # input row of each published row
    # the run's report, built once by the report builders (engine/run/report.py) and never changed after
    built_report: Report | None = None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)  # further tables (Anatomy's ST)
    result: Result | None = None  # the engine's result the publication was made from
    # classes the gate checked the models on: row -> class over the released rows (-1 not released)
    class_of_row: np.ndarray | None = None
    class_sizes: np.ndarray | None = None
    # a transaction dataset: the published records as the gate recounted them (setvalued.Transactions)
    published_records: object | None = None
    # m-invariance: the history extended by this release, as the gate derived it from the published rows
    history: object | None = None
    # identifier columns published as pseudonyms or surrogates: {column: {input value: token}}, the
    # re-identification table; never part of the report or of any export (engine/run/identifiers.py)
    reidentification: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)
    # a transaction dataset: the k^m recount of the published records (the set report's figure)
    km: dict | None = None
    # a full-domain run: per QI (hierarchy, level, label code of every input row's leaf at that level), the codes
    # the gate compared the published cells with; the report's value counts read them, then drop them
    row_labels: dict[str, tuple[Hierarchy, int, np.ndarray]] | None = field(default=None, repr=False, compare=False)

    # the JSON of built_report, taken once on first reading (Publication.report)
    _report_json: dict | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def coded_table(self) -> pd.DataFrame:
        """The published rows as the run holds them (a full-domain run's QIs as codes, coded.py), not converted."""
        return self.__dict__["table"]

    @property
    def report(self) -> dict:
        """The report as JSON for the callers (Report.to_dict(), taken once: a copy, so whatever a caller does
        with it leaves the built report as it was); empty before it is built."""
        if self.built_report is None:
            return {}
        if self._report_json is None:
            self._report_json = self.built_report.to_dict()
        return self._report_json


def _table(self: Publication) -> pd.DataFrame:
    """Publication.table: the published rows with every QI as object cells (coded.plain_frame), the cells a
    text output always had; converted once, on the first reading, and kept instead of the codes (so a caller
    changing a column changes the publication, as before)."""
    frame = self.__dict__["table"] = plain_frame(self.__dict__["table"],
                                                 self.result.qi if self.result is not None else ())
    return frame


def _set_table(self: Publication, frame: pd.DataFrame) -> None:
    self.__dict__["table"] = frame


# a property over the dataclass field, which stays in the instance's __dict__ under its name: __init__ and
# dataclasses.replace set it through _set_table
Publication.table = property(_table, _set_table)  # type: ignore[assignment]


def research_rows(table: Table, models: list[PrivacyModel]) -> np.ndarray | None:
    """Which rows of the population are the research subset, for the models on a population table (δ-presence,
    k-map against a population table); None without such a model."""
    if not research_models(models):
        return None
    column = research_column(models)
    if column is None or column not in table.frame.columns:
        raise InputError(f"{research_models(models)[0].label}: unknown research-subset column {column!r}")
    return parse_marker(table.frame[column], column)


def released_classes(output: pd.DataFrame, qi: list[str], released: np.ndarray,
                     factorized: dict[str, tuple[np.ndarray, pd.Index]] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row -> class (-1 when not released) and the class sizes: released rows with identical QI cells.
    ``factorized``: {QI: factorize_cells(output[QI])} when the caller has hashed the columns already."""
    n = len(output)
    row_class = np.full(n, -1, dtype=np.int64)
    if not released.any():
        return row_class, np.zeros(0, dtype=np.int64)
    if factorized is not None and qi:
        # the columns' codes packed into one key (missing cells, code -1, as digit 0): no N x q matrix
        radices = [len(factorized[c][1]) + 1 for c in qi]
        if float(np.prod(np.array(radices, dtype=float))) < 2**62:
            everything = bool(released.all())
            key = np.zeros(int(released.sum()), dtype=np.int64)
            for c, r in zip(qi, radices):
                codes_c = factorized[c][0]
                key *= r
                key += (codes_c if everything else codes_c[released]) + 1
            _, inverse, sizes = group_keys(key)
            row_class[released] = inverse
            return row_class, np.asarray(sizes, dtype=np.int64)
        codes = np.stack([factorized[c][0][released] for c in qi], axis=1)
    elif factorized is not None:
        codes = np.zeros((int(released.sum()), 1), dtype=np.int64)
    else:
        codes = np.stack([pd.factorize(output[c].to_numpy(dtype=object)[released])[0] for c in qi], axis=1) \
            if qi else np.zeros((int(released.sum()), 1), dtype=np.int64)
    _, inverse, sizes = group_rows(codes)
    row_class[released] = inverse
    return row_class, np.asarray(sizes, dtype=np.int64)


def released_classes_by_labels(table: Table, hierarchies: dict[str, Hierarchy], result: Result, released: np.ndarray,
                               suppressed: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """released_classes of a full-domain output whose released rows are the non-suppressed ones (each showing
    '*' in every QI, as verify() checked), without hashing the cells: when every released QI cell is the very
    label object of its input's leaf at the run's level (result.level_key), the classes are the released rows'
    label codes grouped, numbered as released_classes numbers them (the tuples of each column's values in the
    order they first occur over all output rows, sorted); None otherwise (the caller hashes the cells)."""
    found = _classes_by_labels(table, hierarchies, result, released, suppressed)
    return None if found is None else (found[0], found[1])


def _classes_by_labels(table: Table, hierarchies: dict[str, Hierarchy], result: Result, released: np.ndarray,
                       suppressed: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict | None] | None:
    """released_classes_by_labels, and the label codes it compared the cells with (Publication.row_labels) when
    the output's QIs are coded."""
    encoded = encoded_input(table, hierarchies, result.leaf_codes)
    if result.transformation is None or encoded is None or not table.qi or not np.array_equal(released, ~suppressed):
        return None
    coded = _coded_level_key(result.coded_output, table.qi, hierarchies, result.transformation, encoded, released)
    if coded is False:  # a released cell is not its leaf's label
        return None
    key, row_labels = coded if coded is not None else (
        level_key(result.coded_output, table.qi, hierarchies, result.transformation, encoded, released), None)
    if key is None:
        return None
    if not released.any():
        return np.full(table.n, -1, dtype=np.int64), np.zeros(0, dtype=np.int64), row_labels
    # the classes (their keys, any order) and each one's first released row; ``assign`` turns ``key`` into each
    # released row's class, given each class's number
    span = dense_span(key)
    rows_of_key = None
    if span is not None:  # keys few enough to count: one slot per possible key, no hashing
        rows_of_key = np.bincount(key, minlength=span)
        uniques = np.flatnonzero(rows_of_key)
        present = rows_of_key > 0
        rows_of_key = rows_of_key[uniques]  # (the count per possible key freed before first_rows' array of them)
        first_row = first_rows(key, span, present)[uniques]  # rows read only until every key was seen
        del present

        def assign(number: np.ndarray) -> np.ndarray:
            class_of_key = np.zeros(span, dtype=np.int64)
            class_of_key[uniques] = number
            take_in_place(class_of_key, key)
            return key
    else:
        seen, uniques = pd.factorize(key)  # classes in first-seen order
        del key
        # a class's first released row: where the running maximum of the codes rises
        starts = np.empty(len(seen), dtype=bool)
        starts[:1] = True
        np.greater(seen[1:], np.maximum.accumulate(seen)[:-1], out=starts[1:])
        first_row = np.flatnonzero(starts)
        del starts

        def assign(number: np.ndarray) -> np.ndarray:
            take_in_place(number, seen)
            return seen
    if len(released) and not released.all():  # positions among the released rows -> input rows
        first_row = np.flatnonzero(released)[first_row]
    first_hidden = int(np.argmax(suppressed)) if suppressed.any() else None  # where '*' first shows
    radices = [len(hierarchies[c].labels[result.transformation[c]]) for c in table.qi]
    rest = np.asarray(uniques, dtype=np.int64)
    ranks: list[np.ndarray] = []
    for c, radix in reversed(list(zip(table.qi, radices))):
        label = rest % radix
        rest = rest // radix
        first = np.full(radix, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, label, first_row)
        labels = hierarchies[c].labels[result.transformation[c]]
        if first_hidden is not None:  # a label reading '*' is first seen on a suppressed row if one comes first
            root = [i for i, x in enumerate(labels) if x == ROOT]
            if root:
                first[root[0]] = min(first[root[0]], first_hidden)
        rank = np.empty(radix, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(radix)
        ranks.append(rank[label])
    order = np.lexsort(ranks)  # ranks run from the last QI to the first: the first is the primary key
    number = np.empty(len(order), dtype=np.int64)
    number[order] = np.arange(len(order))
    classes = assign(number)  # each released row's class
    if rows_of_key is not None:  # the classes' sizes are their keys' counts
        sizes = np.empty(len(order), dtype=np.int64)
        sizes[number] = rows_of_key
    else:
        sizes = np.bincount(classes, minlength=len(order)).astype(np.int64)
    if len(classes) == table.n:  # every row released: the classes are the array itself
        return classes, sizes, row_labels
    row_class = np.full(table.n, -1, dtype=np.int64)
    row_class[released] = classes
    return row_class, sizes, row_labels


GATE_BLOCK = 1 << 16  # rows per block in _coded_level_key: the block's key and label codes stay in cache


def _coded_level_key(output: pd.DataFrame, qi: list[str], hierarchies: dict[str, Hierarchy],
                     transformation: dict[str, int], encoded: np.ndarray,
                     kept: np.ndarray) -> tuple[np.ndarray, dict[str, tuple[Hierarchy, int, np.ndarray]]] | Literal[False] | None:
    """result.level_key for an output whose QIs are all coded (coded.py): every kept cell is checked to be the very
    label object ``labels[level][maps[level][leaf]]`` of its input's leaf - its code names a category that is
    that object - and the kept rows' key packs those label codes (mixed radix, as level_key packs them). The rows
    a block at a time, every QI in turn, so the block's key stays in cache; each QI's label code per row kept
    (in its narrowest integer type) for the report. Returns (key, {QI: (hierarchy, level, label codes)}); False
    when a kept cell is another object (the caller hashes the cells), None when a QI is not coded or the key
    would not fit in int64 (level_key decides)."""
    radices = [len(hierarchies[c].labels[transformation[c]]) for c in qi]
    if not qi or float(np.prod(np.array(radices, dtype=float))) >= 2**62:
        return None
    n = len(kept)
    checks = []
    for col in qi:
        h, level, column = hierarchies[col], transformation[col], output[col]
        if not is_coded(column):
            return None
        labels = object_addresses(np.asarray(h.labels[level], dtype=object))
        held = object_addresses(np.asarray(column.array.categories, dtype=object))
        codes = column.array.codes
        if labels is None or held is None or len(codes) != n:
            return None
        if len(codes) and int(codes.min()) < 0:  # a missing cell: no label's
            return False
        # the label code each category's object is (-1: no label's)
        code_of = {a: i for i, a in enumerate(labels.tolist())}
        category_label = np.array([code_of.get(a, -1) for a in held.tolist()], dtype=np.int64)
        both = min(len(category_label), len(labels))
        # the categories are the labels in their order (as the output builder makes them): a code is its label code
        as_labels = bool(np.array_equal(category_label[:both], np.arange(both)))
        width = np.int8 if len(labels) < 2**7 else np.int16 if len(labels) < 2**15 else np.int32
        checks.append((codes, category_label, as_labels, np.asarray(h.maps[level]).astype(width)))
    everything = bool(kept.all())
    # the kept rows' keys, each block's packed in a block-sized buffer and its kept rows' copied in (no key of
    # every row beside the kept rows' one)
    key = np.empty(n if everything else int(np.count_nonzero(kept)), dtype=np.int64)
    block_key = np.empty(min(n, GATE_BLOCK), dtype=np.int64)
    filled = 0
    # the label codes of every QI in one buffer: of more than glibc's largest mmap threshold (32 MB) at millions of
    # rows, it is handed back to the system as a whole when the report drops them (separate columns of a few MB
    # each would stay in the heap and raise the report's peak)
    widths = [label_of.dtype for *_, label_of in checks]
    starts = np.cumsum([0] + [-(-n * w.itemsize // 8) * 8 for w in widths])  # each column 8-byte aligned
    buffer = np.empty(int(starts[-1]), dtype=np.uint8)
    row_labels = {col: (hierarchies[col], transformation[col], buffer[at:at + n * w.itemsize].view(w))
                  for col, w, at in zip(qi, widths, starts.tolist())}
    del buffer
    for start in range(0, n, GATE_BLOCK):
        rows = slice(start, start + GATE_BLOCK)
        part = key[rows] if everything else block_key[:min(GATE_BLOCK, n - start)]
        part[...] = 0
        for j, (col, radix, (codes, category_label, as_labels, label_of)) in enumerate(zip(qi, radices, checks)):
            label = row_labels[col][2][rows]
            # mode="wrap": no bounds pass (the leaf codes are the hierarchy's: encode checked them)
            np.take(label_of, encoded[rows, j], out=label, mode="wrap")
            shown = codes[rows]
            # a code past the labels (the suppressed rows' appended '*') equals no label code
            other = shown != label if as_labels else np.take(category_label, shown) != label
            if other.any() if everything else (other & kept[rows]).any():
                return False
            part *= radix
            part += label
        if not everything:
            kept_part = part[kept[rows]]
            key[filled:filled + len(kept_part)] = kept_part
            filled += len(kept_part)
    return key, row_labels


def publish(result: Result, spec: RunSpec, table: Table, hierarchies: dict[str, Hierarchy]) -> Publication:
    """The publication of a verified result under ``spec``; raises when any check fails."""
    if not result.verified:
        raise VerificationError("refusing to publish a result that was not verified")
    _check_spec_models(result, spec)
    if result.recoding == "anatomy":
        return _publish_anatomy(result, spec, table, hierarchies)
    if result.recoding == "m-invariance":
        return _publish_m_invariance(result, spec, table, hierarchies)
    n = table.n
    suppressed = np.asarray(result.suppressed, dtype=bool)
    keep = spec.publishing.suppressed_rows == KEEP
    safepub_publication.check_request(result.models, keep)
    if keep and suppressed.any():
        _check_suppressed_group(result, table, hierarchies, suppressed)
    released = np.ones(n, dtype=bool) if keep else ~suppressed
    output = result.coded_output  # a full-domain run's QIs as codes (coded.py): gathered and checked as such

    # the columns that may leave: never an identifying column, never the research marker
    research = research_rows(table, result.models)
    marker = research_column(result.models)
    expected = [c for c in table.frame.columns if c not in table.identifying]
    if list(output.columns) != expected:
        raise VerificationError(f"output columns {list(output.columns)} differ from the expected {expected}")
    columns = [c for c in expected if c != marker]

    # every model on the released classes (the population's, with a population table), suppressed group included
    by_labels = None
    if research is None and not (keep and suppressed.any()):
        by_labels = _classes_by_labels(table, hierarchies, result, released, suppressed)
    factorized = None
    row_labels = None
    if by_labels is not None:  # every released QI cell is its input's label object at the run's level
        row_class, sizes, row_labels = by_labels
    else:
        # each QI column of the output hashed once: its codes give the classes and the cell checks below
        factorized = {c: factorize_cells(cells_of(output[c])) for c in table.qi}
        row_class, sizes = released_classes(output, table.qi, released, factorized)
    if table.person is not None and result.person_adversary != spec.person_adversary:
        raise VerificationError(f"the result was searched against the {result.person_adversary!r} adversary, the run "
                                f"asks for {spec.person_adversary!r}: refusing to publish it unchecked")
    check_models(table, hierarchies, result.models, sizes, row_class, spec.person_adversary)

    published = released if research is None else released & research
    rows = np.flatnonzero(published)
    # every row: the output's columns, not a copy; else one gather per column (a coded QI's codes only;
    # output.iloc[rows][columns].reset_index(drop=True) copies three times)
    every = len(rows) == n and output.index.equals(pd.RangeIndex(n))
    # every row and column: the output's frame shared as it is (the same columns frame_of would make)
    frame = shared_frame(output, columns) if every else None
    if frame is None:
        frame = frame_of({c: rows_of(output[c], None if every else rows) for c in columns}, pd.RangeIndex(len(rows)))
    flags = suppressed[rows]
    _check_published_cells(table, hierarchies, frame, rows, flags, result, factorized,
                           qi_checked=by_labels is not None)
    # (ε,δ)-differential privacy: the sample, the suppression rule and k on every whole published row
    safepub_publication.check_publication(result, table, hierarchies, frame, rows)

    info = get_algorithm(result.algorithm) if result.algorithm else None
    if info is not None and info.check_published is not None:
        info.check_published(PublishedClasses(table, hierarchies, output.iloc[np.flatnonzero(released)],
                                              np.flatnonzero(released), row_class[released], sizes,
                                              list(result.models), dict(result.options)))
    return Publication(frame, flags, rows, result=result, class_of_row=row_class, class_sizes=sizes,
                       row_labels=row_labels)


def _check_spec_models(result: Result, spec: RunSpec) -> None:
    """The gate checks the result's models; each of the run's own must be among them (bound to a column when it
    had none), so a result that lost or weakened one is refused rather than published unchecked."""
    carried = list(result.models)
    for m in spec.models:
        if m in carried:
            continue
        column = getattr(m, "column", None)
        bound_columns = [c for r in carried if type(r) is type(m) and (c := getattr(r, "column", None)) is not None]
        if getattr(m, "needs_sensitive", False) and column is None and any(
                r == m.bind(c) for c in bound_columns for r in carried):
            continue
        raise VerificationError(f"the result does not carry the run's model {m.describe()}: refusing to publish "
                                f"a table that was not checked against it")


def _check_suppressed_group(result: Result, table: Table, hierarchies: dict, suppressed: np.ndarray) -> None:
    """Keeping suppressed records as '*' rows: allowed only when, as one class, they satisfy every model."""
    row_class = np.where(suppressed, 0, -1).astype(np.int64)
    sizes = np.array([int(suppressed.sum())], dtype=np.int64)
    try:
        check_models(table, hierarchies, result.models, sizes, row_class)
    except VerificationError as exc:
        reason = str(exc).split(" does not hold")[0]
        flags = research_flags(table.frame, result.models)
        count = int(suppressed.sum()) if flags is None else int((suppressed & flags).sum())
        raise InputError(
            f"the {count} suppressed record(s) cannot be published as '*' rows: together they "
            f"break {reason}, so their sensitive values would be disclosed; publish without them (the "
            f"default) instead") from None


def _check_published_cells(table: Table, hierarchies: dict, frame: pd.DataFrame, rows: np.ndarray,
                           flags: np.ndarray, result: Result,
                           factorized: dict[str, tuple[np.ndarray, pd.Index]] | None = None,
                           qi_checked: bool = False) -> None:
    """Every published cell from the published rows: QIs generalize their input (or read '*' on a kept
    suppressed row), other columns unchanged. The input QIs are the run's leaf codes when it kept them
    (Result.leaf_codes, read-only) and ``hierarchies`` are the ones they were encoded under; ``factorized``:
    the output's QI columns hashed over all its rows (``frame`` is its ``rows``). ``qi_checked``: every
    published QI cell was found to be its input's label object at the level (released_classes_by_labels)."""
    encoded = encoded_input(table, hierarchies, result.leaf_codes)
    # every row published (rows = 0..n-1, ascending): the input's columns as they are, no gathered copies
    whole = len(rows) == table.n
    plain = whole and table.frame.index.equals(pd.RangeIndex(table.n))
    shown = bool(flags.any())  # kept suppressed rows
    for col in frame.columns:
        if col in table.qi:
            if shown and (cells_of(frame[col], flags) != ROOT).any():
                raise VerificationError(f"a suppressed record shows a value in {col!r} instead of {ROOT!r}")
            if qi_checked:
                continue
        elif not plain:  # compared with its input's cells a block of rows at a time: no gathered copy of the column
            if not _unchanged_rows(frame[col].to_numpy(dtype=object), table.frame[col].to_numpy(), rows):
                raise VerificationError(f"column {col!r} is not a QI but was changed")
            continue
        cells = cells_of(frame[col]) if col in table.qi else frame[col].to_numpy(dtype=object)
        if plain:
            source = table.frame[col]
        else:  # the published rows' input cells as they are (dtype given: no scan of the objects for datetimes)
            gathered = table.frame[col].to_numpy()[rows]
            source = pd.Series(gathered, name=col, dtype=gathered.dtype, copy=False)
        if col in table.qi:
            level = None if result.transformation is None else result.transformation.get(col)
            j = table.qi.index(col)
            subset = None
            if factorized is not None:
                codes, distinct = factorized[col]
                subset = (codes if whole else codes[rows], distinct)
            input_codes = None if encoded is None else (encoded[:, j] if whole else encoded[rows, j])
            check_cells(col, source, cells, hierarchies[col], flags, level,
                         ranges=result.transformation is None and table.is_numeric(col),
                         codes=input_codes, factorized=subset)
        elif not unchanged(cells, source.to_numpy(dtype=object)):
            raise VerificationError(f"column {col!r} is not a QI but was changed")


def _unchanged_rows(cells: np.ndarray, original: np.ndarray, rows: np.ndarray) -> bool:
    """unchanged(cells, the input's cells ``original[rows]`` as pandas gives them as objects), the input's cells
    gathered a block of rows at a time."""
    if len(cells) != len(rows):
        return False
    for start in range(0, len(rows), LEVEL_KEY_BLOCK):
        block = slice(start, start + LEVEL_KEY_BLOCK)
        part = original[rows[block]]
        if part.dtype != object:  # pandas' objects (a datetime's Timestamp), as a Series of the gathered cells gives
            part = pd.Series(part, dtype=part.dtype, copy=False).to_numpy(dtype=object)
        if not unchanged(cells[block], part):
            return False
    return True


def _publish_anatomy(result: Result, spec: RunSpec, table: Table, hierarchies: dict) -> Publication:
    """Anatomy publishes the QIT (raw QIs + group) and the ST (group, value, count); records without a
    group (suppressed) have no sensitive value in the ST and are left out of the QIT."""
    qit, st = result.published["qit"], result.published["st"]
    verify_anatomy(table, qit, st, result.sensitive, result.models, result.suppression_limit)
    group = qit["group"].to_numpy(dtype=np.int64)
    rows = np.flatnonzero(group >= 0)
    frame = qit.iloc[rows].reset_index(drop=True)
    if result.sensitive in frame.columns or any(c in frame.columns for c in table.identifying):
        raise VerificationError("the QIT shows the sensitive or an identifying column")
    _, dense = np.unique(group[rows], return_inverse=True)
    row_class = np.full(table.n, -1, dtype=np.int64)
    row_class[rows] = dense
    sizes = np.bincount(dense).astype(np.int64) if len(rows) else np.zeros(0, np.int64)
    return Publication(frame, np.zeros(len(rows), dtype=bool), rows, tables={"st": st}, result=result,
                       class_of_row=row_class, class_sizes=sizes)


def _publish_m_invariance(result: Result, spec: RunSpec, table: Table, hierarchies: dict) -> Publication:
    """A release of a sequence, checked from its rows against the caller's history (not the one the result
    carries), the record keys computed from the input again; counterfeit rows have input row -1."""
    keys = republication_keys(table, spec.republication)
    assert spec.republication is not None
    m = [x for x in result.models if isinstance(x, MInvariance)]
    if len(m) != 1 or result.sensitive is None:
        raise VerificationError("m-invariance: the result carries no m-invariance model")
    published, rows = result.published["release"], np.asarray(result.published["rows"], dtype=np.int64)
    history = check_release(published, rows, table.frame[result.sensitive].astype(str).to_numpy(), keys,
                            spec.republication.history, int(m[0].m), list(table.qi), result.sensitive,
                            cell_checker(table, hierarchies))
    group = published[GROUP].to_numpy(dtype=np.int64) - 1
    sizes = np.bincount(group, minlength=int(group.max()) + 1 if len(group) else 0).astype(np.int64)
    row_class = np.full(table.n, -1, dtype=np.int64)
    row_class[rows[rows >= 0]] = group[rows >= 0]
    return Publication(published.reset_index(drop=True), np.zeros(len(published), dtype=bool), rows,
                       tables={"counterfeits": result.published["counterfeits"]}, result=result,
                       class_of_row=row_class, class_sizes=sizes, history=history)


def publish_identifiers(publication: Publication, spec: RunSpec, table: Table) -> list[dict]:
    """The identifying columns with a rule (``spec.identifiers``) published beside the other columns at their
    input position, each cell re-checked against its input row (identifiers.check): no input value leaves,
    missing stays missing, pseudonyms equal the recomputed HMAC, masks keep only what the rule keeps,
    surrogates one-to-one. Fills ``publication.reidentification``; returns the report's entries."""
    rules = [r for r in spec.identifiers if r.treatment != id_rules.REMOVE]
    entries = [{"column": r.column, "treatment": r.treatment, "description": r.describe()} for r in spec.identifiers]
    if not rules:
        return entries
    id_rules.check_spec(tuple(spec.identifiers), table.identifying, spec.pseudonym_keys)
    result = publication.result
    if result is not None and result.recoding in ("anatomy", "m-invariance"):
        raise InputError(f"{result.recoding}: identifying columns can only be removed")
    if any(isinstance(m, EDDifferentialPrivacy) for m in spec.models):
        # a token per record (even keyed) is outside what (ε,δ)-differential privacy covers
        raise InputError("(ε,δ)-differential privacy (SafePub): identifying columns can only be removed; a "
                         "pseudonym, mask or surrogate per record is outside the guarantee")
    rows = np.asarray(publication.rows, dtype=np.int64)
    frame = publication.table
    for rule in rules:
        values = id_rules.published_values(table.frame, rule.column, rows)
        treated = id_rules.treat(rule, values, spec.pseudonym_keys)
        id_rules.check(rule, values, treated.cells, spec.pseudonym_keys)
        # the input position among the columns that leave
        before = [c for c in table.frame.columns[:list(table.frame.columns).index(rule.column)] if c in frame.columns]
        at = list(frame.columns).index(before[-1]) + 1 if before else 0
        frame.insert(int(at), rule.column, pd.Series(treated.cells, dtype=object))
        if treated.mapping:
            publication.reidentification[rule.column] = treated.mapping
    publication.table = frame
    return entries


def publish_set_column(publication: Publication, spec: RunSpec, table: Table, progress=None) -> dict:
    """The set-valued column of ``spec.set_column`` made k^m-anonymous within every published class,
    checked from the published cells; the column of ``publication.table`` is replaced. Returns its report."""
    sc = spec.set_column
    assert sc is not None
    role = table.roles.get(sc.column)
    if role is None:
        raise InputError(f"set-valued column {sc.column!r}: no such column")
    if role != Role.INSENSITIVE:
        raise InputError(f"set-valued column {sc.column!r} is {role.value}; mark it insensitive: its items are "
                         f"protected by k^m-anonymity within each class")
    if publication.class_of_row is None:
        raise InputError(f"set-valued column {sc.column!r}: this algorithm publishes no equivalence classes")
    classes = np.asarray(publication.class_of_row, dtype=np.int64)[np.asarray(publication.rows, dtype=np.int64)]
    cells, report = anonymize_set_column(publication.table[sc.column].astype(str), sc.column, sc.delimiter, classes,
                                         spec.k, sc.m, algorithm=sc.algorithm, hierarchy=sc.hierarchy,
                                         progress=progress)
    if not report["km_holds"]:
        raise VerificationError(f"set-valued column {sc.column!r}: k^m-anonymity (k={spec.k}, m={sc.m}) fails in a "
                                f"published class (smallest support {report['km_smallest_support_in_classes']})")
    publication.table[sc.column] = cells
    return report


# ---- transaction datasets ---------------------------------------------------------------------------------
RECORD_ID, ITEMS = "record id", "items"  # the columns of a published transaction dataset


def publish_transactions(spec: RunSpec, records: list[list[str]] | Transactions, rules: dict[str, list[str]],
                         suppressed_items: list[str]) -> Publication:
    """The publication of a transaction dataset: one row per input record (its id, if the file has ids,
    and its published items joined by the file's item delimiter), rechecked from those published cells:
    the ids are the input's, in input order; every published record is a valid generalization of its
    input record under the rules (each published item is an input item of the record or a rule's label
    covering one, each input item is published, covered or suppressed); and k^m-anonymity recounted on
    the published records (every itemset of at most m items that occurs is held by k records or more).
    ``records``: lists of item texts, or the same records as codes (the engine's ``SetResult.published``),
    joined into the cells in Arrow's buffers. Returns the Publication; ``report["km"]`` holds the recount."""
    source = spec.table
    assert isinstance(source, TransactionSet)
    tx, delimiter, k, m = source.transactions, source.delimiter, spec.k, source.m
    count = records.n if isinstance(records, Transactions) else len(records)
    if count != tx.n:
        raise VerificationError(f"{count} published records for {tx.n} input records")
    used = ([str(records.items[c]) for c in np.flatnonzero(np.bincount(records.codes, minlength=len(records.items)))]
            if isinstance(records, Transactions) else set().union(*records))
    clash = sorted(item for item in used if delimiter in item or not item.strip())
    if clash:
        raise InputError(f"the published item {clash[0]!r} contains the item delimiter {delimiter!r} (or is empty); "
                         f"choose another delimiter or hierarchy labels without it")
    from ..setvalued.transactions import joined_cells  # the cells of coded records, joined in Arrow's buffers

    frame = pd.DataFrame({ITEMS: joined_cells(records, delimiter) if isinstance(records, Transactions)
                          else [delimiter.join(record) for record in records]})
    if tx.ids is not None:
        frame.insert(0, RECORD_ID, [str(i) for i in tx.ids])

    # from here on only the published cells are read
    if tx.ids is not None and frame[RECORD_ID].tolist() != [str(i) for i in tx.ids]:
        raise VerificationError("the published record ids differ from the input's")
    cells = frame[ITEMS].tolist()
    recount = Transactions.from_cells(cells, delimiter)  # = the cells split at the delimiter, empty items dropped
    if not _images_match(tx, recount, rules, suppressed_items):
        _explain_mismatch(tx, [[x for x in cell.split(delimiter) if x] for cell in cells], rules, suppressed_items)
    # counted once: the report's frequent itemsets reuse these counts (cached on recount)
    smallest, where = itemsets.smallest_support_of(recount, m)
    if smallest is not None and smallest < k:
        shown = ", ".join(str(recount.items[c]) for c in where or ())
        raise VerificationError(f"k^m-anonymity (k={k}, m={m}) fails on the published records: {{{shown}}} occurs "
                                f"in {smallest} record(s)")
    rows = np.arange(tx.n, dtype=np.int64)
    km = {"smallest_support": smallest, "weakest_itemset": [str(recount.items[c]) for c in where or ()],
          "holds": True, "published_items": int(len(recount.items))}
    return Publication(frame, np.zeros(tx.n, dtype=bool), rows, km=km, published_records=recount)


def _images_match(tx, recount, rules: dict[str, list[str]], suppressed_items: list[str]) -> bool:
    """Vectorized: is every published record exactly the set of its input items' images under the rules
    (an item in a rule -> the rule's label, a suppressed item -> nothing, any other item -> itself)?"""
    label_of = {item: label for label, items in rules.items() for item in items}
    gone = set(suppressed_items)
    index = {str(x): i for i, x in enumerate(recount.items)}
    # input item -> published item code; -1 suppressed; -2 an image no record shows (a mismatch wherever it occurs)
    image = np.array([-1 if str(x) in gone else index.get(label_of.get(str(x), str(x)), -2) for x in tx.items],
                     dtype=np.int64)
    return itemsets.records_are_images(tx, image, recount)


def _explain_mismatch(tx, published: list[list[str]], rules: dict[str, list[str]],
                      suppressed_items: list[str]) -> None:
    """The first published record that is not the image of its input record, named with the reason."""
    covers = {label: set(items) for label, items in rules.items()}
    label_of = {item: label for label, items in rules.items() for item in items}
    gone = set(suppressed_items)
    for r, items in enumerate(published):
        line = r + 1
        source_items = set(tx.record(r))
        if len(set(items)) != len(items):
            raise VerificationError(f"record {line}: an item is published twice")
        for item in items:
            if not (covers.get(item, {item}) & source_items):
                raise VerificationError(f"record {line}: published item {item!r} generalizes none of its items")
        covered = set(items).union(*(covers[p] for p in items if p in covers))
        for item in sorted(source_items - gone - covered):
            raise VerificationError(f"record {line}: item {item!r} is neither published nor suppressed")
        images = {label_of.get(x, x) for x in source_items - gone}
        if images != set(items):
            raise VerificationError(f"record {line}: published items {sorted(items)} are not the images of its items "
                                    f"under the rules ({sorted(images)})")
    raise VerificationError("the published records are not the images of the input records under the rules")


# ---- partitioned publications (engine.backends.dask: a run on a Dask cluster) -------------------------------------
def check_published_partition(source: pd.DataFrame, written: pd.DataFrame, rows: np.ndarray, flags: np.ndarray,
                              columns: list[str], qi: list[str], hierarchies: list[Hierarchy],
                              levels: list[int] | None, numeric: list[bool], keep_suppressed: bool,
                              where: str) -> None:
    """publish()'s checks on one partition of a cluster run, from its rows as written: ``source`` is the
    partition's input, ``written`` its published rows, ``rows`` their positions in ``source`` and ``flags``
    which of them are kept suppressed records. The columns that leave; the rows are input rows in input
    order; '*' in every QI of a kept suppressed record (none when suppressed records are removed); every
    other QI cell a generalization of its input value (at ``levels`` for a full-domain transformation; any
    ancestor, or a range holding the value for a numeric QI, for a local/multidimensional recoding); every
    other column unchanged. The models are checked on the classes merged over all partitions
    (:func:`check_merged_classes`)."""
    if list(written.columns) != columns:
        raise VerificationError(f"{where}: output columns {list(written.columns)} differ from the expected {columns}")
    if len(rows) != len(written) or len(flags) != len(written):
        raise VerificationError(f"{where}: {len(written)} published rows but {len(rows)} row numbers")
    if len(rows) and (rows.min() < 0 or rows.max() >= len(source) or (np.diff(rows) <= 0).any()):
        raise VerificationError(f"{where}: the published rows are not rows of the partition in input order")
    if flags.any() and not keep_suppressed:
        raise VerificationError(f"{where}: a suppressed record is published although suppressed records are removed")
    inputs = source.iloc[rows].reset_index(drop=True)
    for j, (c, h) in enumerate(zip(qi, hierarchies)):
        cells = written[c].to_numpy(dtype=object)
        if (cells[flags] != ROOT).any():
            raise VerificationError(f"{where}: a suppressed record shows a value in {c!r} instead of {ROOT!r}")
        level = None if levels is None else levels[j]
        check_cells(c, inputs[c], cells, h, flags, level, ranges=levels is None and numeric[j])
    for c in columns:
        if c not in qi and not np.array_equal(written[c].to_numpy(dtype=object), inputs[c].to_numpy(dtype=object)):
            raise VerificationError(f"{where}: column {c!r} is not a QI but was changed")


def check_merged_classes(models: list[PrivacyModel], sizes: np.ndarray, row_class: np.ndarray, domain) -> None:
    """check_models on classes merged over the partitions of a cluster run: ``sizes`` per class, ``row_class``
    per weighted row (a distinct combination standing for its records), ``domain(model)`` the model's
    sensitive domain over those weighted rows (engine.run.weighted.WeightedDomain)."""
    raise_failures(verdicts(models, sizes, row_class, domain, None))
