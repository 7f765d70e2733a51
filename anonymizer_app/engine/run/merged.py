"""The run's stages over weighted frequency data merged from partitions (a cluster run; an out-of-core run's chunk
summaries): what the merged scans,
the merged frequency sets and the merged published classes give, computed as the single-process stages compute
it. A backend only scans its partitions, writes them and checks each one at the gate; everything it merges goes
through these functions.

1. columns (:func:`plan_columns`) and their figures (:func:`column_figures`, :func:`scanned_hierarchies`,
   :func:`attacked_values`) from the scans;
2. the weighted rows (:func:`weighted_rows`) from the merged frequency sets; the search problem on them
   (:func:`weighted_problem`) and the classes of its result (:func:`result_classes`);
3. the attack report's target classes and their rows (:func:`attack_targets`, :func:`gather_rows`), the check of
   the suppressed records kept as one '*' class (:func:`check_suppressed_group`);
4. the gate on the merged published classes (:func:`gate_classes`);
5. the figures of an out-of-core run's chunk summaries, its classes counted partition by partition on disk and
   its labels chunk by chunk (:func:`counted_figures`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..algorithms.base import AlgorithmInfo, CellRecoding, FullDomainRecoding, Problem, ProgressCallback
from ..errors import InputError, VerificationError
from ..measure.attack import merge_parts
from ..measure.metrics import cell_loss_sums, class_figures_from_histogram, loss_from_sums
from ..model.defaults import default_hierarchy
from ..model.hierarchy import Hierarchy, with_missing
from ..model.missing import MISSING, markers_in_use
from ..model.table import Role, infer_type
from ..privacy import PrivacyModel
from ..privacy.distributions import numeric_order
from .gate import check_merged_classes
from .stages import bind_models, classes_at_levels, search_problem, suppression_budget, weighted_cell_classes
from .weighted import (
    ColumnFigures,
    ColumnPlan,
    CountedClasses,
    CountedLabels,
    PublishedClasses,
    ResultClasses,
    WeightedRows,
    frequency_table,
    merge_combinations,
    merge_first_seen,
    tuple_frequency_set,
    weighted_classes,
    weighted_domains,
)

Combinations = tuple[np.ndarray, np.ndarray, np.ndarray]  # distinct rows of codes, their counts, their first rows


# ---- 1. the columns and what the scans give ----------------------------------------------------------------
def plan_columns(columns: list[str], roles: dict, hierarchies: list[str], sensitive: str | None,
                 models: list[PrivacyModel]) -> ColumnPlan:
    """Each column's role (given, else insensitive), the QIs, the sensitive column (given, or the first of that
    role), the models bound to their columns (stages.bind_models) and the attacked columns (as
    stages.sensitive_columns). ``hierarchies``: the columns given one."""
    unknown = [c for c in list(roles) + list(hierarchies) if c not in columns]
    if unknown:
        raise InputError(f"unknown column {unknown[0]!r}; the table has: {', '.join(columns)}")
    roles = {c: r if isinstance(r, Role) else Role.parse(r) for c, r in roles.items()}
    for c in columns:
        roles.setdefault(c, Role.INSENSITIVE)
    qi = [c for c in columns if roles[c] == Role.QUASI_IDENTIFYING]
    if not qi:
        raise InputError("no quasi-identifier: mark at least one column as quasi-identifying")
    if sensitive is not None and sensitive not in columns:
        raise InputError(f"unknown sensitive column {sensitive!r}")
    role_sensitive = [c for c in columns if roles[c] == Role.SENSITIVE]
    if sensitive is None and role_sensitive:
        sensitive = role_sensitive[0]
    bound = bind_models(models, sensitive, columns, qi)
    attacked = list(role_sensitive)
    if sensitive is not None and sensitive not in attacked:
        attacked.append(sensitive)
    for m in bound:
        if getattr(m, "needs_sensitive", False) and m.target not in attacked:
            attacked.append(m.target)
    return ColumnPlan(columns, roles, qi, sensitive, bound, attacked)


def column_figures(scanned: list[dict[str, tuple[np.ndarray, np.ndarray]]], rows: int, wanted: list[str],
                   types: dict[str, str], na_values: tuple[str, ...]) -> ColumnFigures:
    """The partitions' scans merged (in input order): each wanted column's values (first seen) with their counts,
    and its type (given, or inferred from its values as Table infers it)."""
    if rows == 0:
        raise InputError("the table has no rows")
    values = {c: merge_first_seen([s[c] for s in scanned]) for c in wanted}
    types = dict(types)
    for c in wanted:
        if c not in types:
            types[c] = infer_type(pd.Series(values[c][0], dtype=object), na_values)
    return ColumnFigures(rows, values, types, na_values)


def scanned_hierarchies(qi: list[str], figures: ColumnFigures, given: dict[str, Hierarchy]) -> list[Hierarchy]:
    """Each QI's hierarchy: given, or the default over its values and counts (as Table.hierarchies); a missing
    cell generalizes as the missing leaf, (null) up to the root (hierarchy.with_missing)."""
    out = []
    for column in qi:
        values, counts = figures.values[column]
        h = given.get(column)
        if h is None:  # the default hierarchy reads the column's values with their frequencies
            with markers_in_use((MISSING,)):  # the partitions hold their missing cells as MISSING
                h = default_hierarchy(column, pd.Series(np.repeat(values, counts), dtype=object),
                                      figures.is_numeric(column), figures.types[column])
        out.append(with_missing(h) if MISSING in set(values.tolist()) else h)
    return out


def attacked_values(attacked: list[str], figures: ColumnFigures) -> tuple[list[np.ndarray], list[bool]]:
    """Each attacked column's distinct values (as text, in numeric order when they are numbers), and whether it is
    read as numbers."""
    values, numeric = [], []
    for c in attacked:
        uniq = np.unique(np.asarray(figures.values[c][0], dtype=object).astype(str)).astype(object)
        order = numeric_order(uniq)
        if order is not None:
            uniq = uniq[order]
        values.append(uniq)
        numeric.append(bool(figures.is_numeric(c) and order is not None))
    return values, numeric


# ---- 2. the weighted rows, the search, the result's classes -------------------------------------------------
class MergedCombinations:
    """The partitions' distinct combinations merged exactly as their results arrive (merge_combinations)."""

    def __init__(self, width: int):
        self.width = width
        empty = np.zeros(0, dtype=np.int64)
        self.merged: Combinations = (np.zeros((0, width), dtype=np.int32), empty, empty)

    def add(self, parts: list[Combinations]) -> None:
        self.merged = merge_combinations([self.merged, *parts], self.width)


def weighted_rows(merged: Combinations, records: int, hierarchies: list[Hierarchy], attacked: list[str],
                  values: list[np.ndarray], numeric: list[bool]) -> WeightedRows:
    """The merged frequency sets as weighted rows (each distinct combination of QI leaves and attacked values
    with its records), checked to hold every record of the table."""
    combos, weights, first_rows = merged
    if int(weights.sum()) != records:
        raise VerificationError(f"the frequency set holds {int(weights.sum())} records, the table {records}")
    q = len(hierarchies)
    qi_codes = np.ascontiguousarray(combos[:, :q]).astype(np.int32)
    sens_codes = combos[:, q:].astype(np.int64)
    radices = np.array([len(h.leaves) for h in hierarchies], dtype=np.int64)
    return WeightedRows(qi_codes, sens_codes, weights, first_rows, tuple_frequency_set(qi_codes, weights, radices),
                        weighted_domains(attacked, values, numeric, sens_codes, weights))


def weighted_problem(info: AlgorithmInfo, plan: ColumnPlan, figures: ColumnFigures, hierarchies: list[Hierarchy],
                     rows: WeightedRows, suppression_limit: float, options: dict,
                     progress: ProgressCallback | None, name: str, scratch: str | None = None) -> Problem:
    """The search problem over the weighted rows (stages.search_problem, as a single-process run builds it): the
    rows decoded into their table, the suppression budget, the models' domains."""
    table = frequency_table(plan.columns, plan.qi, hierarchies, rows.qi_codes, plan.attacked,
                            [d.values for d in rows.domains.values()], rows.sens_codes, plan.roles, figures.types,
                            name, figures.na_values, rows.weights)
    budget = suppression_budget(plan.models, suppression_limit, figures.records)
    domains = {m.target: rows.domains[m.target] for m in plan.models if getattr(m, "needs_sensitive", False)}
    return search_problem(info, table, hierarchies, rows.qi_codes, rows.freq, plan.models, suppression_limit,
                          budget, options, progress, domains, scratch=scratch)


def lattice_result(info: AlgorithmInfo, problem: Problem) -> FullDomainRecoding:
    """The algorithm run on the problem; a cluster run writes full-domain recodings of the given hierarchies
    (Mondrian, the one cell recoding it takes, is split over the workers by its backend)."""
    found = info.run(problem)
    if not isinstance(found, FullDomainRecoding) or found.hierarchies is not None:
        raise InputError(f"{info.label} did not return a full-domain recoding of the given hierarchies")
    return found


def result_classes(recoding: FullDomainRecoding | CellRecoding, rows: WeightedRows,
                   hierarchies: list[Hierarchy]) -> ResultClasses:
    """The classes of the result on the weighted rows, numbered as in memory: a full-domain recoding's by
    stages.classes_at_levels, a local/multidimensional one's by stages.weighted_cell_classes."""
    sup = np.asarray(recoding.suppressed, dtype=bool)
    if isinstance(recoding, CellRecoding):
        labels, codes, row_class, sizes = weighted_cell_classes(recoding.cells, sup, rows.first_rows, rows.weights)
        return ResultClasses(recoding, sup, row_class, sizes, (codes, labels))
    _, row_class, sizes = classes_at_levels(rows.freq, hierarchies, list(recoding.levels), sup, rows.weights)
    return ResultClasses(recoding, sup, row_class, sizes, None)


# ---- 3. what the output needs checked and listed -----------------------------------------------------------
def attack_targets(rows: WeightedRows, result: ResultClasses, limit: int) -> list[int]:
    """The classes whose rows the attack report lists: the first ``limit`` homogeneous classes of each attacked
    column (as attack.attack_report picks them)."""
    targets: set[int] = set()
    for domain in rows.domains.values():
        counts = domain.from_rows(result.row_class, len(result.sizes))
        targets.update(int(x) for x in np.flatnonzero((counts > 0).sum(axis=1) == 1)[:limit])
    return sorted(targets)


def gather_rows(found: list[dict[int, list[int]]], targets: list[int], limit: int) -> dict[int, list[int]]:
    """Each target class's first ``limit`` input rows, from the partitions' finds in input order (``found``: per
    partition, target index -> its rows there)."""
    out: dict[int, list[int]] = {}
    for part in found:
        for t, rows in part.items():
            have = out.setdefault(targets[t], [])
            have.extend(rows[:max(0, limit - len(have))])
    return out


def check_merged(models: list[PrivacyModel], rows: WeightedRows, sizes: np.ndarray, row_class: np.ndarray,
                 codes: np.ndarray, weights: np.ndarray) -> None:
    """The gate's model checks (gate.check_merged_classes) on weighted rows (row -> class, -1 not released;
    ``codes``: per row a value code per attacked column)."""
    check_merged_classes(models, sizes, row_class, lambda m: rows.domain_over(m.target, codes, weights))


def check_suppressed_group(models: list[PrivacyModel], rows: WeightedRows, result: ResultClasses) -> None:
    """gate._check_suppressed_group on the weighted rows: the suppressed records published as '*' rows form one
    class, which must satisfy every model."""
    row_class = np.where(result.suppressed, 0, -1).astype(np.int64)
    sizes = np.array([result.suppressed_records(rows.weights)], dtype=np.int64)
    try:
        check_merged(models, rows, sizes, row_class, rows.sens_codes, rows.weights)
    except VerificationError as exc:
        reason = str(exc).split(" does not hold")[0]
        raise InputError(
            f"the {int(sizes[0])} suppressed record(s) cannot be published as '*' rows: together they "
            f"break {reason}, so their sensitive values would be disclosed; publish without them (the "
            f"default) instead") from None


# ---- 4. the gate on the merged published classes -------------------------------------------------------------
def gate_classes(models: list[PrivacyModel], rows: WeightedRows, result: ResultClasses, keep_suppressed: bool,
                 published: Combinations, counted: tuple[int, int],
                 cells: list[dict[str, tuple[np.ndarray, np.ndarray]]], qi: list[str]) -> PublishedClasses:
    """The published partitions' figures merged (``published``: their distinct (QI cells, attacked values)
    combinations; ``counted``: the rows published and the '*' rows among them; ``cells``: per partition in input
    order, each QI's published values with counts), checked: every record to publish published, and every model
    holding on the classes an attacker sees (identical published QI cells) over all partitions."""
    combos, counts, _ = published
    records, stars = counted
    expected = int(rows.weights.sum()) - (0 if keep_suppressed else result.suppressed_records(rows.weights))
    if records != expected or int(counts.sum()) != expected:
        raise VerificationError(f"{records} rows were published, {expected} were to be")
    q = len(qi)
    class_of, sizes = weighted_classes(combos[:, :q], counts)
    codes = combos[:, q:].astype(np.int64)
    check_merged(models, rows, sizes, class_of, codes, counts)
    values = {c: merge_first_seen([part[c] for part in cells]) for c in qi}
    return PublishedClasses(records, stars, sizes, class_of, codes, counts, values)


# ---- 5. the figures of an out-of-core run's chunk summaries -------------------------------------------------------
def counted_figures(hierarchies: list[Hierarchy], numeric: list[bool], k: int, records: int, before: CountedClasses,
                    after: CountedClasses, labels: CountedLabels, attacked: list[str],
                    sensitive: str | None) -> tuple[dict, dict, dict]:
    """The figures after and before (the classes' from their size histograms, the cell loss from each QI's
    (label, leaf) pairs: additive, so counted chunk by chunk) and the attack report per attacked column (its
    partitions' parts merged); nothing is suppressed. Returns (metrics, metrics_before, attack)."""
    metrics = class_figures_from_histogram(after.size, after.count, records, 0, k)
    sums = np.zeros(3)
    for j, h in enumerate(hierarchies):
        keys, counts = labels.pairs[j]
        sums += cell_loss_sums(h, numeric[j], labels.leaf_counts[j], labels.labels[j], keys // len(h.leaves),
                               keys % len(h.leaves), counts, np.zeros(0, dtype=np.int64))
    metrics.update(loss_from_sums(sums, records, len(hierarchies)))
    metrics_before = class_figures_from_histogram(before.size, before.count, records, 0, k)
    metrics_before.update(ncp=0.0, generalization_height=0.0, non_uniform_entropy=0.0)
    attack = {c: merge_parts(p) for c, p in zip(attacked, after.attack)}
    if sensitive is not None:  # the homogeneity column is the first attacked one, the only one counted before
        raw_attack = merge_parts(before.attack[0])
        metrics_before.update(homogeneous_classes=raw_attack["homogeneous_classes"],
                              homogeneous_records=raw_attack["records_in_homogeneous_classes"])
        metrics.update(homogeneous_classes=attack[sensitive]["homogeneous_classes"],
                       homogeneous_records=attack[sensitive]["records_in_homogeneous_classes"])
    return metrics, metrics_before, attack
