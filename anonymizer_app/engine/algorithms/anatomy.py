"""Anatomy (Xiao & Tao, VLDB 2006; seed 003 §2.5.5): l-diverse groups without generalizing the QIs.

The records are bucketed by sensitive value; while at least L buckets are non-empty, a group takes
one record from each of the L largest buckets; each residual record then joins a group that does
not hold its value yet (the one with the fewest records, ties to the lowest id), or is suppressed
when every group holds it. L = max(l, k): every group holds >= L records with pairwise distinct
values, so it is distinct and entropy L-diverse and an attacker's belief in a value is <= 1/L.

Published as two tables (a :class:`~..result.Result` with ``recoding="anatomy"``):
- QIT: the input in its order without identifying columns and without the sensitive column, the QIs
  as they are, plus a column ``group`` (the group id; suppressed rows read ``*`` in every QI and -1);
- ST: one row per (group, sensitive value) with its count.
``Result.output`` is the QIT, ``Result.published = {"qit": ..., "st": ...}``; ``verify()`` rechecks the
QIT against the input, the ST counts against the input's sensitive values of each group, the
suppression limit, and every model on the groups from the ST counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError, UnsatisfiableError
from ..model.hierarchy import ROOT
from ..privacy import DistinctLDiversity, EntropyLDiversity
from .base import AlgorithmInfo, Problem, register

GROUP = "group"


@dataclass
class AnatomyRecoding:
    group: np.ndarray  # row -> group id, -1 suppressed
    suppressed: np.ndarray
    column: str  # the sensitive column
    steps: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    recoding: str = "anatomy"


def anatomy(problem: Problem) -> AnatomyRecoding:
    ls, columns = [], set()
    for m in problem.models:
        if isinstance(m, DistinctLDiversity):
            ls.append(int(m.l))
        elif isinstance(m, EntropyLDiversity):
            ls.append(int(math.ceil(m.l - 1e-9)))
        if getattr(m, "needs_sensitive", False):
            columns.add(m.target)
    if not ls:
        raise InputError("Anatomy needs distinct or entropy l-diversity (it publishes l-diverse groups)")
    if len(columns) != 1:
        raise InputError("Anatomy protects one sensitive column; give its l-diversity models the same column")
    column = columns.pop()
    k = max((int(getattr(m, "k", 1)) for m in problem.models), default=1)
    L = max(max(ls), k, 1)
    dom = problem.domain(column)
    n = problem.table.n
    rng = np.random.default_rng(int(problem.options.get("seed", 0)))
    order = rng.permutation(n)
    buckets = [list(order[dom.codes[order] == v]) for v in range(dom.m)]
    group = np.full(n, -1, dtype=np.int64)
    n_groups = 0
    remaining = np.array([len(b) for b in buckets], dtype=np.int64)
    while int((remaining > 0).sum()) >= L:
        top = np.argsort(-remaining, kind="stable")[:L]
        for v in top:
            group[buckets[v].pop()] = n_groups
            remaining[v] -= 1
        n_groups += 1
        if n_groups % 1000 == 0:
            problem.report(1 - remaining.sum() / max(n, 1), f"Anatomy: {n_groups} group(s)")
    residual = [r for b in buckets for r in b]
    sizes = np.bincount(group[group >= 0], minlength=n_groups).astype(np.int64)
    has = np.zeros((n_groups, dom.m), dtype=bool)
    has[group[group >= 0], dom.codes[group >= 0]] = True
    for r in residual:
        free = np.flatnonzero(~has[:, dom.codes[r]])
        if len(free):
            g = int(free[np.argmin(sizes[free])])
            group[r] = g
            sizes[g] += 1
            has[g, dom.codes[r]] = True
    suppressed = group < 0
    if int(suppressed.sum()) > problem.budget:
        raise UnsatisfiableError(
            f"Anatomy leaves {int(suppressed.sum())} record(s) without a group of {L} distinct values (a value is too "
            f"frequent for l={L}), more than the suppression limit allows ({problem.budget})")
    problem.report(1.0, f"Anatomy done: {n_groups} group(s)")
    info = {"algorithm": "anatomy", "l": L, "groups": n_groups, "residual_records": len(residual),
            "sensitive": column}
    return AnatomyRecoding(group, suppressed, column, [], [], info)


def published_tables(table, group: np.ndarray, column: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(QIT, ST) of an Anatomy grouping."""
    keep = [c for c in table.frame.columns if c not in table.identifying and c != column]
    qit = table.frame[keep].copy()
    sup = group < 0
    for c in table.qi:
        cells = qit[c].to_numpy(dtype=object).copy()
        cells[sup] = ROOT
        qit[c] = cells
    qit[GROUP] = group
    kept = ~sup
    st = (pd.DataFrame({GROUP: group[kept], column: table.frame[column].astype(str).to_numpy()[kept]})
          .groupby([GROUP, column], sort=True).size().rename("count").reset_index())
    return qit, st


def assemble_anatomy(table, recoding: AnatomyRecoding, models, suppression_limit, sensitive):
    from ..measure.metrics import class_figures
    from ..run.result import Result

    qit, st = published_tables(table, recoding.group, recoding.column)
    kept = recoding.group >= 0
    sizes = np.bincount(recoding.group[kept]).astype(np.int64) if kept.any() else np.zeros(0, np.int64)
    k = max((getattr(m, "k", 1) for m in models), default=1)
    metrics = class_figures(sizes, table.n, int(recoding.suppressed.sum()), k)
    metrics["groups"] = int(len(sizes))
    metrics["ncp"] = 0.0  # QIs are published unchanged
    return Result(
        algorithm="anatomy", qi=list(table.qi), models=models, suppression_limit=suppression_limit,
        output=qit, suppressed=recoding.suppressed, class_of_row=recoding.group, class_sizes=sizes,
        metrics=metrics, transformation=None,
        transformation_labels={c: "published unchanged (Anatomy)" for c in table.qi},
        sensitive=recoding.column or sensitive, notes=list(recoding.notes), recoding="anatomy",
        published={"qit": qit, "st": st},
    )


register(
    AlgorithmInfo(
        name="anatomy",
        label="Anatomy",
        summary="Publish the QIs unchanged with a group id (QIT) and the sensitive values per group with "
        "counts (ST), groups l-diverse with distinct values (Xiao & Tao 2006).",
        run=anatomy,
        honours=("k-anonymity", "distinct-l-diversity", "entropy-l-diversity"),
        recoding="anatomy",
        reference="X. Xiao, Y. Tao, Anatomy: simple and effective privacy preservation, VLDB 2006",
    )
)
