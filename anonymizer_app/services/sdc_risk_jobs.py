"""SUDA2 above the risk page's in-request limit (services.sdc_risk.WEB_SUDA_ROWS) as a job of kind "sdc-risk": the
risk with sampling weights of a dataset on chosen key variables, or of a run's result before and after, computed
on a worker with progress and cancel (services.sdc_risk with web=False: no cap), its figures kept as the job's
Result report ("sdc_risk"). The risk pages and the API then show the stored SUDA2 figures in place of the refusal
(attach_dataset, attach_result), said to be stale when the dataset's column roles changed since the job was made.

A job is found again by its dataset, its target (the dataset, or the run it was made from) and its key variables:
SUDA2 reads the key variables' values only, so the page's other options (individual-risk method, maximum global
risk) do not tell jobs apart.
"""

from __future__ import annotations

import hashlib
import json

from ..engine import Cancelled, InputError
from ..engine.measure.figure_catalogue import sdc_risk_figures
from ..models import Dataset, Job, Result
from . import datasets, results
from . import sdc_risk as sdc_risk_service
from .job_support import Progress, register

SDC_RISK = "sdc-risk"  # Job.algorithm of these jobs (their kind decides)
DATASET, RESULT = "dataset", "result"
DEFAULT_OPTIONS = {"method": "approx", "max_global_risk": 0.01, "suda": True}
RECENT = 50  # the newest jobs of a dataset looked through for one of the asked key variables


def roles_fingerprint(dataset: Dataset) -> str:
    """A digest of the dataset's columns and their roles (a job's figures are stale once it differs)."""
    roles = [[c.name, c.role] for c in dataset.columns.order_by("position")]
    return hashlib.sha256(json.dumps(roles).encode()).hexdigest()


def _checked_keys(dataset: Dataset, keys: list[str]) -> list[str]:
    keys = list(dict.fromkeys(str(k) for k in keys))
    if not keys:
        raise InputError("qi: choose at least one key variable (quasi-identifier)")
    columns = set(datasets.dataset_columns(dataset))
    for k in keys:
        if k not in columns:
            shown = repr(k) if len(k) <= 200 else f"{k[:200]!r}... ({len(k):,} characters)"
            raise InputError(f"qi: {shown} is not a column of this dataset")
    return keys


def _create(dataset: Dataset, spec: dict, options: dict | None) -> Job:
    spec = {**spec, "options": {**DEFAULT_OPTIONS, **(options or {}), "suda": True},
            "roles": roles_fingerprint(dataset)}
    return Job.objects.create(owner=dataset.owner, dataset=dataset, kind=Job.SDC_RISK, algorithm=SDC_RISK, k=0,
                              options={"sdc_risk": spec})


def create_dataset_job(dataset: Dataset, keys: list[str], options: dict | None = None) -> Job:
    """A queued (not yet submitted) job of the dataset's figures on ``keys``; InputError naming a bad key."""
    if dataset.is_transactions:
        raise InputError("a transaction dataset has no key variables to compute SUDA2 on")
    return _create(dataset, {"target": DATASET, "keys": _checked_keys(dataset, keys)}, options)


def check_source(source: Job) -> Result:
    """The finished run's result with its quasi-identifiers, or InputError naming why there is none."""
    result = Result.objects.filter(job=source).first()
    if source.kind != Job.RUN or source.status != Job.SUCCEEDED or result is None:
        raise InputError("the figures before and after are computed for a finished run's published table")
    if not result.report.get("quasi_identifiers"):
        raise InputError("this result has no quasi-identifiers to analyse")
    return result


def create_result_job(source: Job, options: dict | None = None) -> Job:
    """A queued job of a run's figures before and after, on its quasi-identifiers."""
    result = check_source(source)
    keys = list(result.report["quasi_identifiers"])
    return _create(source.dataset, {"target": RESULT, "source_job": str(source.pk), "keys": keys}, options)


def spec_of(job: Job) -> dict:
    return dict((job.options or {}).get("sdc_risk") or {})


def run_sdc_risk_job(job: Job) -> None:
    """The figures without the page's cap, with progress (SUDA2 tells it per MSU size); a cancel stops at the
    next progress call."""
    progress = Progress(job)

    def tell(fraction: float, phase: str) -> None:
        if not progress(fraction, phase):
            raise Cancelled("cancelled")

    spec = spec_of(job)
    options = {**DEFAULT_OPTIONS, **spec.get("options", {})}
    tell(0.0, "reading the table")
    on = lambda f, phase: tell(0.05 + 0.9 * f, phase)  # noqa: E731  (reading takes the first 5%)
    if spec.get("target") == RESULT:
        source_id = str(spec.get("source_job") or "")
        source = Job.objects.filter(pk=source_id, owner=job.owner).first() if source_id else None
        if source is None:
            raise InputError("the run whose figures this job computes no longer exists")
        figures = sdc_risk_service.result_sdc_risk(check_source(source), options, web=False, progress=on)
    else:
        figures = sdc_risk_service.dataset_sdc_risk(job.dataset, list(spec["keys"]), options, web=False, progress=on)
    tell(0.97, "storing the figures")
    results.store(job, results.report_json({"sdc_risk": {**spec, "figures": figures}}))


def figures_of(job: Job) -> dict | None:
    """The stored figures of a finished job (None: not succeeded): the dataset's report, or before/after."""
    result = Result.objects.filter(job=job).first()
    if job.kind != Job.SDC_RISK or job.status != Job.SUCCEEDED or result is None:
        return None
    return (result.report.get("sdc_risk") or {}).get("figures")


def is_stale(job: Job) -> bool:
    return spec_of(job).get("roles") != roles_fingerprint(job.dataset)


def _matching(dataset: Dataset, target: str, keys: list[str], source_job: str | None) -> list[Job]:
    found = []
    for j in Job.objects.filter(owner=dataset.owner, dataset=dataset, kind=Job.SDC_RISK).order_by("-created")[:RECENT]:
        spec = spec_of(j)
        if spec.get("target") == target and spec.get("keys") == keys and spec.get("source_job") == source_job:
            found.append(j)
    return found


def _state(jobs: list[Job]) -> tuple[dict, Job | None]:
    """What the page says of the worker's jobs of these figures, and the newest succeeded one: "stored" (its
    figures are shown; stale or not), "active" (queued or running: no second one is offered), "ended" (the
    newest, when it failed or was cancelled after the stored one), "offer" (the button)."""
    done = next((j for j in jobs if j.status == Job.SUCCEEDED), None)
    active = next((j for j in jobs if j.status in (Job.QUEUED, Job.RUNNING)), None)
    newest = jobs[0] if jobs else None
    state: dict = {"offer": active is None, "stored": None, "active": None, "ended": None}
    if done is not None:
        finished = done.finished.strftime("%Y-%m-%d %H:%M UTC") if done.finished else ""
        state["stored"] = {"id": str(done.pk), "finished": finished, "stale": is_stale(done)}
    if active is not None:
        state["active"] = {"id": str(active.pk), "status": active.status, "progress": round(active.progress * 100),
                           "phase": active.phase}
    if newest is not None and newest.status in (Job.FAILED, Job.CANCELLED):
        state["ended"] = {"id": str(newest.pk), "status": newest.status, "message": newest.message}
    return state, done


def _capped(report: dict | None) -> bool:
    return bool(((report or {}).get("suda2") or {}).get("worker"))


def attach_dataset(dataset: Dataset, report: dict) -> dict:
    """``report`` (services.sdc_risk.dataset_sdc_risk's, on the page) with the stored SUDA2 figures of the newest
    succeeded job of its key variables in place of the cap's refusal, and "suda_worker": what the page says of the
    jobs (the offer of a new one). Unchanged below the cap."""
    if not _capped(report):
        return report
    state, done = _state(_matching(dataset, DATASET, list(report["key_variables"]), None))
    stored = figures_of(done) if done is not None else None
    if stored and stored.get("suda2"):
        report["suda2"] = stored["suda2"]
        report["figures"] = sdc_risk_figures(report)
    report["suda_worker"] = state
    return report


def attach_result(source: Job, figures: dict) -> dict:
    """The same for a result's figures before and after (services.sdc_risk.result_sdc_risk's): each capped side
    takes its stored SUDA2 figures; "suda_worker" at the top."""
    if not (_capped(figures.get("before")) or _capped(figures.get("after"))):
        return figures
    state, done = _state(_matching(source.dataset, RESULT, list(figures["key_variables"]), str(source.pk)))
    stored = figures_of(done) if done is not None else None
    for side in ("before", "after"):
        if stored and _capped(figures.get(side)) and (stored.get(side) or {}).get("suda2"):
            figures[side]["suda2"] = stored[side]["suda2"]
            figures[side]["figures"] = sdc_risk_figures(figures[side])
    figures["suda_worker"] = state
    return figures


register(Job.SDC_RISK, run_sdc_risk_job)
