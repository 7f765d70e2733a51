"""Microaggregation of numeric variables (sdcMicro's ``microaggregation``): records are put in groups of at
least k and each value is replaced by its group's mean (or median), so every group of at least k records
shares one value vector. The gate re-checks that from the published rows with ``recount_groups``.

* multivariate: all chosen variables grouped together — MDAV with fixed k exactly as sdcMicro groups
  (microaggregation_mdav), V-MDAV with variable group sizes k..2k−1 (microaggregation_vmdav), or, for very
  large tables, MDAV within sorted blocks (faster, not sdcMicro's grouping);
* univariate: each variable on its own — sdcMicro's ``mafast``/``onedims`` grouping for MDAV (sorted values
  in consecutive groups of k), or V-MDAV on the one variable.

The information loss is reported as sdcMicro's dUtility reports it (IL1s, IL1, the eigenvalue measure;
microaggregation_loss).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..model.missing import missing_mask
from ..parameters import Parameter
from .base import SdcContext, SdcMethod, SdcOutcome, register
from .local_suppression_fk import wildcard_fk
from .microaggregation_loss import utility_figures
from .microaggregation_mdav import Grouping, blocked_mdav_groups, group_means, mdav_groups
from .microaggregation_univariate import univariate_groups, univariate_values
from .microaggregation_vmdav import vmdav_groups

GROUPINGS = ("mdav", "vmdav", "mdav_blocked")
MODES = ("multivariate", "univariate")
MEASURES = ("mean", "median")


def numeric_values(frame: pd.DataFrame, variables: Sequence[str]) -> np.ndarray:
    """The chosen columns as an n × p float matrix; a missing cell (NaN, None or the product's missing marker,
    engine/model/missing.py) is NaN; a value that is not a number is refused by name."""
    if not variables:
        raise InputError("this method needs at least one numeric variable")
    unknown = [v for v in variables if v not in frame.columns]
    if unknown:
        raise InputError(f"unknown column(s): {', '.join(unknown)}")
    columns = []
    for v in variables:
        column = frame[v]
        missing = missing_mask(column)
        numbers = pd.to_numeric(column.where(~missing), errors="coerce")
        bad = numbers.isna() & ~missing & column.notna()
        if bad.any():
            at = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"column {v!r} is not numeric (row {at + 1} holds {column.iloc[at]!r})")
        columns.append(numbers.to_numpy(dtype=float))
    return np.column_stack(columns)


def write_back(original: pd.Series, values: np.ndarray) -> pd.Series:
    """A numeric column stays numeric; a text column gets the numbers as shortest round-trip text and its missing
    cells back as they were."""
    if pd.api.types.is_numeric_dtype(original.dtype):
        return pd.Series(values, index=original.index)
    text = [original.iloc[i] if np.isnan(v) else repr(float(v)) for i, v in enumerate(values)]
    return pd.Series(text, index=original.index, dtype=object)


def _medians(x: np.ndarray, grouping: Grouping) -> np.ndarray:
    result = np.full(x.shape, np.nan)
    for rows in grouping.members:
        with np.errstate(all="ignore"):
            result[rows] = np.nanmedian(x[rows], axis=0) if rows.size else np.nan
    result[np.isnan(x)] = np.nan
    return result


def microaggregate(frame: pd.DataFrame, variables: Sequence[str], *, k: int = 3, grouping: str = "mdav",
                   mode: str = "multivariate", measure: str = "mean", gamma: float = 0.2, block: int = 5000,
                   context: SdcContext | None = None) -> SdcOutcome:
    progress = context.progress if context is not None else (lambda fraction, phase: None)
    if grouping not in GROUPINGS or mode not in MODES or measure not in MEASURES:
        raise InputError(f"unknown microaggregation choice: grouping {grouping!r}, mode {mode!r}, "
                         f"measure {measure!r}")
    x = numeric_values(frame, variables)
    n = x.shape[0]
    present = (~np.isnan(x)).sum(axis=0)
    if n and int(present.min()) < k and int(present.min()) > 0:
        raise InputError(f"a chosen variable has only {int(present.min())} values, fewer than k = {k}")
    xm = np.full(x.shape, np.nan)
    group_ids: dict[str, list[int]] = {}
    sizes: list[int] = []
    if mode == "multivariate":
        if grouping == "mdav":
            groups = mdav_groups(x, k, progress)
        elif grouping == "vmdav":
            groups = vmdav_groups(x, k, gamma, progress)
        else:
            groups = blocked_mdav_groups(x, k, block, progress)
        xm = group_means(x, groups) if measure == "mean" else _medians(x, groups)
        group_ids["all"] = groups.group_of_row.tolist()
        sizes = groups.sizes.tolist()
    else:
        for j, v in enumerate(variables):
            progress(j / len(variables), f"grouping {v}")
            column = x[:, j]
            if grouping == "vmdav":
                # the present values only: a missing cell stays missing and counts in no group
                present_rows = np.flatnonzero(~np.isnan(column))
                inner = vmdav_groups(column[present_rows, None], k, gamma)
                group_of_row = np.full(n, -1, dtype=np.int64)
                group_of_row[present_rows] = inner.group_of_row
                groups = Grouping(group_of_row, [present_rows[g] for g in inner.members])
                one = group_means(column[:, None], groups)[:, 0] if measure == "mean" else \
                    _medians(column[:, None], groups)[:, 0]
            else:
                groups = univariate_groups(column, k)
                one = univariate_values(column, groups, measure)
            xm[:, j] = one
            group_ids[v] = groups.group_of_row.tolist()
            sizes.extend(groups.sizes.tolist())
    progress(1.0, "microaggregation done")
    out = frame.copy()
    changed: dict[str, int] = {}
    for j, v in enumerate(variables):
        out[v] = write_back(frame[v], xm[:, j])
        differs = ~((x[:, j] == xm[:, j]) | (np.isnan(x[:, j]) & np.isnan(xm[:, j])))
        changed[v] = int(differs.sum())
    figures: dict[str, Any] = dict(utility_figures(x, xm))
    figures["groups"] = len(sizes)
    figures["smallest group"] = int(min(sizes)) if sizes else 0
    figures["largest group"] = int(max(sizes)) if sizes else 0
    parameters = {"variables": list(variables), "k": k, "grouping": grouping, "mode": mode, "measure": measure}
    if grouping == "vmdav":
        parameters["gamma"] = gamma
    if grouping == "mdav_blocked":
        parameters["block"] = block
    details = {"group of row": group_ids,
               # sdcMicro's MDAV always takes the mean; its univariate mafast takes the mean or the median
               "exact sdcMicro grouping": grouping == "mdav" and (mode == "univariate" or measure == "mean")}
    return SdcOutcome(out, figures=figures, changed_cells=changed, parameters=parameters, details=details)


def recount_groups(published: pd.DataFrame, variables: Sequence[str], group_of_row: Mapping[str, Sequence[int]],
                   k: int) -> dict[str, Any]:
    """The "group size" guarantee recounted from the published rows: every group (by the recorded ids: "all"
    for the variables together, else one id list per variable) has at least k rows, and its rows carry one
    value per variable (missing cells aside). Returns the smallest group, the groups below k and the rows whose
    value differs from their group's."""
    x = numeric_values(published, variables)
    smallest = None
    below = 0
    mismatched = 0
    for key, ids in group_of_row.items():
        cols = list(range(len(variables))) if key == "all" else [list(variables).index(key)]
        gid = np.asarray(ids, dtype=np.int64)
        if gid.shape[0] != x.shape[0]:
            raise InputError("the recorded group ids do not match the published rows")
        grouped = gid >= 0
        if not grouped.any():
            continue
        counts = np.bincount(gid[grouped])
        counts = counts[counts > 0]
        smallest = int(counts.min()) if smallest is None else min(smallest, int(counts.min()))
        below += int((counts < k).sum())
        for j in cols:
            column = x[grouped, j]
            frame = pd.DataFrame({"g": gid[grouped], "v": column})
            first = frame.dropna().groupby("g")["v"].transform("first")
            values = frame.dropna()["v"]
            mismatched += int((values != first).sum())
    return {"smallest group": smallest, "groups below k": below, "rows off their group's value": mismatched,
            "holds": below == 0 and mismatched == 0}


def check_published(published: pd.DataFrame, outcome: SdcOutcome, context: SdcContext) -> dict[str, Any]:
    """The gate's recount of "group size" from the published rows alone: together (multivariate), every record's
    vector of the variables matches at least k records' vectors, a missing cell matching any value (a record whose
    cell was missing before microaggregation stays missing in a group of k); each variable alone (univariate),
    every present value occurs at least k times. The group ids the method recorded are rechecked too (their rows
    carry one value per variable)."""
    parameters = outcome.parameters
    variables = list(parameters.get("variables") or context.numeric_variables)
    k = int(parameters.get("k", 3))
    x = numeric_values(published, variables)
    if parameters.get("mode") == "univariate":
        counts = []
        for j in range(x.shape[1]):
            present = x[:, j][~np.isnan(x[:, j])]
            if present.size:
                counts.append(np.unique(present, return_counts=True)[1])
        sizes = np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64)
        smallest = int(sizes.min()) if sizes.size else None
        below = int((sizes < k).sum())
    else:
        codes = np.column_stack([pd.factorize(x[:, j], use_na_sentinel=True)[0] for j in range(x.shape[1])])
        fk = wildcard_fk(codes.astype(np.int64))
        smallest = int(fk.min()) if fk.size else None
        below = int((fk < k).sum())
    ids = outcome.details.get("group of row") or {}
    by_ids = recount_groups(published, variables, ids, k) if ids else None
    holds = below == 0 and (by_ids is None or bool(by_ids["holds"]))
    result: dict[str, Any] = {"guarantee": "group size", "k": k, "variables": variables, "smallest group": smallest,
                              "records below k": below, "holds": holds}
    if by_ids is not None:
        result["rows off their group's value"] = by_ids["rows off their group's value"]
    return result


PARAMETERS = (
    Parameter("variables", str, None, "the numeric variables, comma-separated (default: the numeric key "
              "variables)"),
    Parameter("k", int, 3, "the smallest group size (sdcMicro's aggr)", minimum=2),
    Parameter("grouping", str, "mdav", "mdav (fixed group size k, sdcMicro's MDAV), vmdav (variable group "
              "sizes k to 2k−1) or mdav_blocked (MDAV within sorted blocks: faster for millions of rows, not "
              "sdcMicro's grouping)", choices=GROUPINGS),
    Parameter("mode", str, "multivariate", "multivariate (the variables grouped together) or univariate (each "
              "variable on its own)", choices=MODES),
    Parameter("measure", str, "mean", "the group's value: mean or median", choices=MEASURES),
    Parameter("gamma", float, 0.2, "V-MDAV's γ: how readily a group grows past k (0.2 scattered, 1.1 "
              "clustered data)", above=0.0),
    Parameter("block", int, 5000, "rows per block for mdav_blocked", minimum=4),
)


def apply(frame: pd.DataFrame, context: SdcContext, options: Mapping[str, Any]) -> SdcOutcome:
    text = options.get("variables")
    variables = ([p.strip() for p in str(text).split(",") if p.strip()] if text
                 else list(context.numeric_variables))
    values = {p.name: p.validate(options[p.name]) for p in PARAMETERS[1:] if options.get(p.name) is not None}
    return microaggregate(frame, variables, k=values.get("k", 3), grouping=values.get("grouping", "mdav"),
                          mode=values.get("mode", "multivariate"), measure=values.get("measure", "mean"),
                          gamma=values.get("gamma", 0.2), block=values.get("block", 5000), context=context)


register(SdcMethod(
    name="microaggregation",
    label="Microaggregation",
    kind="recoding",
    summary="Groups records in groups of at least k by their numeric variables (MDAV as sdcMicro, V-MDAV with "
            "variable group sizes, together or each variable on its own) and publishes each group's mean or "
            "median; IL1s and the eigenvalue loss are reported.",
    apply=apply,
    parameters=PARAMETERS,
    guarantee="group size",
    acts_on="numeric",
    check_published=check_published,
    reference="Domingo-Ferrer & Mateo-Sanz (2002); Solanas & Martínez-Ballesté (2006) V-MDAV; sdcMicro "
              "microaggregation(), mafast(), dUtility()",
))
