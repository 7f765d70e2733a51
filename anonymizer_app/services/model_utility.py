"""Models trained on a finished run's release (engine.measure.model_utility) as a job of kind "model-utility":
created from the run (options["source_job"]) with the target, features, models, encoding, split and seed, run on
a worker with progress and cancel (never in a request), its figures kept as the job's Result report
("model_utility"). The web page, the API and `manage.py utility` all go through create_utility_job.

The release's rows are read back as stored (one row per input row, the suppressed ones flagged); the input is the
dataset's rows the run read. A run that does not publish one row per input row (Anatomy's separate table, a
research subset) is refused by name. A synthetic set (a job of kind "synthesis") is a source too: its models are
trained on the synthetic rows and tested on the original rows the synthesizer never saw
(services.synthetic_utility); it takes no split of its own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine import InputError, Role
from ..engine.measure.figure_catalogue import format_kind
from ..engine.measure.model_utility import MODELS, UtilitySpec, evaluate
from ..models import Job, Result
from . import datasets, results, storage, synthetic_utility
from .job_support import Progress, register

UTILITY = "model-utility"  # Job.algorithm of a utility job (its kind decides)
NUMERIC_TYPES = ("integer", "decimal")


def _config_columns(job: Job) -> list[dict]:
    return list((job.config or {}).get("columns", []))


def utility_columns(result: Result) -> dict:
    """The run's columns a model can use: those of both tables, identifiers left out; the QIs; the numeric ones.
    A synthetic set's: its synthesized columns, none a QI (services.synthetic_utility)."""
    job = result.job
    if job.kind == Job.SYNTHESIS:
        return synthetic_utility.utility_columns(result)
    hidden = {e.get("column") for e in result.report.get("identifiers", [])}
    published = set(results.output_columns(result))
    config = _config_columns(job)
    columns = [c["name"] for c in config if c["name"] in published and c["name"] not in hidden
               and c["role"] not in (Role.IDENTIFYING.value, Role.PERSON.value)]
    qi = [c["name"] for c in config if c["role"] == Role.QUASI_IDENTIFYING.value]
    numeric = {c["name"] for c in config if c.get("type") in NUMERIC_TYPES}
    return {"columns": columns, "qi": qi, "numeric": numeric,
            "targets": [c for c in columns if c not in qi]}


def check_source(job: Job) -> Result:
    """The run's result (or the synthetic set's), or InputError naming why no model can be trained on it."""
    if job.kind == Job.SYNTHESIS:
        return synthetic_utility.check_source(job)
    if job.kind not in (Job.RUN, Job.LATTICE_KEEP) or job.status != Job.SUCCEEDED:
        raise InputError("models are trained on the release of a finished run")
    result = Result.objects.filter(job=job).first()
    if result is None:
        raise InputError("models are trained on the release of a finished run")
    report = result.report
    if report.get("recoding") == "anatomy":
        raise InputError("an Anatomy result publishes its sensitive values in a table of their own: no model is "
                         "trained on it")
    if report.get("research_subset"):
        raise InputError("this result publishes a research subset of the input: its rows are not the input's")
    if job.dataset.is_transactions:
        raise InputError("a transaction dataset's release has no columns to train a model on")
    return result


def build_spec(result: Result, data: dict) -> UtilitySpec:
    """A UtilitySpec from form, API or CLI values (lists or comma-separated text), checked against the run's
    columns: InputError names the field and the value at fault."""
    info = utility_columns(result)
    synthetic = result.job.kind == Job.SYNTHESIS
    what = "synthesized column of this synthetic set" if synthetic else "published column of this run"
    if synthetic:
        synthetic_utility.refuse_split(data)

    def listed(value, default: list[str]) -> list[str]:
        if value is None or value == "" or value == []:
            return default
        items = value.split(",") if isinstance(value, str) else list(value)
        return [str(v).strip() for v in items if str(v).strip()]

    target = str(data.get("target") or "").strip()
    if not target:
        raise InputError(f"target: choose a column (one of {', '.join(info['targets'])})")
    if target not in info["columns"]:
        raise InputError(f"target: {target!r} is not a {what} (choose from "
                         f"{', '.join(info['targets'])})")
    features = listed(data.get("features"), [c for c in info["columns"] if c != target])
    for name in features:
        if name not in info["columns"]:
            raise InputError(f"features: {name!r} is not a {what}")

    def number(key: str, kind, default):
        value = data.get(key)
        if value is None or value == "":
            return default
        try:
            return kind(value)
        except (TypeError, ValueError):
            raise InputError(f"{key.replace('_', ' ')}: must be a number, got {value!r}") from None

    spec = UtilitySpec(target=target, features=features, models=listed(data.get("models"), list(MODELS)),
                       encoding=str(data.get("encoding") or "one-hot"), split=str(data.get("split") or "holdout"),
                       test_share=number("test_share", float, 0.3), folds=number("folds", int, 5),
                       seed=number("seed", int, 0), task=str(data.get("task") or "auto"))
    spec.validate(info["columns"], info["qi"])
    return spec


def create_utility_job(source: Job, data: dict) -> Job:
    """A queued (not yet submitted) utility job of ``source``'s release; InputError when the run or a value is
    refused."""
    result = check_source(source)
    spec = build_spec(result, data)
    return Job.objects.create(owner=source.owner, dataset=source.dataset, kind=Job.MODEL_UTILITY,
                              algorithm=UTILITY, k=source.k, suppression_limit=source.suppression_limit,
                              options={"source_job": str(source.pk), "utility": spec.describe()},
                              config=source.config)


def source_of(job: Job) -> Job:
    source_id = str((job.options or {}).get("source_job") or "")
    source = Job.objects.filter(pk=source_id, owner=job.owner).first() if source_id else None
    if source is None:
        raise InputError("the run or synthetic set this job trains models on no longer exists")
    return source


def run_utility_job(job: Job) -> None:
    """Train and score every model with progress; the figures become the job's Result report."""
    progress = Progress(job)
    source = source_of(job)
    spec = UtilitySpec(**(job.options or {})["utility"])
    if source.kind == Job.SYNTHESIS:
        figures = synthetic_utility.run(source, spec, progress)
        figures["source_job"] = str(source.pk)
        results.store(job, {"model_utility": figures})
        return
    result = check_source(source)
    info = utility_columns(result)
    columns = list(dict.fromkeys([*spec.features, spec.target]))
    progress(0.0, "reading the input and the release")
    before = datasets.load_frame(source.dataset, columns=columns)
    path = storage.output_path(result)
    # the dataset row of each stored row, when stored: a run that removed its suppressed records holds fewer rows
    extra = [results.ROW_COLUMN] if results.ROW_COLUMN in storage.stored_columns(path) else []
    after = storage.read_frame(path, columns=columns + [results.SUPPRESSED_COLUMN] + extra)
    after, suppressed = results.split_suppressed(after)
    rows = after.attrs.get("rows")
    if rows is not None:  # put each stored row back on its input row; a record not stored was suppressed ('*')
        placed = pd.DataFrame("*", index=before.index, columns=after.columns)
        flags = np.ones(len(before), dtype=bool)
        placed.iloc[rows] = after.astype(str).to_numpy()
        flags[rows] = suppressed
        after, suppressed = placed, flags
    if len(after) != len(before):
        raise InputError("this release does not hold one row per input row: no model is trained on it")
    figures = evaluate(before, after, suppressed, spec, info["numeric"], info["qi"],
                       progress=lambda f, p: progress(0.02 + 0.96 * f, p))
    figures["source_job"] = str(source.pk)
    results.store(job, {"model_utility": figures})


def figures_of(job: Job) -> dict | None:
    """The figures of a finished utility job (None: not finished or failed)."""
    result = Result.objects.filter(job=job).first()
    if job.status != Job.SUCCEEDED or result is None:
        return None
    return result.report.get("model_utility")


def utility_jobs(source: Job):
    """The utility jobs of a run, newest first."""
    return Job.objects.filter(owner=source.owner, kind=Job.MODEL_UTILITY,
                              options__source_job=str(source.pk)).order_by("-created")


def figure_rows(figures: dict) -> list[dict]:
    """One row per model and training table, its scores as text (the figure catalogue's amounts; — undefined)."""
    return [{"model": r["model_label"], "trained_on": r["trained_on_label"], "way": r["trained_on"],
             "values": [format_kind("amount", r.get(m)) if r.get(m) is not None else "—"
                        for m in figures["metrics"]]} for r in figures["rows"]]


def report_section(source: Job) -> dict | None:
    """The release report's section: the newest succeeded utility job of the run (None: there is none)."""
    for job in utility_jobs(source).filter(status=Job.SUCCEEDED)[:1]:
        figures = figures_of(job)
        if figures:
            split = figures["split"]
            where = (f"{split['folds']} folds, the mean over them" if split["kind"] == "kfold" else
                     f"{split['test_rows']} held-out rows ({split['test_share'] * 100:g}%)")
            return {"target": figures["spec"]["target"], "task": figures["task"], "encoding": figures["spec"]["encoding"],
                    "features": ", ".join(figures["spec"]["features"]), "where": where, "seed": split["seed"],
                    "left_out": figures["suppressed_training_rows_left_out"],
                    "metric_labels": [figures["metric_labels"][m] for m in figures["metrics"]],
                    "rows": figure_rows(figures)}
    return None


register(Job.MODEL_UTILITY, run_utility_job)
