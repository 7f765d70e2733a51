"""The SDC stage of the pipeline and its gate check: a run's SDC steps (RunSpec.sdc) applied to the published
rows after the recoding, then every recoding-kind step's guarantee recounted from the rows that leave.

sdcMicro's users recode first and then suppress the cells that are still too rare; a run expresses that as an
algorithm (a lattice node, an algorithm's recoding, or the chosen transformation at level 0 with k = 1 when only
the SDC methods should act) followed by its steps, in the order given. Rows published as suppressed ('*' in every
QI) are left as they are. What the gate checks:

- "k-anonymity" (local suppression): every published record's fk, a missing cell matching any value (sdcMicro's
  freqCalc with alpha = 1), is at least the step's k over the key variables;
- "group size" (microaggregation): the method's own recount (SdcMethod.check_published) or, without one, every
  published vector of the step's variables that the step changed occurs at least k times;
- a perturbation (PRAM, noise, top/bottom coding, rank swapping) gives no k guarantee: its parameters and figures
  are reported and the report says so.

A check that fails refuses the whole publication (VerificationError), e.g. when a later step changed a key
variable after local suppression and the rows are no longer k-anonymous.

The run's own models were checked by the gate on the recoded rows; a perturbation that changes a quasi-identifier
or a model's sensitive column afterwards could undo them (PRAM on a QI splits classes). So when one does, every
model of the run is checked again on the rows that leave, values as published, and the publication is refused when
one no longer holds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError, VerificationError
from ..measure.figure_catalogue import SDC_METHOD_FIGURES, sdc_method_figures
from ..model.table import Table
from ..sdc import SdcContext, SdcOutcome
from ..sdc.local_suppression_fk import encode_keys, wildcard_fk
from ..sdc.steps import SdcStep
from .gate import Publication, released_classes
from .result import check_models

CATALOGUED = {source for _, source in SDC_METHOD_FIGURES}
NO_GUARANTEE = "{label} is a perturbation: it gives no k guarantee; its parameters and figures are reported instead."


@dataclass
class AppliedStep:
    """A step as it ran: the method's outcome and the context it ran with (for the gate's recount)."""

    step: SdcStep
    outcome: SdcOutcome
    context: SdcContext


def refuse_unsupported(table: object, steps: Sequence[SdcStep]) -> None:
    """SDC methods run on an in-memory table and count records: a person id is refused by name."""
    if not steps:
        return
    names = ", ".join(s.info.label for s in steps)
    if not isinstance(table, Table):
        raise InputError(f"SDC methods ({names}) run on an in-memory table, not a streamed, transaction or cluster "
                         f"run")
    if table.person is not None:
        raise InputError(f"SDC methods ({names}) count records, not persons: the person id {table.person!r} cannot "
                         f"run with them (give the column another role, or leave the SDC methods out)")


def context_for(table: Table, frame: pd.DataFrame, seed: int,
                progress: Callable[[float, str], None] | None = None) -> SdcContext:
    """The columns' roles as the methods read them: the QIs are the key variables; numeric variables are the
    other published numeric columns (sdcMicro's numVars), weight and household from their roles."""
    weight, household = table.weight, table.household
    others = [c for c in frame.columns if c not in table.qi and c not in (weight, household)]
    numeric = [c for c in others if c in table.types and table.is_numeric(c)]
    context = SdcContext(key_variables=list(table.qi), numeric_variables=numeric, weight=weight,
                         household=household, sensitive=[c for c in table.sensitive if c in frame.columns],
                         seed=seed)
    if progress is not None:
        context.progress = progress
    return context


def apply_steps(publication: Publication, table: Table, steps: Sequence[SdcStep], seed: int,
                progress: Callable[[float, str], None] | None = None) -> list[AppliedStep]:
    """Apply ``steps`` in order to the published rows that are not suppressed; publication.table is replaced."""
    active = ~np.asarray(publication.suppressed, dtype=bool)
    frame = publication.table.loc[active].copy()
    applied = []
    for number, step in enumerate(steps):
        def step_progress(fraction: float, phase: str, number: int = number, label: str = step.info.label) -> None:
            if progress is not None:
                progress((number + fraction) / len(steps), f"{label}: {phase}")
        context = context_for(table, frame, seed, step_progress)
        outcome = step.info.apply(frame, context, dict(step.parameters))
        if list(outcome.frame.columns) != list(frame.columns) or not outcome.frame.index.equals(frame.index):
            raise VerificationError(f"{step.info.label} changed the published table's rows or columns")
        frame = outcome.frame
        applied.append(AppliedStep(step, outcome, context))
    if active.all():
        published = frame
    else:  # the suppressed rows ('*' in every QI) back in their places, untouched
        published = pd.concat([frame, publication.table.loc[~active]]).reindex(publication.table.index)
    publication.table = published
    return applied


def check_guarantee(published: pd.DataFrame, applied: AppliedStep) -> dict[str, Any] | None:
    """The gate's recount of one step's guarantee on the published rows (None for a perturbation)."""
    method = applied.step.info
    if not method.guarantee:
        return None
    if method.check_published is not None:
        return dict(method.check_published(published, applied.outcome, applied.context))
    k = int(applied.outcome.parameters.get("k", applied.step.parameters.get("k", 2)))
    if method.guarantee == "k-anonymity":
        keys = list(applied.context.key_variables)
        # with combs the guarantee is every subset of that many key variables (sdcMicro's kAnon), else all keys
        sizes = [int(c) for c in str(applied.outcome.parameters.get("combs") or "").split(",") if c.strip()]
        subsets = [list(s) for size in sizes for s in combinations(keys, size)] if sizes else [keys]
        smallest, below = None, 0
        for subset in subsets:
            fk = wildcard_fk(encode_keys(published, subset))
            if len(fk):
                smallest = int(fk.min()) if smallest is None else min(smallest, int(fk.min()))
            below = max(below, int((fk < k).sum()))
        return {"guarantee": "k-anonymity", "k": k, "key variables": keys, "subsets checked": len(subsets),
                "smallest fk": smallest, "records below k": below, "holds": below == 0}
    if method.guarantee == "group size":
        variables = applied.outcome.parameters.get("variables") or applied.context.numeric_variables
        variables = [variables] if isinstance(variables, str) else list(variables)
        univariate = applied.outcome.parameters.get("mode") == "univariate"
        sets = [[v] for v in variables] if univariate else [variables]
        smallest, below = None, 0
        for columns in sets:
            vectors = published[columns].dropna()
            if vectors.empty:
                continue
            counts = vectors.value_counts().to_numpy()
            smallest = int(counts.min()) if smallest is None else min(smallest, int(counts.min()))
            below += int((counts < k).sum())
        return {"guarantee": "group size", "k": k, "variables": variables, "smallest group": smallest,
                "groups below k": below, "holds": below == 0}
    raise VerificationError(f"{method.label}: the gate has no check for the guarantee {method.guarantee!r}")


def _plain(value: Any) -> Any:
    """JSON-ready figures; a per-row list (a group id per record) is left out of the report."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if not _per_row(v)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _per_row(value: Any) -> bool:
    return isinstance(value, (list, tuple, np.ndarray, dict)) and len(value) > 200


def check_published(published: pd.DataFrame, applied: Sequence[AppliedStep]) -> dict[str, Any]:
    """The gate over the SDC steps: every guarantee recounted from ``published`` (the rows that leave, suppressed
    rows left out); raises VerificationError when one fails. Returns the report's "sdc" section."""
    entries = []
    for item in applied:
        method = item.step.info
        check = check_guarantee(published, item)
        if check is not None and not check.get("holds", False):
            later = [a.step.info.label for a in applied[applied.index(item) + 1:]
                     if set(a.outcome.changed_cells) & set(item.context.key_variables + item.context.numeric_variables)
                     and any(a.outcome.changed_cells.values())]
            cause = f" ({', '.join(later)} changed its columns afterwards)" if later else ""
            raise VerificationError(f"refusing to publish: {method.label}'s guarantee ({method.guarantee}) does not "
                                    f"hold on the published rows{cause}: {check}")
        entries.append({
            "method": method.name, "label": method.label, "kind": method.kind, "guarantee": method.guarantee,
            "parameters": _plain(dict(item.outcome.parameters) or dict(item.step.parameters)),
            "figures": _plain(dict(item.outcome.figures)),
            # the figures the catalogue names (label, text, help: the same words on the card, the CLI and the API)
            # and the method's other figures as they are
            "figure_rows": _plain(sdc_method_figures(dict(item.outcome.figures))),
            "other_figures": _plain({k: v for k, v in item.outcome.figures.items() if k not in CATALOGUED}),
            "changed_cells": _plain(dict(item.outcome.changed_cells)),
            "details": _plain(dict(item.outcome.details)),
            "check": _plain(check),
            "statement": NO_GUARANTEE.format(label=method.label) if check is None else
            (f"checked on the {len(published)} published rows: k-anonymity with a missing cell matching any value, "
             f"k = {check['k']}" if method.guarantee == "k-anonymity" else
             f"checked on the {len(published)} published rows: groups of at least {check.get('k')} records"),
        })
    seed = applied[0].context.seed if applied else 0
    return {"steps": entries, "rows": int(len(published)), "seed": int(seed),
            "key_variables": list(applied[0].context.key_variables) if applied else []}


def model_columns(models: Sequence[Any], table: Table) -> set[str]:
    """The columns the run's models read: the QIs and each model's sensitive (target) column."""
    read = set(table.qi)
    for model in models:  # a sensitive model is bound to its column by the time the gate sees it
        column = getattr(model, "column", None)
        if isinstance(column, str):
            read.add(column)
    return read


def recheck_models(publication: Publication, table: Table, hierarchies: dict, applied: Sequence[AppliedStep],
                   adversary: str = "class") -> list[str]:
    """The run's models on the published rows after perturbations that changed a column they read (see the module's
    docstring); returns those columns (none: nothing to recheck). Raises VerificationError naming the step and the
    model when one no longer holds."""
    models = list(publication.result.models) if publication.result is not None else []
    read = model_columns(models, table)
    touched: dict[str, list[str]] = {}
    for item in applied:
        if item.step.info.kind != "perturbation":
            continue
        for column, count in item.outcome.changed_cells.items():
            if count and column in read:
                touched.setdefault(column, []).append(item.step.info.label)
    if not touched or not models:
        return []
    rows = np.asarray(publication.rows)
    flags = np.asarray(publication.suppressed, dtype=bool)
    n = table.n
    frame = table.frame.copy()
    for column in touched:  # the published values where they leave, the input's elsewhere (never counted)
        values = frame[column].to_numpy(dtype=object).copy()
        values[rows] = publication.table[column].to_numpy(dtype=object)
        frame[column] = values
    released = np.zeros(n, dtype=bool)
    released[rows[~flags]] = True
    output = pd.DataFrame({c: np.full(n, "", dtype=object) for c in table.qi})
    for c in table.qi:
        cells = output[c].to_numpy(dtype=object)
        cells[rows] = publication.table[c].to_numpy(dtype=object)
        output[c] = cells
    row_class, sizes = released_classes(output, list(table.qi), released)
    published_table = replace(table, frame=frame)
    try:
        check_models(published_table, hierarchies, models, sizes, row_class, adversary)
    except VerificationError as exc:
        steps = sorted({label for labels in touched.values() for label in labels})
        raise VerificationError(f"refusing to publish: {', '.join(steps)} changed {', '.join(sorted(touched))} after "
                                f"the recoding, and on the published rows {exc}") from None
    return sorted(touched)


def run_sdc(publication: Publication, table: Table, steps: Sequence[SdcStep], seed: int,
            progress: Callable[[float, str], None] | None = None, hierarchies: dict | None = None,
            adversary: str = "class") -> dict[str, Any]:
    """Apply the steps to the publication and recount their guarantees from its rows, then the run's models where
    a perturbation changed what they read: the report's section."""
    applied = apply_steps(publication, table, steps, seed, progress)
    active = ~np.asarray(publication.suppressed, dtype=bool)
    section = check_published(publication.table.loc[active], applied)
    rechecked = recheck_models(publication, table, hierarchies or {}, applied, adversary)
    if rechecked:
        section["models_rechecked_on"] = rechecked
    return section
