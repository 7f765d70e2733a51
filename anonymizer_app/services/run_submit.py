"""A run as the run form submits it (the web run page and POST /api/v1/runs/), and the same creation tried
without keeping anything, so that the form's check refuses exactly what the submit refuses, in its words."""

from __future__ import annotations

from django.db import transaction

from ..engine import InputError
from ..models import Dataset, Job
from . import identifier_suggestions
from . import jobs as job_service
from . import setvalued as set_service


def create_from_form(form, set_form, ds: Dataset, populations) -> Job:
    """The job of a valid run form (and its set-valued companion when a column holds sets); InputError names
    what the services refuse (k below 1, levels above a hierarchy, a population that does not fit...)."""
    d = form.cleaned_data
    population = next((p for p in populations if p.pk == form.population()), None)
    options = form.algorithm_options()
    if d.get("suppressed_rows") == "keep":  # a publishing option, kept with the job's options (as the web)
        options = dict(options, suppressed_rows="keep")
    set_config = None if set_form is None else set_service.set_column_config(
        ds, d["k"], set_form.cleaned_data["m"], set_form.cleaned_data["set_algorithm"], set_form.hierarchy())
    job = job_service.create_job(ds, d["algorithm"], d["k"], d["suppression_percent"] / 100.0,
                                 d["sensitive"] or "", options, form.privacy_models(), population=population,
                                 person_adversary=d.get("person_adversary") or "class")
    if set_config is not None:
        job.config["set_column"] = set_config
        job.save(update_fields=["config"])
    identifier_suggestions.remember(job, d.get("publish_as_is") or ())
    return job


def creation_problems(form, set_form, ds: Dataset, populations) -> list[dict]:
    """What create_from_form would refuse, as the checks' problems ([] when it would create the job); the job
    is created inside a transaction that is rolled back, so nothing is stored."""
    problems: list[dict] = []
    with transaction.atomic():
        try:
            create_from_form(form, set_form, ds, populations)
        except InputError as exc:
            problems = [{"field": None, "message": str(exc)}]
        transaction.set_rollback(True)
    return problems
