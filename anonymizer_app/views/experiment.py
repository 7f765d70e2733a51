"""The seed-001 experiment: the form (generated people tables and/or this dataset, anonymized once per k,
queued as one job of kind "experiment") and its page (homogeneous ECs against k, CSV)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods

from accounts.throttling import throttle

from ..engine import InputError, Role
from ..forms import ExperimentForm
from ..models import Job
from ..services import experiment as experiment_service
from .common import algorithm_label, format_duration, job_result, owned_dataset, owned_job, queue_job


@login_required
@require_http_methods(["GET", "POST"])
@throttle("run")
def experiment(request, dataset_id: int):
    """Generated people tables and/or this dataset, anonymized once per k; queued as one job
    (kind "experiment") that counts the homogeneous equivalence classes."""
    ds = owned_dataset(request, dataset_id)
    cols = list(ds.columns.all())
    sensitive = [c.name for c in cols if c.role == Role.SENSITIVE.value]
    # opened from a dataset with a QI and a sensitive column: the experiment starts on it
    ready = bool(sensitive) and any(c.role == Role.QUASI_IDENTIFYING.value for c in cols)
    if request.method == "POST":
        form = ExperimentForm(request.POST, sensitive_columns=sensitive)
        if form.is_valid():
            d = form.cleaned_data
            try:
                job = experiment_service.create_experiment(
                    ds, d["sizes"], d["seed"], d["include_dataset"], d["k_values"], d["algorithm"],
                    d["suppression_percent"] / 100.0, d["sensitive"] or "")
            except InputError as exc:
                form.add_error(None, str(exc))
            else:
                queue_job(request, job)
                return redirect("anonymizer:job", job_id=job.pk)
    else:
        form = ExperimentForm(sensitive_columns=sensitive, dataset_ready=ready)
    past = ds.jobs.filter(kind=Job.EXPERIMENT)[:10]
    return render(request, "anonymizer/experiment.html", {
        "dataset": ds, "tab": "experiment", "form": form,
        "past": [{"job": j, "tables": _experiment_tables(j), "ks": ", ".join(map(str, j.options.get("k", [])))}
                 for j in past],
    })


def _experiment_tables(job: Job) -> str:
    parts = [f"{n:,}" for n in job.options.get("sizes", [])]
    text = f"people of {', '.join(parts)} rows" if parts else ""
    if job.options.get("include_dataset"):
        text = f"{text} and {job.dataset.name}" if text else job.dataset.name
    return text


def experiment_rows(rows: list[dict]) -> list[dict]:
    return [{"table": r["table"], "rows": f"{r['rows']:,}", "k": r["k"], "classes": f"{r['equivalence_classes']:,}",
             "homogeneous": f"{r['homogeneous_classes']:,}", "records": f"{r['homogeneous_records']:,}",
             "share": f"{r['homogeneous_share'] * 100:.1f}%", "k_reached": f"{r['k_reached']:,}",
             "suppressed": f"{r['suppressed']:,}", "transformation": r.get("transformation", ""),
             "seconds": format_duration(r["seconds"]),
             # a table with a person id: the run counted persons (k reached in persons, the records' beside it)
             "persons": r.get("counted") == "persons",
             "homogeneous_persons": f"{r.get('homogeneous_persons', 0):,}",
             "k_reached_records": f"{r.get('k_reached_records', 0):,}"} for r in rows]


def person_note(rows: list[dict]) -> str:
    """What the table counts when a table of the experiment has a person id."""
    ids = sorted({r["person_id"] for r in rows if r.get("counted") == "persons" and r.get("person_id")})
    if not ids:
        return ""
    return (f"With the person id {', '.join(ids)} the runs count persons, not records, against the adversary who "
            f"knows one class of a person (a run's default): every class holds k distinct persons. On those rows "
            f"k reached is in persons (records in the smallest class in brackets), and the persons in homogeneous "
            f"ECs are the distinct persons with a record in one; a person may have records in several classes.")


@login_required
@require_GET
def experiment_result(request, job_id):
    j = owned_job(request, job_id)
    if j.kind != Job.EXPERIMENT:
        raise Http404("this job is not a homogeneity experiment")
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    rows = job_result(j).report.get("experiment", [])
    if request.GET.get("format") == "csv":
        response = HttpResponse(experiment_service.experiment_csv(rows), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = content_disposition_header(True, "homogeneity-experiment.csv")
        return response
    return render(request, "anonymizer/experiment_result.html", {
        "job": j, "dataset": j.dataset, "rows": experiment_rows(rows), "tables": _experiment_tables(j),
        "person_note": person_note(rows),
        "algorithm": algorithm_label(j.options.get("algorithm", "")),
        "ks": ", ".join(map(str, j.options.get("k", []))), "seed": j.options.get("seed", 0),
        "suppression_percent": f"{j.suppression_limit * 100:g}", "duration": format_duration(j.duration),
        "chart": experiment_service.experiment_figure(rows),
    })
