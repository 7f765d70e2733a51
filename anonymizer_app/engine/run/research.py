"""What the models count when a population table is anonymized and only its research subset is published
(δ-presence, k-map against a population table): docs/definitions.md, "The unit counted: the published record".

The table anonymized is the population; a marker column says which of its rows form the research subset, and
only those rows leave. The unit every model counts is the published record:

- δ-presence alone is a statement about the population: on each class of the generalized population,
  research records / population records;
- k-map against a population table counts, for each class that holds a research record, the population
  records of that class;
- every other model (k, l, t, β, (α,k), δ-disclosure, average risk, ...) is checked on the published
  classes: the research records of each class (a class without one is not published and not checked), their
  sensitive values, and the table distribution of the research subset;
- the suppression budget is a share of the research records, and a suppressed class costs its research
  records (population-only records are never published, so leaving them out costs nothing).

The searches count the same way: the frequency set's count of a tuple is its research records (a 0/1 weight
per row, as ARX's subset), the sensitive domains of the models on the published records weigh each row by its
flag, and the membership domain of δ-presence and k-map counts every population row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..measure.attack import merge_parts, report_part
from ..measure.metrics import cell_loss_figures, class_figures, homogeneity, loss_figures
from ..model.table import group_rows
from ..privacy import parse_marker, research_column, research_models
from ..privacy.distributions import SensitiveDomain, sensitive_domain


def research_flags(frame: pd.DataFrame, models) -> np.ndarray | None:
    """Per row of the population, whether it is in the research subset (it may be published); None without a
    model on a population table (every row may be published)."""
    if not research_models(list(models)):
        return None
    column = research_column(list(models))
    if column is None or column not in frame.columns:
        raise InputError(f"{research_models(list(models))[0].label}: unknown research-subset column {column!r}")
    return parse_marker(frame[column], column)


def on_population(model) -> bool:
    """Does the model count the population (δ-presence, k-map against a population table), not the published
    records?"""
    return getattr(model, "column_source", None) == "research"


@dataclass
class ResearchDomain(SensitiveDomain):
    """A sensitive domain over the population's rows that counts the research records only: its values and
    table distribution are the research subset's, each row weighs its flag (population-only rows weigh 0, their
    code is any valid one)."""

    weights: np.ndarray | None = None  # per population row: 1.0 in the research subset, else 0.0

    def row_weights(self, kept: np.ndarray | None = None) -> np.ndarray | None:
        assert self.weights is not None
        return self.weights if kept is None else self.weights[kept]


def research_domain(make: Callable[[pd.DataFrame], SensitiveDomain], frame: pd.DataFrame,
                    flags: np.ndarray) -> ResearchDomain:
    """The domain ``make`` builds on the research rows of ``frame``, spread over all its rows with weights."""
    rows = np.flatnonzero(flags)
    sub = make(frame.iloc[rows].reset_index(drop=True))
    codes = np.zeros(len(frame), dtype=np.int64)
    codes[rows] = sub.codes
    return ResearchDomain(sub.column, sub.values, codes, sub.table_counts, sub.numeric, sub.hierarchy,
                          sub.leaf_of_value, weights=np.asarray(flags, dtype=np.float64))


def published_classes(sizes: np.ndarray, row_class: np.ndarray, flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The published classes of population classes (row -> class, -1 not released): those holding a research
    record, numbered in the population classes' order; (their research records, row -> published class with -1
    for every row that is not a published research record)."""
    row_class = np.asarray(row_class, dtype=np.int64)
    mine = (row_class >= 0) & np.asarray(flags, dtype=bool)
    research = np.bincount(row_class[mine], minlength=len(sizes)).astype(np.int64)
    shown = research > 0
    number = np.cumsum(shown) - 1
    out = np.full(len(row_class), -1, dtype=np.int64)
    out[mine] = number[row_class[mine]]
    return research[shown], out


@dataclass
class Verdict:
    """One model on the classes it counts: per class whether it fails, the classes' sizes and the counts the
    model's figure is read from."""

    model: Any  # a PrivacyModel
    failing: np.ndarray
    sizes: np.ndarray
    counts: np.ndarray | None
    domain: object


def verdicts(models, sizes: np.ndarray, row_class: np.ndarray, domain_of: Callable[[object], SensitiveDomain],
             flags: np.ndarray | None, research_domain_of: Callable[[object], SensitiveDomain] | None = None
             ) -> Iterator[Verdict]:
    """Every model on the classes it counts (row -> class over the released rows, -1 not released): the given
    classes without a research subset; with one (``flags``), the population's classes for δ-presence and
    k-map, the published classes (research records) for every other model, whose domain is
    ``research_domain_of(model)``."""
    published: tuple[np.ndarray, np.ndarray] | None = None
    for model in models:
        if flags is None or on_population(model):
            these, rows = sizes, row_class
            dom = domain_of(model) if getattr(model, "needs_sensitive", False) else None
        else:
            if published is None:
                published = published_classes(sizes, row_class, flags)
            these, rows = published
            assert research_domain_of is not None
            dom = research_domain_of(model) if getattr(model, "needs_sensitive", False) else None
        if dom is not None:
            counts = dom.from_rows(rows, len(these))
            failing = model.classes_failing(these, counts, dom)
        else:
            counts = None
            failing = model.classes_failing(these)
        yield Verdict(model, np.asarray(failing, dtype=bool), these, counts, dom)


def published_figures(result, table, hierarchies: list, codes: np.ndarray, flags: np.ndarray,
                      attacked: list[str]) -> tuple[dict, dict, dict]:
    """The report's figures of the table published from a population table: the research records only, as the
    search's own metric counts them (its n and leaf counts are the research subset's), definitions.md "The unit
    counted". (metrics, metrics_before, attack) of ``result`` (full-domain, local or multidimensional recoding)
    over the research rows: class figures with n = research records and their suppressed ones; NCP, height and
    non-uniform entropy over their cells (a numeric QI's span, a leaf's share and count taken over the research
    records); homogeneity and the attack report on the published classes with the research subset's table
    distribution; a local recoding's labels ("N distinct value(s) in the output") are set to the published cells'.
    ``hierarchies``/``codes``: the QIs' hierarchies and leaf codes (N x q, table.qi order)."""
    rows = np.flatnonzero(flags)
    n = len(rows)
    k = result.k
    suppressed = np.asarray(result.suppressed, dtype=bool)[rows]
    sizes, published_row = published_classes(result.class_sizes, result.class_of_row, flags)
    row_class = published_row[rows]  # per research record: its published class, -1 when suppressed
    numeric = [table.is_numeric(c) for c in table.qi]
    mine = np.ascontiguousarray(codes[rows])
    metrics = class_figures(sizes, n, int(suppressed.sum()), k)
    if result.transformation is not None:
        levels = [int(result.transformation[c]) for c in table.qi]
        metrics.update(loss_figures(hierarchies, numeric, mine, levels, suppressed))
    else:
        metrics.update(cell_loss_figures(hierarchies, numeric, mine,
                                         [result.output[c].to_numpy()[rows] for c in table.qi], suppressed))
    # the input's research records as they are: classes of their level-0 labels, nothing suppressed
    labels = np.stack([np.asarray(h.maps[0])[mine[:, j]] for j, h in enumerate(hierarchies)], axis=1) \
        if len(hierarchies) else np.zeros((n, 0), dtype=np.int64)
    _, raw_class, raw_sizes = group_rows(labels)
    before = class_figures(raw_sizes, n, 0, k)
    before.update(ncp=0.0, generalization_height=0.0, non_uniform_entropy=0.0)
    if result.sensitive is not None:
        values = table.frame[result.sensitive].iloc[rows]
        metrics.update(homogeneity(row_class, values))
        before.update(homogeneity(raw_class, values))
    frame = table.frame.iloc[rows].reset_index(drop=True)
    attack = {c: merge_parts([report_part(sensitive_domain(frame, c, numeric=table.is_numeric(c)), row_class,
                                          row_ids=rows)])
              for c in attacked}
    if result.transformation is None:  # a local recoding's labels count the published cells
        for c in table.qi:
            shown = result.output[c].to_numpy()[rows][~suppressed]
            result.transformation_labels[c] = (f"{result.recoding} recoding: {pd.Series(shown).nunique()} distinct "
                                               f"value(s) in the output")
    return metrics, before, attack
