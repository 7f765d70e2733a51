"""3-itemsets counted item by item: the records holding item a, their pairs of items above a (a sparse
product XᵀX of those records' incidence matrix) give the supports of every 3-itemset {a, b, c}, a < b < c.

Two uses, both without holding the supports of all 3-itemsets at once (tens of millions on 671 users'
liked movies, hundreds of millions of occurrences to sort each round):

- :class:`Violations`: AA's violating 3-itemsets (support below k) in the order a round handles them
  (support ascending, then codes ascending), found lazily while the caller adds rules: an item the caller
  has touched is left out of every later count (a row holding it would be skipped anyway, and leaving an
  item out of the records changes no support of an itemset without it), and an item a found touched is
  never counted again in that round. Rounds that add many rules stop counting most items early.
- :func:`smallest_triple`: the smallest support of any 3-itemset that occurs, and the first such itemset.

Records must be sets with sorted codes (:func:`.itemsets.sorted_sets`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

ROW_BLOCK = 4096  # candidate rows screened at once against the touched items


class Records:
    """The records (CSR) and, per item, the records that hold it (the transposed CSR)."""

    def __init__(self, offsets: np.ndarray, codes: np.ndarray, base: int):
        self.offsets, self.codes, self.base = offsets, codes, base
        record_of = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
        order = np.argsort(codes, kind="stable")  # records ascending within each item
        self.holders = record_of[order]
        self.starts = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=base))]).astype(np.int64)

    def items(self) -> np.ndarray:
        return np.flatnonzero(np.diff(self.starts) > 0)

    def pairs_above(self, a: int, left_out: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(b, c, support) of every pair b < c of items above ``a`` (and not ``left_out``) held together
        with a, in ascending (b, c) order."""
        held = self.holders[self.starts[a]:self.starts[a + 1]]
        lengths = self.offsets[held + 1] - self.offsets[held]
        # every occurrence of those records: position = record start + rank within the record
        local = np.repeat(np.arange(len(held), dtype=np.int64), lengths)
        ends = np.cumsum(lengths)
        within = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) - np.repeat(ends - lengths, lengths)
        codes = self.codes[self.offsets[held][local] + within]
        keep = codes > a
        if left_out is not None:
            keep &= ~left_out[codes]
        empty = np.zeros(0, dtype=np.int64)
        if np.count_nonzero(keep) < 2:
            return empty, empty, empty
        from scipy import sparse  # imported here: it takes a second to load and only m >= 3 needs it

        # the kept codes are still grouped by record and ascending within it: a CSR matrix as it stands
        indptr = np.concatenate([[0], np.cumsum(np.bincount(local[keep], minlength=len(held)))])
        x = sparse.csr_matrix((np.ones(int(indptr[-1]), dtype=np.int64), codes[keep], indptr),
                              shape=(len(held), self.base))
        product = (x.T.tocsr() @ x).tocsr()
        product.sort_indices()
        rows = np.repeat(np.arange(self.base, dtype=np.int64), np.diff(product.indptr))
        cols = product.indices.astype(np.int64)
        upper = cols > rows
        return rows[upper], cols[upper], product.data[upper].astype(np.int64)


class Violations:
    """The 3-itemsets of support 1..k-1, support ascending then codes ascending, as rows [a, b, c]; see
    the module's docstring. ``first()`` is the first row of the round (None when k^3 holds)."""

    def __init__(self, offsets: np.ndarray, codes: np.ndarray, base: int, k: int):
        self.records = Records(offsets, codes, base)
        self.k = k
        self.base = base
        # levels[a, s]: the pairs above a held with a include one of support s (None: not counted yet);
        # counted when a is first reached, with fewer items left out than at any later level
        self.levels: dict[int, np.ndarray] = {}
        self._first: tuple[list[int], int] | None = None
        self._stream: Iterator[tuple[list[int], int]] = self._rows(set())
        self._peeked = False

    def first(self) -> tuple[list[int], int] | None:
        """The first violating row and its support, before any rule of the round."""
        if not self._peeked:
            self._first = next(self._stream, None)
            self._peeked = True
        return self._first

    def rows(self, touched: set[int]) -> Iterator[list[int]]:
        """The rows in order, less those holding an item of ``touched`` when reached (``touched`` only
        grows while the caller adds rules; the caller still checks the rows given)."""
        first = self.first()
        if first is None:
            return
        self._touched = touched
        if touched.isdisjoint(first[0]):
            yield first[0]
        yield from (row for row, _ in self._stream)

    def _rows(self, initial: set[int]) -> Iterator[tuple[list[int], int]]:
        self._touched = initial
        items = self.records.items()
        left_out = np.zeros(self.base, dtype=bool)
        for support in range(1, self.k):
            for a in items.tolist():
                if a in self._touched:
                    continue
                level = self.levels.get(a)
                if level is not None and not level[support]:
                    continue
                ids = np.fromiter(self._touched, dtype=np.int64, count=len(self._touched))
                left_out[ids] = True
                b, c, counts = self.records.pairs_above(a, left_out)
                if level is None:
                    self.levels[a] = np.bincount(np.minimum(counts, self.k), minlength=self.k + 1).astype(bool)
                wanted = counts == support
                b, c = b[wanted], c[wanted]
                for start in range(0, len(b), ROW_BLOCK):
                    if a in self._touched:
                        break
                    ids = np.fromiter(self._touched, dtype=np.int64, count=len(self._touched))
                    left_out[ids] = True
                    bb, cc = b[start:start + ROW_BLOCK], c[start:start + ROW_BLOCK]
                    free = ~(left_out[bb] | left_out[cc])
                    for pair in np.stack([bb[free], cc[free]], axis=1).tolist():
                        if a in self._touched:
                            break
                        if pair[0] in self._touched or pair[1] in self._touched:
                            continue
                        yield [a, pair[0], pair[1]], support


def smallest_triple(offsets: np.ndarray, codes: np.ndarray, base: int) -> tuple[int | None, tuple[int, int, int] | None]:
    """The smallest support of any 3-itemset occurring in the records, and the first (codes ascending)
    3-itemset of that support; (None, None) when no record holds three items."""
    records = Records(offsets, codes, base)
    best: tuple[int | None, tuple[int, int, int] | None] = (None, None)
    for a in records.items().tolist():
        b, c, counts = records.pairs_above(a, None)
        if not len(counts):
            continue
        i = int(np.argmin(counts))
        if best[0] is None or counts[i] < best[0]:
            best = (int(counts[i]), (a, int(b[i]), int(c[i])))
            if best[0] == 1:  # no support is smaller, and later items come after in code order
                break
    return best
