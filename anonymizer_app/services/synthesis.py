"""Synthetic data (engine.synthesis) as a job of kind "synthesis": a table of made-up rows with the dataset's
chosen columns, drawn by a synthesizer of the registry, on a worker with progress and cancel (never in a
request), stored like a run's published rows (so the downloads and the export formats read it) with its report
("synthesis": the method, the guarantee in words, ε, δ and the budget split, the synthetic figures).

The ε ledger: a differentially private synthesizer (Synthesizer.dp) spends its ε (and δ, recorded) from the
dataset's ledger (services/privacy_ledger.py, shared with the DP page and SafePub) when the job is created, in
the same transaction, and is refused before anything is queued when the budget would be exceeded. As for a
SafePub run, a synthesis that then fails or is cancelled keeps its entry (the worker may already have read the
data: the safe side). The CART baseline gives no formal guarantee and spends nothing.

The figures are engine.measure.synthetic_figures' (1-/2-way TVD, exact copies, exact copies of a record with a
rare QI combination, flagged, and the membership-inference AUC), flattened to the figure catalogue's keys. For
the membership test a share of the rows (``holdout``, default 20%, drawn with the seed) is held out of the
synthesis: the synthesizer reads the other rows only, and the figures compare the synthetic rows with those. The
figures keep the draw and a digest of the held-out rows ("holdout"): the models trained on the synthetic set
(services.synthetic_utility) are tested on those rows, drawn again.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from django.db import transaction

from ..engine import Cancelled, InputError, Role
from ..engine.measure.figure_catalogue import FIGURES, format_kind
from ..engine.measure.synthetic_figures import synthetic_figures
from ..engine.synthesis import (
    SYNTHESIZERS,
    NumericBins,
    SynthesisCancelled,
    SynthesisContext,
    get_synthesizer,
)
from ..engine.synthesis import holdout as held_out
from ..engine.synthesis.base import ColumnKind
from ..models import Dataset, Job, Result
from . import datasets, privacy_ledger, results, storage, synthesis_gate
from .job_support import Progress, register

SYNTHESIS = "synthesis"  # Job.algorithm prefix: "synthesis:<method>"
NUMERIC_TYPES = ("integer", "decimal")
RARE_BELOW = 5  # an original QI combination shared by fewer rows than this is rare
MAX_PREVIEW = 20
DEFAULT_DELTA = 1e-9
# the share of rows held out of the synthesis, unseen by it, for the membership-inference test
DEFAULT_HOLDOUT = 0.2


def synthesizable_columns(dataset: Dataset) -> list[dict]:
    """The dataset's columns a synthesizer may draw: all but the direct identifiers and person ids, with their
    type and whether a hierarchy is bound."""
    return [{"name": c.name, "type": c.type, "numeric": c.type in NUMERIC_TYPES, "hierarchy": bool(c.hierarchy_id),
             "role": c.role}
            for c in dataset.columns.all() if c.role not in (Role.IDENTIFYING.value, Role.PERSON.value)]


def _number(data: dict, key: str, kind, default):
    value = data.get(key)
    if value is None or value == "":
        return default
    try:
        out = kind(value)
    except (TypeError, ValueError):
        raise InputError(f"{key}: must be a number, got {value!r}") from None
    if isinstance(out, float) and not math.isfinite(out):
        raise InputError(f"{key}: must be a finite number, got {value!r}")
    return out


def build_spec(dataset: Dataset, data: dict) -> dict:
    """The job's synthesis spec from form, API or policy values, checked: InputError names the field at fault.
    ``bounds``: {column: [lower, upper]} or {column: [lower, upper, bins]} for numeric columns without a
    hierarchy."""
    method = str(data.get("method") or "").strip()
    synthesizer = get_synthesizer(method)
    allowed = synthesizable_columns(dataset)
    names = [c["name"] for c in allowed]
    chosen = data.get("columns") or names
    if isinstance(chosen, str):
        chosen = [c.strip() for c in chosen.split(",") if c.strip()]
    chosen = [str(c) for c in chosen]
    for name in chosen:
        if name not in names:
            raise InputError(f"columns: {name!r} is not a column that can be synthesized (identifiers are left "
                             f"out); choose from {', '.join(names)}")
    if not chosen:
        raise InputError("columns: choose at least one column")
    epsilon = _number(data, "epsilon", float, 1.0)
    delta = _number(data, "delta", float, DEFAULT_DELTA)
    if synthesizer.dp:
        if not epsilon > 0:
            raise InputError(f"epsilon: must be above 0, got {epsilon:g}")
        if not 0 < delta < 1:
            raise InputError(f"delta: must be above 0 and below 1, got {delta:g}")
    seed = _number(data, "seed", int, 0)
    holdout = _number(data, "holdout", float, DEFAULT_HOLDOUT)
    if not 0 <= holdout < 1:
        raise InputError(f"holdout: the share of rows held out must be at least 0 and below 1, got {holdout:g}")
    info = {c["name"]: c for c in allowed}
    bounds: dict[str, list[float]] = {}
    for name, given in dict(data.get("bounds") or {}).items():
        if name not in chosen or not info[name]["numeric"]:
            raise InputError(f"bounds: {name!r} is not a chosen numeric column")
        values = list(given)
        if len(values) not in (2, 3):
            raise InputError(f"bounds of {name!r}: give lower, upper (and the number of bins)")
        lower, upper = float(values[0]), float(values[1])
        try:  # a whole number of bins (JSON's 10.0 is 10; 2.5 was cut to 2 without a word)
            given_count = float(values[2]) if len(values) == 3 else 20.0
        except (TypeError, ValueError, OverflowError):
            given_count = math.nan
        if not given_count.is_integer():
            raise InputError(f"bounds of {name!r}: the number of bins must be a whole number, got {values[2]!r}")
        count = int(given_count)
        try:
            NumericBins(lower, upper, count)  # checks them, with the engine's message
        except InputError as exc:
            raise InputError(f"bounds of {name!r}: {exc}") from None
        bounds[name] = [lower, upper, count]
    for name in chosen:  # a DP method's domain must be public: a numeric column's bins never from the data
        if synthesizer.dp and info[name]["numeric"] and not info[name]["hierarchy"] and name not in bounds:
            raise InputError(f"bounds: the numeric column {name!r} needs a hierarchy or bounds (lower, upper) "
                             f"chosen without looking at the data")
    options = dict(data.get("options") or {})
    return {"method": synthesizer.name, "dp": synthesizer.dp, "columns": chosen, "epsilon": epsilon,
            "delta": delta, "seed": seed, "holdout": holdout, "bounds": bounds, "options": options}


def create_synthesis_job(dataset: Dataset, user, data: dict) -> Job:
    """A queued (not yet submitted) synthesis job; a DP method's ε and δ are charged to the dataset's ledger
    in the same transaction. InputError: a value refused or the budget would be exceeded (nothing created)."""
    spec = build_spec(dataset, data)
    synthesizer = SYNTHESIZERS[spec["method"]]
    config = datasets.dataset_config(dataset)
    with transaction.atomic():
        job = Job.objects.create(owner=user, dataset=dataset, kind=Job.SYNTHESIS,
                                 algorithm=f"{SYNTHESIS}:{spec['method']}", k=0, options={"synthesis": spec},
                                 config=config)
        if synthesizer.dp:
            with privacy_ledger.charge(dataset, user, f"Synthetic data ({synthesizer.label})", spec["epsilon"],
                                       spec["delta"], f"Synthetic data by {synthesizer.label}, "
                                       f"({spec['epsilon']:g}, {spec['delta']:g})-differential privacy", job=job):
                pass
    return job


def context_of(job: Job, progress, cancelled) -> SynthesisContext:
    spec = job.options["synthesis"]
    types = {c["name"]: c.get("type") for c in job.config.get("columns", [])}
    hierarchies = datasets.hierarchies_from_config(
        job.owner, {"columns": [dict(c, role=Role.QUASI_IDENTIFYING.value) for c in job.config.get("columns", [])
                                if c["name"] in spec["columns"]]})
    kinds: dict[str, ColumnKind] = {c: ("numeric" if types.get(c) in NUMERIC_TYPES else "categorical")
                                    for c in spec["columns"]}
    bins = {c: NumericBins(b[0], b[1], int(b[2])) for c, b in spec["bounds"].items()}
    return SynthesisContext(columns=list(spec["columns"]), kinds=kinds, hierarchies=hierarchies, bins=bins,
                            epsilon=spec["epsilon"], delta=spec["delta"], seed=spec["seed"], progress=progress,
                            cancelled=cancelled)


# ---- the synthetic figures --------------------------------------------------------------------------------
def flat_figures(figures: dict) -> dict:
    """engine.measure.synthetic_figures' figures as the figure catalogue's keys (tvd_1way_mean, exact_copies,
    membership_auc, ...), the nested ones kept beside them."""
    tvd, closest = figures.get("tvd", {}), figures.get("closest_record", {})
    rare = figures.get("rare_exact_copies") or {}
    membership = figures.get("membership") or {}
    return {"tvd_1way_mean": tvd.get("one_way_mean"), "tvd_1way_max": tvd.get("one_way_max"),
            "tvd_2way_mean": tvd.get("two_way_mean"), "tvd_2way_max": tvd.get("two_way_max"),
            "exact_copies": closest.get("exact_copies"), "exact_copy_share": closest.get("exact_copy_share"),
            "rare_exact_copies": rare.get("rows"), "membership_auc": membership.get("auc"),
            "rare_below": rare.get("rare_below", RARE_BELOW), "rare_listed": rare.get("listed", []),
            "tvd_1way": tvd.get("one_way", {}), "tvd_2way_worst": tvd.get("two_way_worst"),
            "membership_rows_each": membership.get("rows_each"), "rows": figures.get("rows_synthetic"),
            "original_rows": figures.get("rows_original"), "engine": figures}


def split_holdout(frame: pd.DataFrame, share: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The rows the synthesizer reads and the rows held out of it (engine.synthesis.holdout, drawn with ``seed``)
    for the membership test and the models trained on the synthetic set (services.synthetic_utility)."""
    held = held_out.holdout_mask(len(frame), share, seed)
    if held is None:
        return frame, None
    return frame[~held].reset_index(drop=True), frame[held].reset_index(drop=True)


# ---- the job ----------------------------------------------------------------------------------------------
def run_synthesis_job(job: Job) -> None:
    progress = Progress(job)
    spec = job.options["synthesis"]
    synthesizer = get_synthesizer(spec["method"])
    alive = {"on": True}

    def report(fraction: float, phase: str) -> None:
        alive["on"] = progress(0.02 + 0.9 * fraction, phase)

    def cancelled() -> bool:  # read at each step the synthesizer checks (Progress reads it only unthrottled)
        return not alive["on"] or Job.objects.filter(pk=job.pk).values_list(
            "cancel_requested", flat=True).first() is not False

    progress(0.0, "reading the table")
    frame = datasets.load_frame(job.dataset, columns=spec["columns"])
    train, holdout = split_holdout(frame, float(spec.get("holdout", 0.0)), spec["seed"])
    context = context_of(job, report, cancelled)
    try:
        outcome = synthesizer.run(train, context, spec.get("options") or {})
    except SynthesisCancelled:
        raise Cancelled("synthesis cancelled") from None
    if not progress(0.93, "measuring the synthetic table"):
        raise Cancelled("synthesis cancelled")
    qi = [c["name"] for c in job.config.get("columns", [])
          if c["role"] == Role.QUASI_IDENTIFYING.value and c["name"] in spec["columns"]]
    figures = flat_figures(synthetic_figures(train, outcome.frame[spec["columns"]], spec["columns"],
                                             context.kinds, qi, holdout, seed=spec["seed"]))
    figures["rare_qi"] = qi
    figures["holdout_rows"] = 0 if holdout is None else len(holdout)
    # which rows were held out (the draw and a digest): the models trained on this set are tested on them
    figures["holdout"] = held_out.describe(len(frame), float(spec.get("holdout", 0.0)), spec["seed"], holdout)
    progress(0.97, "writing the synthetic rows")
    path = storage.result_path(job)
    with storage.AtomicParquet(path) as out:
        out.write(results.output_table(outcome.frame[spec["columns"]].astype(str),
                                       np.zeros(len(outcome.frame), dtype=bool)))
        out.commit()
    name = storage.result_name(job)
    stored = {
        "method": synthesizer.name, "label": synthesizer.label, "dp": synthesizer.dp,
        "guarantee": guarantee_text(synthesizer.dp, spec["epsilon"], spec["delta"]),
        "epsilon": spec["epsilon"] if synthesizer.dp else None, "delta": spec["delta"] if synthesizer.dp else None,
        "budget": outcome.budget, "parameters": outcome.parameters, "method_figures": outcome.figures,
        "figures": figures, "columns": spec["columns"], "seed": spec["seed"]}
    try:  # the publication check on the rows as written (services/synthesis_gate.py), before the Result exists
        stored["publication_check"] = synthesis_gate.check_table(job, path, results.report_json(stored), train).as_dict()
    except synthesis_gate.SyntheticTableRefused:
        storage.delete_names([name])
        raise
    results.store(job, results.report_json({"synthesis": stored}), output_name=name, files=[name])


def guarantee_text(dp: bool, epsilon: float, delta: float) -> str:
    if not dp:
        return "No formal privacy guarantee: the rows are drawn from models fitted to the original records."
    return f"({epsilon:g}, {delta:g})-differential privacy for each person's record."


# the synthetic figures shown (page, API), in order: the report's keys, each a figure of the catalogue
SHOWN_FIGURES = ("tvd_1way_mean", "tvd_1way_max", "tvd_2way_mean", "tvd_2way_max", "exact_copies",
                 "exact_copy_share", "rare_exact_copies", "membership_auc")


def figure_rows(figures: dict) -> list[dict]:
    """The synthetic figures as the figure catalogue words and formats them (— undefined); rare exact copies
    flagged when there are any."""
    rows = []
    for key in SHOWN_FIGURES:
        figure = FIGURES[key]
        value = figures.get(key)
        rows.append({"key": key, "label": figure.label, "help": figure.help,
                     "text": format_kind(figure.kind, value) if value is not None else "—",
                     "flag": key == "rare_exact_copies" and bool(value)})
    return rows


def report_of(job: Job) -> dict | None:
    result = Result.objects.filter(job=job).first()
    if job.kind != Job.SYNTHESIS or job.status != Job.SUCCEEDED or result is None:
        return None
    return result.report.get("synthesis")


def preview(result: Result, count: int = MAX_PREVIEW) -> tuple[list[str], list[list[str]]]:
    frame, _ = results.load_output(result)
    frame.attrs.pop("rows", None)
    head = frame.head(count)
    return [str(c) for c in head.columns], head.astype(str).to_numpy().tolist()


def synthesis_jobs(dataset: Dataset):
    return Job.objects.filter(dataset=dataset, kind=Job.SYNTHESIS).order_by("-created")


register(Job.SYNTHESIS, run_synthesis_job)
