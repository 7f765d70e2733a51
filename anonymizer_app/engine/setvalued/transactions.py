"""Set-valued records: a transaction dataset, or the set-valued column of a table.

Records are stored flat (CSR): ``codes[offsets[r]:offsets[r + 1]]`` are the item codes of record r,
``items[code]`` the item's text. A record may repeat an item (a multiset, e.g. seed 003 Table 16's
payments); ``distinct()`` gives the records as sets, which is how k^m-anonymity counts them
(see :mod:`.itemsets`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from . import kernels

DELIMITER_NAMES = {"comma": ",", "semicolon": ";", "tab": "\t", "pipe": "|", "space": " "}


@dataclass
class Transactions:
    """N records of items (CSR), the item texts, and optionally one id per record."""

    items: np.ndarray  # object array: code -> item text, unique
    offsets: np.ndarray  # int64, N + 1
    codes: np.ndarray  # int64, the records' item codes one after the other
    ids: np.ndarray | None = None  # object array of record ids, or None

    @property
    def n(self) -> int:
        return int(len(self.offsets) - 1)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def record_of(self) -> np.ndarray:
        """The record of every item occurrence."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.lengths)

    def record(self, r: int) -> list[str]:
        return [str(self.items[c]) for c in self.codes[self.offsets[r]:self.offsets[r + 1]]]

    def records(self) -> list[list[str]]:
        return [self.record(r) for r in range(self.n)]

    def repeated_records(self) -> int:
        """Records that hold some item more than once."""
        return int(np.count_nonzero(self.distinct().lengths < self.lengths))  # the sets, cached: no sort

    def distinct(self) -> Transactions:
        """The records as sets: a repeated item kept once (first-appearance order). Computed once: the
        search, the measures and the report all ask for it (a sort of every occurrence each time)."""
        return self._sets

    @cached_property
    def _sets(self) -> Transactions:
        return self._sets_of(*dedupe_records(self.offsets, self.codes))

    def _sets_of(self, offsets: np.ndarray, codes: np.ndarray) -> Transactions:
        sets = Transactions(self.items, offsets, codes, ids=self.ids)
        if len(codes) == len(self.codes):
            sets.__dict__["_sets"] = sets  # already sets: its own distinct()
        return sets

    def adopt_sets(self, offsets: np.ndarray, codes: np.ndarray) -> None:
        """Take (offsets, codes), this dataset's records as sets in first-appearance order (what
        :func:`dedupe_records` gives), as ``distinct()``: found by a loop that counted them too."""
        if "_sets" not in self.__dict__:
            self.__dict__["_sets"] = self._sets_of(offsets, codes)

    def item_frequencies(self) -> dict[str, int]:
        """Item -> number of records holding it, most frequent first."""
        d = self.distinct()
        counts = np.bincount(d.codes, minlength=len(self.items))
        order = np.argsort(-counts, kind="stable")
        return {str(self.items[c]): int(counts[c]) for c in order if counts[c]}

    @classmethod
    def from_records(cls, records: Sequence[Sequence[str]], ids: Sequence[str] | None = None) -> Transactions:
        lengths = np.fromiter((len(r) for r in records), dtype=np.int64, count=len(records))
        flat = [str(x) for r in records for x in r]
        return cls._coded(np.array(flat, dtype=object), lengths, ids)

    @classmethod
    def from_cells(cls, cells: Sequence[str], delimiter: str) -> Transactions:
        """``from_records([[x for x in cell.split(delimiter) if x] for cell in cells])``, split and coded in
        Arrow's buffers: only the distinct items become Python strings (a million records hold some ten
        million items). Text Arrow cannot hold (a lone surrogate) takes the Python path."""
        compiled = cls._from_cells_compiled(cells, delimiter)
        if compiled is not None:
            return compiled
        try:
            column = pa.array(cells, type=pa.large_string())
        except (pa.ArrowException, UnicodeError, TypeError):
            return cls._from_cells_python(cells, delimiter)
        split = pc.split_pattern(column, delimiter)
        del column
        pieces = split.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64)
        flat = split.flatten()
        del split
        kept = pc.not_equal(flat, "")
        if pc.all(kept).as_py() is not False:  # no empty item (the usual case): no copy of the items
            offsets = np.concatenate([[0], np.cumsum(pieces)]).astype(np.int64)
        else:
            offsets = np.concatenate([[0], np.cumsum(kept.to_numpy(zero_copy_only=False))])[
                np.concatenate([[0], np.cumsum(pieces)])].astype(np.int64)
            flat = flat.filter(kept)
        del kept
        coded = pc.dictionary_encode(flat)
        del flat
        uniques = np.array(coded.dictionary.to_pylist(), dtype=object)
        # (UTF-8 order is code-point order, but the distinct items are few: sorted as Python sorts them)
        items, codes = _in_sorted_order(uniques, coded.indices.to_numpy(zero_copy_only=False))
        return cls(items, offsets, codes)

    @classmethod
    def _from_cells_compiled(cls, cells: Sequence[str], delimiter: str) -> Transactions | None:
        """from_cells by the compiled loop over the cells' UTF-8 bytes (:func:`.kernels.split_cells`: no string
        per piece made, each piece coded by its bytes); None for few items (numba would cost more than it
        saves), a delimiter of more than one byte, a cell that is not text, or no numba."""
        try:
            joiner = delimiter.encode("utf-8")
            text = "".join(cells)
        except (TypeError, UnicodeError):
            return None
        if len(joiner) != 1 or not len(cells):
            return None
        # the pieces number at most the cells plus the delimiters (one byte: never inside another character)
        most = len(cells) + text.count(delimiter)
        kernel = kernels.load(most)
        if kernel is None:
            return None
        if text.isascii():  # a character a byte: the cells' lengths are their bytes' (no Arrow copy of them)
            data = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
            del text
            bounds = np.zeros(len(cells) + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, cells), dtype=np.int64, count=len(cells)), out=bounds[1:])
        else:
            del text
            try:
                column = pa.array(cells, type=pa.large_string())
            except (pa.ArrowException, UnicodeError, TypeError):
                return None
            if column.null_count:
                return None
            buffers = column.buffers()
            bounds = np.frombuffer(buffers[1], dtype=np.int64)[column.offset:column.offset + len(column) + 1]
            data = (np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None
                    else np.zeros(0, dtype=np.uint8))
        offsets, found, starts, ends = kernels.split_cells(kernel, bounds, data, joiner[0], most)
        uniques = np.array([data[a:b].tobytes().decode("utf-8") for a, b in zip(starts.tolist(), ends.tolist())],
                           dtype=object)
        items, codes = _in_sorted_order(uniques, found)
        return cls(items, offsets, codes)

    @classmethod
    def _from_cells_python(cls, cells: Sequence[str], delimiter: str) -> Transactions:
        """from_cells with one split of all the cells joined: the pieces of cell i are its delimiters + 1,
        so the join keeps them apart."""
        pieces = np.fromiter((c.count(delimiter) + 1 for c in cells), dtype=np.int64, count=len(cells))
        flat = np.array(delimiter.join(cells).split(delimiter) if len(cells) else [], dtype=object)
        kept = flat != ""
        record = np.repeat(np.arange(len(cells), dtype=np.int64), pieces)
        lengths = np.bincount(record[kept], minlength=len(cells)).astype(np.int64)
        return cls._coded(flat[kept], lengths, None)

    @classmethod
    def _coded(cls, flat: np.ndarray, lengths: np.ndarray, ids: Sequence[str] | None) -> Transactions:
        """Records from their items' texts one after the other (``flat``) and their lengths."""
        if len(flat):
            # codes in the items' sorted order (as np.unique gives them), found by hashing: sorting a million
            # strings is the slow part, sorting the distinct ones is not
            found, uniques = pd.factorize(flat)
            if not _utf8(uniques):
                found, uniques = _factorize_exactly(flat)
            items, codes = _in_sorted_order(uniques, found)
        else:
            items, codes = np.array([], dtype=object), np.zeros(0, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return cls(items.astype(object), offsets, codes.astype(np.int64).reshape(-1),
                   None if ids is None else np.array(list(ids), dtype=object))


def _in_sorted_order(uniques: np.ndarray, found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(items, codes) with the distinct items sorted and each occurrence's code (``found``: its index in
    ``uniques``) renumbered to match: the codes every way of building Transactions gives (as from_records)."""
    uniques = np.asarray(uniques, dtype=object)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    codes = rank[found] if len(order) else np.zeros(0, dtype=np.int64)
    return uniques[order], np.asarray(codes, dtype=np.int64).reshape(-1)


def _utf8(uniques: np.ndarray) -> bool:
    """Whether every distinct item is text with a UTF-8 form. pd.factorize gave an item without one (a lone
    surrogate, which only a Python caller can pass) twice in some runs of the tests and once in others."""
    try:
        "".join(uniques.tolist()).encode("utf-8")
    except (UnicodeError, TypeError):
        return False
    return True


def _factorize_exactly(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pd.factorize's (codes, uniques) by a dict of the items themselves (Python's hashing and equality)."""
    index: dict = {}
    found = np.fromiter((index.setdefault(x, len(index)) for x in flat.tolist()), dtype=np.int64, count=len(flat))
    return found, np.array(list(index), dtype=object)


def dedupe_records(offsets: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, codes) with each record's repeated codes kept once, in their first-appearance order."""
    n = len(offsets) - 1
    if not len(codes):
        return offsets.copy(), codes.copy()
    base = int(codes.max()) + 1
    kernel = kernels.load(len(codes))
    if kernel is not None:  # one read of the records, no sort
        return kernels.image_sets(kernel, offsets, codes, None, base)
    # int32 keys when they fit: half the memory and a faster sort
    keys = np.repeat(np.arange(n, dtype=np.int32 if n * base < 2 ** 31 else np.int64), np.diff(offsets))
    keys *= base
    keys += codes.astype(keys.dtype, copy=False)
    order = np.argsort(keys, kind="stable")  # the records come in order: a stable sort of nearly sorted keys
    ordered = keys[order]
    del keys
    repeat = ordered[1:] == ordered[:-1]
    del ordered
    if not repeat.any():
        return offsets.astype(np.int64), codes.copy()  # no record repeats an item
    keep = np.ones(len(codes), dtype=bool)
    keep[order[1:][repeat]] = False  # stable: the first of equal keys is the first appearance, kept
    kept = np.concatenate([[0], np.cumsum(keep)])
    return kept[offsets].astype(np.int64), codes[keep]


def joined_cells(tx: Transactions, delimiter: str) -> np.ndarray | list[str]:
    """Each record's items (codes in record order) joined by ``delimiter``, joined in Arrow's buffers (a Python
    join per record took a second a million records); text Arrow cannot hold (a lone surrogate) in Python.
    Large record sets: the cells' bytes laid out by the compiled loop (:func:`.kernels.joined_bytes`)."""
    kernel = kernels.load(len(tx.codes))
    if kernel is not None:
        cells = kernels.joined_bytes(kernel, tx.offsets, tx.codes, tx.items, delimiter)
        if cells is not None:
            return cells.to_numpy(zero_copy_only=False)
    try:
        items = pa.array(tx.items.tolist(), type=pa.large_string())
        lists = pa.LargeListArray.from_arrays(pa.array(tx.offsets, type=pa.int64()),
                                              items.take(pa.array(tx.codes, type=pa.int64())))
        return pc.binary_join(lists, pa.scalar(delimiter, type=pa.large_string())).to_numpy(zero_copy_only=False)
    except (pa.ArrowException, UnicodeError, TypeError):
        flat = tx.items[tx.codes].tolist()
        bounds = tx.offsets.tolist()
        return [delimiter.join(flat[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def delimiter_of(text: str) -> str:
    value = DELIMITER_NAMES.get(text.lower(), text)
    if len(value) != 1 or value in "\r\n\"'":
        raise InputError(f"item delimiter {text!r}: give one character (or comma, semicolon, tab, pipe, space)")
    return value


def parse_transactions(lines: Iterable[str], delimiter: str, *, has_id: bool = False,
                       where: str = "transactions") -> Transactions:
    """One record per line, items separated by ``delimiter`` (the first field the record id when
    ``has_id``). Blank lines are skipped; surrounding spaces of items and empty items (a trailing
    delimiter) are dropped; a record without items is refused, naming its line."""
    records: list[list[str]] = []
    ids: list[str] = []
    split_any = False
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split(delimiter)
        split_any = split_any or len(fields) > 1
        if has_id:
            ids.append(fields[0].strip())
            fields = fields[1:]
        items = [f.strip() for f in fields if f.strip()]
        if not items:
            raise InputError(f"{where}, line {number}: the record has no items")
        records.append(items)
    if not records:
        raise InputError(f"{where}: no records")
    if not split_any and len(records) > 1:
        shown = "tab" if delimiter == "\t" else repr(delimiter)
        raise InputError(f"{where}: the item delimiter {shown} splits no line: every record would hold one item; "
                         f"choose the delimiter the file uses")
    if has_id and len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise InputError(f"{where}: record id {dup!r} is used twice")
    return Transactions.from_records(records, ids if has_id else None)


def column_transactions(values: Sequence[str], delimiter: str, column: str,
                        where: str = "table") -> Transactions:
    """The set-valued column of a table: items separated by ``delimiter`` inside each cell. An empty
    cell is a record without items (refused, naming the row: the first data row is row 1)."""
    records = []
    split_any = False
    for row, cell in enumerate(values, start=1):
        fields = str(cell).split(delimiter)
        split_any = split_any or len(fields) > 1
        items = [f.strip() for f in fields if f.strip()]
        if not items:
            raise InputError(f"{where}, column {column!r}, row {row}: the cell holds no items")
        records.append(items)
    if records and not split_any and len(records) > 1:
        raise InputError(f"{where}, column {column!r}: the item delimiter {delimiter!r} splits no cell; "
                         f"choose the delimiter the column uses")
    return Transactions.from_records(records)
