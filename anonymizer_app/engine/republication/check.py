"""A release as published rows, and its check against the history from those rows alone.

The published table has one row per published record and one per counterfeit, in the columns
``group``, the QIs (the group's box), the sensitive column and ``counterfeits`` (how many rows of the group
are counterfeits: the paper's count table, repeated on each row of the group). Rows are ordered by group,
then sensitive value: a counterfeit is not told apart by its place, its cells or a column of its own (a
marked counterfeit would tell the attacker which value of the signature is false). Columns that are
neither QIs nor the sensitive column are not published: a counterfeit has no value to show there.

:func:`check_release` is the publishing gate's check: it reads the rows (and, kept inside the product,
the input row of each: -1 for a counterfeit) and refuses the release unless every group is m-unique,
its counterfeit count is its number of counterfeit rows, every real row shows its own sensitive value and
QI cells that generalize its input, and every returning record's group has exactly its signature.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import VerificationError
from .history import Entry, History
from .invariance import Grouping

GROUP = "group"
COUNTERFEITS = "counterfeits"


def release_columns(qi: list[str], sensitive: str) -> list[str]:
    return [GROUP, *qi, sensitive, COUNTERFEITS]


def release_table(grouping: Grouping, values: np.ndarray, qi: list[str], sensitive: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The published rows of a grouping (groups numbered from 1) and the input row of each (-1: counterfeit)."""
    values = np.asarray(values, dtype=object).astype(str)
    records: list[tuple] = []
    for g in range(grouping.n_groups):
        members = [(str(values[r]), int(r)) for r in np.flatnonzero(grouping.group == g)]
        members += [(v, -1) for v in grouping.counterfeits[g]]
        for value, row in sorted(members):
            records.append((g + 1, *grouping.labels[g], value, len(grouping.counterfeits[g]), row))
    columns = release_columns(qi, sensitive)
    frame = pd.DataFrame(records, columns=[*columns, "_row"]) if records else \
        pd.DataFrame({c: pd.Series(dtype=object) for c in [*columns, "_row"]})
    rows = frame.pop("_row").to_numpy(dtype=np.int64)
    for c in qi + [sensitive]:
        frame[c] = frame[c].astype(object)
    frame[GROUP] = frame[GROUP].astype(np.int64)
    frame[COUNTERFEITS] = frame[COUNTERFEITS].astype(np.int64)
    return frame, rows


def check_release(published: pd.DataFrame, rows: np.ndarray, values: np.ndarray, keys: list[str],
                  history: History, m: int, qi: list[str], sensitive: str,
                  check_cells=None) -> History:
    """Refuse (VerificationError) a release that is not m-unique or breaks a returning record's signature;
    return the history it extends. ``values``/``keys``: the input's sensitive value and record key per row;
    ``check_cells(column, cells, input_rows)``: raises when a real row's QI cell does not generalize its input
    (the gate passes the engine's cell check)."""
    expected = release_columns(qi, sensitive)
    if list(published.columns) != expected:
        raise VerificationError(f"m-invariance: published columns {list(published.columns)} differ from {expected}")
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) != len(published):
        raise VerificationError("m-invariance: the published rows and their input rows differ in number")
    values = np.asarray(values, dtype=object).astype(str)
    real = rows >= 0
    if len(np.unique(rows[real])) != int(real.sum()):
        raise VerificationError("m-invariance: an input record is published twice")
    shown = published[sensitive].astype(str).to_numpy()
    wrong = np.flatnonzero(real & (shown != np.where(real, values[np.where(real, rows, 0)], "")))
    if len(wrong):
        i = int(wrong[0])
        raise VerificationError(f"m-invariance: published row {i + 1} shows {shown[i]!r}, its record holds "
                                f"{values[rows[i]]!r}")
    if check_cells is not None and real.any():
        for c in qi:
            check_cells(c, published[c].to_numpy(dtype=object)[real], rows[real])
    groups = published[GROUP].to_numpy(dtype=np.int64)
    counts = published[COUNTERFEITS].to_numpy(dtype=np.int64)
    # one grouping of the rows, then per-group figures as arrays (a release has thousands of groups)
    ids, dense = np.unique(groups, return_inverse=True)
    sizes = np.bincount(dense, minlength=len(ids))
    for c in qi:
        codes = pd.factorize(published[c].astype(str).to_numpy())[0]
        spread = np.zeros(len(ids), dtype=np.int64)
        np.maximum.at(spread, dense, codes)
        low = np.full(len(ids), np.iinfo(np.int64).max)
        np.minimum.at(low, dense, codes)
        if (spread != low).any():
            g = int(ids[np.flatnonzero(spread != low)[0]])
            raise VerificationError(f"m-invariance: group {g} shows more than one QI box ({c!r})")
    small = np.flatnonzero(sizes < m)
    if len(small):
        g = int(ids[small[0]])
        raise VerificationError(f"m-invariance: group {g} has {int(sizes[small[0]])} row(s), fewer than m={m}")
    pairs = np.unique(np.stack([dense, pd.factorize(shown)[0]], axis=1), axis=0)
    distinct = np.bincount(pairs[:, 0], minlength=len(ids))
    repeated = np.flatnonzero(distinct != sizes)
    if len(repeated):
        raise VerificationError(f"m-invariance: group {int(ids[repeated[0]])} holds a sensitive value twice (not "
                                f"{m}-unique)")
    fakes = np.bincount(dense, weights=(~real).astype(float), minlength=len(ids)).astype(np.int64)
    wrong_count = np.flatnonzero(counts != fakes[dense])
    if len(wrong_count):
        i = int(wrong_count[0])
        raise VerificationError(f"m-invariance: group {int(groups[i])} publishes {int(counts[i])} counterfeit(s) but "
                                f"holds {int(fakes[dense[i]])}")
    order = np.argsort(dense, kind="stable")
    bounds = np.r_[0, np.cumsum(sizes)]
    boxes = published[qi].astype(str).to_numpy()
    release = history.releases + 1
    records = dict(history.records)
    for d in range(len(ids)):
        at = order[bounds[d]:bounds[d + 1]]
        signature = tuple(sorted(shown[at]))
        labels = dict(zip(qi, boxes[at[0]].tolist()))
        for r in rows[at][real[at]]:
            key = keys[int(r)]
            old = history.records.get(key)
            if old is not None and old.signature != signature:
                raise VerificationError(
                    f"m-invariance: input row {int(r) + 1} was published with signature {set(old.signature)} in "
                    f"release {old.last} but its group {int(ids[d])} now has {set(signature)}")
            records[key] = Entry(signature, labels, old.first if old else release, release)
    return History(history.m, history.sensitive, list(qi), release, records)
