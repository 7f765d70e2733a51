"""Local suppression to k-anonymity (cell level): sdcMicro's heuristic, registered as "local_suppression".

Key cells of records that are too rare are set to missing until every record's fk (a missing cell matching any
value, local_suppression_fk) is at least k. The heuristic follows sdcMicro's localSuppression/kAnon
(R/localSuppression.R ``suppSubset``, src/calcSuppInds.cpp), so its suppression counts equal sdcMicro's:

1. records of a key combination that holds more than k records (missing cells read as the column's value in the
   first row) are set aside beyond its first k, in row order; they are re-attached unchanged at the end (more
   copies never lower anyone's fk);
2. the records with fk < k, rarest first (stable), are taken one by one on the current data: the candidates are
   the records at the smallest positive distance (positions where both are non-missing and differ, at most the
   number of keys); the first key in suppression order where some candidate has another non-missing value is
   suppressed in the record;
3. fk is recounted and step 2 repeats until every fk >= k.

The suppression order is by importance: 1 is the most important variable, suppressed last; by default the
variable with the most categories is suppressed first (ties: the later column first), as sdcMicro does.
``combs`` runs the same on every subset of that many keys (itertools.combinations order, sequentially on the
updated data); ``strata`` runs each stratum on its own. The optimal variant (fewest suppressed cells) is
local_suppression_optimal, chosen with the ``strategy`` parameter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..parameters import Parameter
from .base import SdcContext, SdcMethod, SdcOutcome, register
from .local_suppression_fk import MISSING, MISSING_CELL, encode_keys, row_ids, wildcard_fk


def default_importance(codes: np.ndarray) -> list[int]:
    """sdcMicro's default: ranks of the number of categories, ascending, ties in column order (1 = fewest)."""
    categories = [len(np.unique(col[col != MISSING])) for col in codes.T]
    order = np.argsort(categories, kind="stable")
    ranks = np.empty(len(categories), dtype=np.int64)
    ranks[order] = np.arange(1, len(categories) + 1)
    return [int(r) for r in ranks]


def suppression_order(importance: Sequence[int]) -> list[int]:
    """Column positions, the first to suppress first: the largest importance number first, ties in column order."""
    return [int(j) for j in np.argsort(-np.asarray(importance), kind="stable")]


def _set_aside(codes: np.ndarray, k: int) -> np.ndarray:
    """Which rows take part: all but the rows beyond the first k of a combination with more than k records."""
    filled = codes.copy()
    for j in range(codes.shape[1]):
        # sdcMicro fills a missing cell with unique(column)[1], i.e. the first row's value (missing stays missing)
        filled[filled[:, j] == MISSING, j] = codes[0, j]
    # one id per key combination (hashing, no sort of the rows), then each row's place within its combination
    group, _ = pd.factorize(row_ids(filled - MISSING))  # codes >= 0 for the row ids
    rank = pd.Series(group).groupby(group, sort=False).cumcount().to_numpy()
    return rank < k


def _suppress_subset(codes: np.ndarray, k: int, order: list[int]) -> np.ndarray:
    """sdcMicro's suppSubset on one code matrix (rows × keys of the subset): the matrix with suppressed cells."""
    n, m = codes.shape
    if n < k:
        raise InputError(f"local suppression: k = {k} is larger than the {n} records (of a stratum)")
    result = codes.copy()
    taking_part = np.flatnonzero(_set_aside(codes, k))
    work = codes[taking_part].copy()
    while True:
        fk = wildcard_fk(work)
        problem = np.flatnonzero(fk < k)
        if problem.size == 0:
            break
        problem = problem[np.argsort(fk[problem], kind="stable")]  # risk 1/fk decreasing, ties in row order
        for i in problem:
            row = work[i]
            differs = (work != row) & (work != MISSING) & (row != MISSING)
            distance = differs.sum(axis=1)
            positive = distance[distance > 0]
            nearest = min(m, int(positive.min())) if positive.size else m
            candidates = work[distance == nearest]
            if len(candidates) == 0:
                raise InputError("local suppression: no record to suppress towards (k larger than the records)")
            for col in order:
                if row[col] == MISSING:
                    continue
                values = candidates[:, col]
                if np.any((values != row[col]) & (values != MISSING)):
                    work[i, col] = MISSING
                    break
    result[taking_part] = work
    return result


def suppress_codes(codes: np.ndarray, k: int, importance: Sequence[int] | None = None,
                   combs: Sequence[int] | None = None) -> np.ndarray:
    """Local suppression of a code matrix (-1 missing) to fk >= k: the heuristic, with combs if given."""
    m = codes.shape[1]
    ranks = list(importance) if importance is not None else default_importance(codes)
    if not combs:
        return _suppress_subset(codes, k, suppression_order(ranks))
    result = codes.copy()
    for size in combs:
        if not 1 <= size <= m:
            raise InputError(f"local suppression: each combs value must be between 1 and the {m} key variables, "
                             f"got {size}")
        for subset in combinations(range(m), size):
            cols = list(subset)
            # within a subset the order is the variables' importance, ties in column order (rank(..., "min"))
            sub_order = suppression_order([ranks[c] for c in cols])
            result[:, cols] = _suppress_subset(result[:, cols], k, sub_order)
    return result


@dataclass
class Suppression:
    """A local suppression's outcome: the frame and the new suppressions per key variable."""

    frame: pd.DataFrame
    suppressed: dict[str, int]  # new missing cells per key variable (sdcMicro's supps)
    importance: list[int]

    @property
    def total(self) -> int:  # sdcMicro's newSupps
        return sum(self.suppressed.values())


def parse_importance(spec: str | Sequence[str] | None, keys: list[str]) -> list[int] | None:
    """An importance order as key names, most important first ("sex,age,roof"), as ranks aligned with ``keys``.

    Keys not named come after the named ones, in column order."""
    if spec is None or spec == "":
        return None
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    unknown = [s for s in names if s not in keys]
    if unknown:
        raise InputError(f"importance: {', '.join(map(repr, unknown))} is not a key variable "
                         f"(key variables: {', '.join(keys)})")
    if len(set(names)) != len(names):
        raise InputError("importance: name each key variable at most once")
    ordered = names + [k for k in keys if k not in names]
    return [ordered.index(k) + 1 for k in keys]


def parse_combs(spec: str | Sequence[int] | None) -> list[int] | None:
    """Subset sizes ("3,2"): every subset of that many key variables, in that order."""
    if spec is None or spec == "":
        return None
    items: list[Any] = []
    items.extend(spec.split(",") if isinstance(spec, str) else spec)
    try:
        return [int(str(s).strip()) for s in items]
    except ValueError:
        raise InputError(f"combs must be whole numbers separated by commas, got {spec!r}") from None


def _strata_labels(frame: pd.DataFrame, strata: list[str]) -> np.ndarray:
    missing = [s for s in strata if s not in frame.columns]
    if missing:
        raise InputError(f"strata: no column {missing[0]!r}")
    return pd.factorize(pd.MultiIndex.from_frame(frame[strata].astype(str)))[0]


def suppress_locally(frame: pd.DataFrame, keys: list[str], k: int = 2, importance: Sequence[int] | None = None,
                     combs: Sequence[int] | None = None, strata: list[str] | None = None,
                     strategy: str = "heuristic") -> Suppression:
    """Local suppression of ``frame``'s key cells to k-anonymity (missing as wildcard), per stratum if given."""
    if not keys:
        raise InputError("local suppression needs at least one key variable")
    codes = encode_keys(frame, keys)
    ranks = list(importance) if importance is not None else default_importance(codes)
    if len(ranks) != len(keys) or any(not 1 <= r <= len(keys) for r in ranks):
        raise InputError(f"importance needs one rank between 1 and {len(keys)} per key variable")
    if strategy == "optimal":
        from .local_suppression_optimal import optimal_codes  # scipy only when asked for
        if combs or strata:
            raise InputError("the optimal local suppression takes all key variables at once: no combs or strata")
        result = optimal_codes(codes, k, ranks)
    elif strategy == "heuristic":
        if strata:
            labels = _strata_labels(frame, strata)
            result = codes.copy()
            for label in np.unique(labels):
                rows = np.flatnonzero(labels == label)
                result[rows] = suppress_codes(codes[rows], k, ranks, combs)
        else:
            result = suppress_codes(codes, k, ranks, combs)
    else:
        raise InputError(f"strategy must be heuristic or optimal, got {strategy!r}")
    out = frame.copy()
    suppressed: dict[str, int] = {}
    for j, key in enumerate(keys):
        newly = (result[:, j] == MISSING) & (codes[:, j] != MISSING)
        suppressed[key] = int(newly.sum())
        if newly.any():
            column = out[key]
            if column.dtype == object:  # a text table writes a missing cell as the empty string
                out[key] = column.mask(newly, MISSING_CELL)
                continue
            if pd.api.types.is_integer_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
                column = column.astype(object)
            out[key] = column.mask(newly)
    return Suppression(out, suppressed, ranks)


def _apply(frame: pd.DataFrame, context: SdcContext, params: Mapping[str, Any]) -> SdcOutcome:
    keys = list(context.key_variables)
    k = int(params.get("k", 2))
    strata = [s.strip() for s in str(params.get("strata") or "").split(",") if s.strip()]
    strategy = str(params.get("strategy", "heuristic"))
    context.progress(0.0, f"local suppression ({strategy}) to {k}-anonymity")
    done = suppress_locally(frame, keys, k, parse_importance(params.get("importance"), keys),
                            parse_combs(params.get("combs")), strata, strategy)
    context.progress(1.0, "local suppression done")
    figures = {"suppressed cells": done.total, "k": k}
    parameters = {"k": k, "strategy": strategy,
                  "importance": ",".join(key for _, key in sorted(zip(done.importance, keys)))}
    if params.get("combs"):
        parameters["combs"] = str(params.get("combs"))
    if strata:
        parameters["strata"] = ",".join(strata)
    return SdcOutcome(done.frame, figures, changed_cells=dict(done.suppressed), parameters=parameters,
                      details={"suppressed per key variable": dict(done.suppressed)})


LOCAL_SUPPRESSION = register(SdcMethod(
    name="local_suppression",
    label="Local suppression",
    kind="recoding",
    summary="Sets the fewest key cells to missing (a missing cell matches any value) until every record shares "
            "its key values with at least k-1 others.",
    apply=_apply,
    parameters=(
        Parameter("k", int, 2, "every record's key values shared by at least k records", minimum=2),
        Parameter("strategy", str, "heuristic", "heuristic: sdcMicro's; optimal: the fewest suppressed cells "
                  "(an integer program, small tables only)", choices=("heuristic", "optimal")),
        Parameter("importance", str, "", "key variables, most important (suppressed last) first, separated by "
                  "commas; empty: the variable with the most categories is suppressed first"),
        Parameter("combs", str, "", "subset sizes, e.g. 3,2: k-anonymity on every subset of that many key "
                  "variables in turn (heuristic only)"),
        Parameter("strata", str, "", "columns whose combinations are suppressed each on their own (heuristic "
                  "only)"),
    ),
    guarantee="k-anonymity",
    acts_on="key",
    reference="sdcMicro localSuppression / kAnon (Templ, Kowarik, Meindl 2015)",
))
