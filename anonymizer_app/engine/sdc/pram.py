"""PRAM, the post-randomization method (Gouweleeuw, Kooiman, Willenborg, de Wolf 1998), as sdcMicro's ``pram``.

Each non-missing value of a categorical variable is replaced by a value drawn from its row of a transition
matrix P (P[i, j] = probability that category i is published as category j). The matrix is either given by
the user or built as sdcMicro builds its *invariant* matrix (R/pram.R, calcTransitionMatrix), per variable and
per stratum, from the stratum's category frequencies p:

- ``pds`` = L draws uniform on [pd, 1] (L = number of categories); a first matrix A has diagonal ``pds`` and
  ``(1 - pds[i]) / (L - 1)`` elsewhere in row i;
- ``Q[k, j] = A[j, k] p_j / sum_l p_l A[l, k]`` (Bayes: the chance that a published k came from j);
- ``R = A Q`` leaves the frequencies unchanged in expectation (``p' R = p'``);
- the matrix used is ``alpha R + (1 - alpha) I``.

As in sdcMicro, missing cells are neither counted in p nor changed; the categories are the variable's
distinct non-missing values over the whole table (a category absent from a stratum has p = 0 there); with
strata, PRAM runs independently in each stratum (each combination of the strata variables' values, a
missing value being a value of its own). PRAM gives no k guarantee: its matrices, the share of changed
values and the expected-versus-observed frequencies are reported instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..model.missing import missing_mask
from ..parameters import Parameter
from .base import SdcContext, SdcMethod, SdcOutcome, register

# a row sum within this of 1 is 1 (a matrix typed with 3-4 decimals, e.g. 0.333/0.333/0.334, is exact)
ROW_SUM_TOLERANCE = 1e-9
# a transition matrix is categories x categories: 2,000 categories is a 32 MB matrix per stratum; a column with more
# is an identifier or a number, not a categorical key variable
MAX_CATEGORIES = 2_000
# the matrices shown in the report: the first strata's (a run with thousands of strata would fill the report)
MAX_REPORTED_MATRICES = 200


@dataclass(frozen=True)
class Stratum:
    """One stratum's PRAM: its strata values, the categories' counts before, and the matrix used."""

    values: dict[str, str]  # strata variable -> value ({} without strata)
    counts: np.ndarray  # per category, non-missing records of the stratum before PRAM
    matrix: np.ndarray  # the transition matrix used (L x L)


def categories_of(values: pd.Series, missing: pd.Series) -> list[Any]:
    """The distinct non-missing values in a stable order: numerically when all are numbers (as R orders a
    factor made from codes), else as text."""
    distinct = list(pd.unique(values[~missing]))
    try:
        return sorted(distinct, key=lambda v: float(v))
    except (TypeError, ValueError):
        return sorted(distinct, key=str)


def invariant_matrix(counts: np.ndarray, pd_min: float, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """sdcMicro's invariant transition matrix for a stratum with these category counts (draws L uniforms)."""
    return invariant_from_diagonal(counts, rng.uniform(pd_min, 1.0, len(counts)), alpha)


def invariant_from_diagonal(counts: np.ndarray, diagonal: np.ndarray, alpha: float) -> np.ndarray:
    """The invariant matrix from the first matrix's diagonal (sdcMicro's ``pds``) and the category counts."""
    size = len(counts)
    if size == 1:
        return np.ones((1, 1))  # one category: nothing to change it into
    first = np.repeat(((1.0 - diagonal) / (size - 1))[:, None], size, axis=1)
    np.fill_diagonal(first, diagonal)
    p = counts / counts.sum() if counts.sum() > 0 else np.full(size, 1.0 / size)
    published = p @ first  # s_k = sum_l p_l A[l, k]: the chance that a record is published as k
    with np.errstate(divide="ignore", invalid="ignore"):
        back = np.where(published[:, None] > 0, first.T * p[None, :] / published[:, None], 0.0)  # Q[k, j]
    invariant = first @ back
    return alpha * invariant + (1.0 - alpha) * np.eye(size)


def parse_matrix(spec: object, variable: str, categories: Sequence[Any]) -> np.ndarray:
    """A user's transition matrix for ``variable``: {from value: {to value: probability}} over exactly the
    variable's categories, entries in [0, 1], every row summing to 1."""
    names = [str(c) for c in categories]
    if not isinstance(spec, Mapping):
        raise InputError(f"PRAM matrix for {variable!r}: give it as {{from value: {{to value: probability}}}}")
    rows = {str(k): v for k, v in spec.items()}
    missing_rows = [n for n in names if n not in rows]
    extra_rows = [r for r in rows if r not in names]
    if missing_rows or extra_rows:
        parts = []
        if missing_rows:
            parts.append(f"no row for {', '.join(map(repr, missing_rows[:5]))}")
        if extra_rows:
            parts.append(f"rows for values the column does not hold: {', '.join(map(repr, extra_rows[:5]))}")
        raise InputError(f"PRAM matrix for {variable!r} must be square over the column's values "
                         f"({', '.join(map(repr, names[:10]))}{', ...' if len(names) > 10 else ''}): "
                         f"{'; '.join(parts)}")
    matrix = np.zeros((len(names), len(names)))
    for i, name in enumerate(names):
        row = rows[name]
        if not isinstance(row, Mapping):
            raise InputError(f"PRAM matrix for {variable!r}, row {name!r}: give {{to value: probability}}")
        cells = {str(k): v for k, v in row.items()}
        extra = [c for c in cells if c not in names]
        if extra:
            raise InputError(f"PRAM matrix for {variable!r}, row {name!r}: {', '.join(map(repr, extra[:5]))} "
                             f"is not a value of the column")
        for j, target in enumerate(names):
            value = cells.get(target, 0.0)
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise InputError(f"PRAM matrix for {variable!r}, row {name!r}, column {target!r}: "
                                 f"{value!r} is not a number") from None
            if not 0.0 <= number <= 1.0:
                raise InputError(f"PRAM matrix for {variable!r}, row {name!r}, column {target!r}: "
                                 f"{number:g} is not a probability between 0 and 1")
            matrix[i, j] = number
        total = matrix[i].sum()
        if abs(total - 1.0) > ROW_SUM_TOLERANCE:
            raise InputError(f"PRAM matrix for {variable!r}, row {name!r}: the probabilities sum to {total:.10g}, "
                             f"not 1")
    return matrix


def draw(codes: np.ndarray, matrix: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every record's new category: records of category i draw from row i (category by category, as sdcMicro)."""
    out = codes.copy()
    size = matrix.shape[0]
    for i in range(size):
        rows = np.flatnonzero(codes == i)
        if len(rows):
            out[rows] = rng.choice(size, size=len(rows), p=matrix[i] / matrix[i].sum())
    return out


def pram(frame: pd.DataFrame, variables: Sequence[str], *, pd_min: float = 0.8, alpha: float = 0.5,
         matrices: Mapping[str, object] | None = None, strata: Sequence[str] = (), seed: int = 0,
         progress: Any = None) -> SdcOutcome:
    """PRAM of ``variables`` (user matrices by variable name in ``matrices``; the others get the invariant
    matrix from ``pd_min`` and ``alpha``), within each stratum of ``strata``, drawing from default_rng(seed)."""
    matrices = dict(matrices or {})
    _check(frame, variables, strata, pd_min, alpha, matrices)
    rng = np.random.default_rng(seed)
    out = frame.copy()
    groups = _strata(frame, strata)
    report: dict[str, Any] = {}
    changed: dict[str, int] = {}
    for done, variable in enumerate(variables):
        if progress is not None:
            progress(done / len(variables), f"PRAM of {variable}")
        column = frame[variable]
        missing = missing_mask(column).to_numpy()
        categories = categories_of(column, pd.Series(missing, index=column.index))
        if len(categories) > MAX_CATEGORIES:
            raise InputError(f"PRAM: {variable!r} has {len(categories):,} distinct values, more than "
                             f"{MAX_CATEGORIES:,}; PRAM is for categorical variables (recode it first)")
        code_of = {c: i for i, c in enumerate(categories)}
        codes = np.full(len(column), -1, dtype=np.int64)
        codes[~missing] = [code_of[v] for v in column.to_numpy(dtype=object)[~missing]]
        user = parse_matrix(matrices[variable], variable, categories) if variable in matrices else None
        new_codes = codes.copy()
        used: list[Stratum] = []
        for values, positions in groups:
            stratum_codes = codes[positions]
            present = stratum_codes >= 0
            counts = np.bincount(stratum_codes[present], minlength=len(categories)).astype(float)
            if not present.any():
                continue  # sdcMicro: an all-missing stratum is left as it is (no draws)
            matrix = user if user is not None else invariant_matrix(counts, pd_min, alpha, rng)
            drawn = draw(stratum_codes[present], matrix, rng)
            new_codes[positions[present]] = drawn
            used.append(Stratum(values, counts, matrix))
        values_out = column.to_numpy(dtype=object).copy()
        moved = (new_codes != codes) & ~missing
        values_out[~missing] = [categories[c] for c in new_codes[~missing]]
        out[variable] = pd.Series(values_out, index=column.index, dtype=column.dtype)
        changed[variable] = int(moved.sum())
        report[variable] = _variable_report(categories, codes, new_codes, missing, used, user is not None,
                                            pd_min, alpha)
    if progress is not None:
        progress(1.0, "PRAM done")
    for v in variables:  # sdcMicro's summary: 100 * changed / records, 2 decimals
        report[v]["changed_percent"] = round(100.0 * changed[v] / len(frame), 2) if len(frame) else 0.0
    cells = len(frame) * len(variables)
    figures = {"changed cells": sum(changed.values()),
               "changed share": sum(changed.values()) / cells if cells else 0.0}
    parameters = {"variables": list(variables), "strata": list(strata), "pd": pd_min, "alpha": alpha,
                  "user matrices": sorted(matrices), "seed": seed}
    return SdcOutcome(out, figures=figures, changed_cells=changed, parameters=parameters,
                      details={"pram": report})


def _check(frame: pd.DataFrame, variables: Sequence[str], strata: Sequence[str], pd_min: float, alpha: float,
           matrices: Mapping[str, object]) -> None:
    if not variables:
        raise InputError("PRAM needs at least one categorical variable to change")
    absent = [v for v in list(variables) + list(strata) if v not in frame.columns]
    if absent:
        raise InputError(f"PRAM: no column named {', '.join(map(repr, absent))}")
    both = sorted(set(variables) & set(strata))
    if both:
        raise InputError(f"PRAM: {', '.join(map(repr, both))} cannot be both changed and a strata variable")
    stray = sorted(set(matrices) - set(variables))
    if stray:
        raise InputError(f"PRAM: a matrix is given for {', '.join(map(repr, stray))}, which is not changed")
    if not 0.0 <= pd_min <= 1.0:
        raise InputError(f"PRAM: pd (the least diagonal entry) must be between 0 and 1, got {pd_min:g}")
    if not 0.0 <= alpha <= 1.0:
        raise InputError(f"PRAM: alpha (the amount of perturbation) must be between 0 and 1, got {alpha:g}")


def _strata(frame: pd.DataFrame, strata: Sequence[str]) -> list[tuple[dict[str, str], np.ndarray]]:
    """(strata values, row positions) per stratum, in the order of the values; one stratum without strata."""
    if not strata:
        return [({}, np.arange(len(frame)))]
    keys = frame[list(strata)].astype(str)
    grouped = keys.groupby(list(strata), sort=True, dropna=False).indices
    out = []
    for key, positions in grouped.items():
        key_tuple = key if isinstance(key, tuple) else (key,)
        out.append(({s: str(v) for s, v in zip(strata, key_tuple)}, np.asarray(positions)))
    return out


def _variable_report(categories: list[Any], codes: np.ndarray, new_codes: np.ndarray, missing: np.ndarray,
                     used: list[Stratum], user: bool, pd_min: float, alpha: float) -> dict[str, Any]:
    """The matrices used, the transitions counted, and the invariance check: the frequencies expected after
    PRAM (each stratum's counts times its matrix) against the frequencies observed."""
    size = len(categories)
    names = [str(c) for c in categories]
    before = np.bincount(codes[~missing], minlength=size)
    after = np.bincount(new_codes[~missing], minlength=size)
    expected = sum((s.counts @ s.matrix for s in used), np.zeros(size))
    transitions = np.zeros((size, size), dtype=np.int64)
    np.add.at(transitions, (codes[~missing], new_codes[~missing]), 1)
    return {
        "categories": names,
        "matrix_source": "user" if user else "invariant",
        "pd": None if user else pd_min,
        "alpha": None if user else alpha,
        "matrices": [{"stratum": s.values, "matrix": s.matrix.tolist()} for s in used[:MAX_REPORTED_MATRICES]],
        "strata": len(used),  # strata with a present value (each has its matrix; the first ones are shown)
        "transitions": transitions.tolist(),  # [from][to] record counts
        "missing": int(missing.sum()),
        "changed": int(((new_codes != codes) & ~missing).sum()),
        "frequencies_before": before.tolist(),
        "frequencies_expected": expected.tolist(),
        "frequencies_after": after.tolist(),
    }


def _names(text: object) -> list[str]:
    if text is None:
        return []
    if isinstance(text, str):
        return [p.strip() for p in text.split(",") if p.strip()]
    return [str(p) for p in text]  # type: ignore[attr-defined]


def _matrices(text: object) -> dict[str, object]:
    if text in (None, ""):
        return {}
    if isinstance(text, Mapping):
        return dict(text)
    try:
        parsed = json.loads(str(text))
    except json.JSONDecodeError as exc:
        raise InputError(f"PRAM matrices: not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(parsed, dict):
        raise InputError("PRAM matrices: give {variable: {from value: {to value: probability}}}")
    return parsed


PARAMETERS = (
    Parameter("variables", str, None, "the categorical variables to change, comma-separated (default: the "
              "key variables)"),
    Parameter("strata", str, None, "variables whose value combinations are strata, comma-separated: PRAM runs "
              "within each"),
    Parameter("pd", float, 0.8, "the least diagonal entry of the generated matrix (the chance a value is kept "
              "before the invariant step)", minimum=0.0, maximum=1.0),
    Parameter("alpha", float, 0.5, "the amount of perturbation of the invariant matrix (0: none, 1: all of it)",
              minimum=0.0, maximum=1.0),
    Parameter("matrices", str, None, "user transition matrices as JSON {variable: {from value: {to value: "
              "probability}}}; these variables use them instead of the invariant matrix", label="Matrices"),
)


def apply(frame: pd.DataFrame, context: SdcContext, options: Mapping[str, Any]) -> SdcOutcome:
    variables = _names(options.get("variables")) or list(context.key_variables)
    values = {p.name: p.validate(options[p.name]) for p in PARAMETERS[2:4] if options.get(p.name) is not None}
    return pram(frame, variables, pd_min=values.get("pd", 0.8), alpha=values.get("alpha", 0.5),
                matrices=_matrices(options.get("matrices")), strata=_names(options.get("strata")),
                seed=context.seed, progress=context.progress)


register(SdcMethod(
    name="pram",
    label="PRAM (post-randomization)",
    kind="perturbation",
    summary="Replaces categorical values at random by a transition matrix (user-given or sdcMicro's invariant "
            "one), optionally within strata; no k guarantee: the matrices and changed shares are reported.",
    apply=apply,
    parameters=PARAMETERS,
    guarantee="",
    acts_on="key",
    reference="Gouweleeuw et al. (1998), Post randomisation for statistical disclosure control; sdcMicro pram()",
))
