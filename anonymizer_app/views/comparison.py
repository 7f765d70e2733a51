"""Comparison of algorithms: the form (several algorithms for several k, queued as one job of kind
"comparison") and the comparison's page (table, charts, CSV)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods

from accounts.throttling import throttle

from ..engine import InputError, Role
from ..engine.measure.figure_catalogue import format_figure as fig
from ..forms import CompareForm, default_sensitive
from ..models import Job
from ..risk_forms import PopulationForm
from ..services import comparison as comparison_service
from ..services import comparison_risk
from ..services import risk as risk_service
from ..services.attribute_weights import weights_text
from ..services.rerun import models_text, run_form_initial
from .common import QI, algorithm_label, format_duration, job_result, owned_dataset, owned_job, queue_job
from .risk import ESTIMATOR_LABELS


@login_required
@require_http_methods(["GET", "POST"])
@throttle("comparison")
def compare(request, dataset_id: int):
    """Several algorithms for several k on this dataset: queued as one job of kind "comparison"."""
    ds = owned_dataset(request, dataset_id)
    cols = list(ds.columns.all())
    sensitive = [c.name for c in cols if c.role == Role.SENSITIVE.value]
    # the research subset of δ-presence: a 0/1 column that is neither a QI nor identifying (as on the run form)
    subset = [c.name for c in cols if c.role in (Role.SENSITIVE.value, Role.INSENSITIVE.value)]
    person = next((c.name for c in cols if c.role == Role.PERSON.value), None)  # every run then counts persons
    if request.method == "POST":
        form = CompareForm(request.POST, sensitive_columns=sensitive, subset_columns=subset, person_column=person)
        if form.is_valid():
            d = form.cleaned_data
            try:
                job = comparison_service.create_comparison(ds, d["algorithms"], d["k_values"],
                                                           d["suppression_percent"] / 100.0, d["sensitive"] or "",
                                                           models=form.privacy_models(),
                                                           person_adversary=d["person_adversary"],
                                                           weights=d.get("weights") or "")
            except InputError as exc:
                form.add_error(None, str(exc))
            else:
                queue_job(request, job)
                return redirect("anonymizer:job", job_id=job.pk)
    else:
        form = CompareForm(sensitive_columns=sensitive, subset_columns=subset, person_column=person,
                           sensitive_default=default_sensitive(cols))
    past = ds.jobs.filter(kind=Job.COMPARISON)[:10]
    return render(request, "anonymizer/compare.html", {
        "dataset": ds, "tab": "compare", "form": form,
        "main_fields": [form[name] for name in ("algorithms", "k_values", "suppression_percent", "sensitive",
                                                *(("person_adversary",) if person else ()), "weights")],
        "qi_columns": [c for c in cols if c.role == QI],
        "past": [{"job": j, **comparison_settings(j)} for j in past],
    })


def comparison_settings(job: Job) -> dict:
    """What a comparison was asked for, as its pages and lists show it: algorithms, ks, suppression limit,
    models beside k (registry labels) and sensitive column."""
    options = job.options or {}
    qi = [c["name"] for c in (job.config or {}).get("columns", []) if c.get("role") == QI]
    return {"weights": weights_text(options.get("weights"), qi),
            "algorithms": ", ".join(algorithm_label(a) for a in options.get("algorithms", [])),
            "ks": ", ".join(map(str, options.get("k", []))),
            "suppression_percent": f"{job.suppression_limit * 100:g}",
            "models": models_text(job.models), "sensitive": job.sensitive or ""}


def _run_url(job: Job | None, algorithm: str, k: int) -> str:
    """The run form with one row's settings (its algorithm and k, the comparison's suppression limit,
    sensitive column and models beside k): the row as a run of its own."""
    if job is None:
        return ""
    fields = {"algorithm": algorithm, "k": k, "suppression_percent": f"{job.suppression_limit * 100:g}",
              "sensitive": job.sensitive or ""}
    # the models beside k as the run form's fields (services.rerun reads a job's models into them)
    fields.update({name: value for name, value in run_form_initial(job).items() if name.startswith("model:")})
    return reverse("anonymizer:run", args=[job.dataset_id]) + "?" + urlencode(fields)


def comparison_rows(rows: list[dict], job: Job | None = None) -> list[dict]:
    """The comparison table as shown: figures formatted, failed runs with their reason, the attribute weights each
    run was made with (the algorithms that take them; '' for the others), and (given the comparison ``job``) a
    link running each row on its own."""
    qi = [c["name"] for c in (job.config or {}).get("columns", []) if c.get("role") == QI] if job else []
    out = []
    for r in rows:
        failed = bool(r.get("error"))
        out.append({
            "weights": weights_text(r.get("weights"), qi) if qi else str(r.get("weights") or ""),
            "run_url": _run_url(job, r["algorithm"], r["k"]),
            "algorithm": algorithm_label(r["algorithm"]), "name": r["algorithm"], "k": r["k"], "error": r.get("error", ""),
            "k_achieved": "—" if failed else fig("k_achieved", r["k_achieved"]),
            "classes": "—" if failed else fig("equivalence_classes", r["equivalence_classes"]),
            "suppressed": "—" if failed else fig("suppressed", r["suppressed"]),
            "ncp": "—" if failed else fig("ncp", r.get("ncp")),
            "discernibility": "—" if failed else fig("discernibility", r["discernibility"]),
            "seconds": "—" if failed else format_duration(r["seconds"]),
            "verified": r.get("verified", False),
            "risk": risk_cells(r, failed),
        })
    return out


def risk_cells(r: dict, failed: bool = False) -> dict:
    """A run's (or the input's) risk figures as shown; runs stored before they were computed show —."""
    if failed or "marketer_risk" not in r:
        return {"uniques": "—", "highest": "—", "average": "—", "at_risk": "—", "marketer": "—"}
    # worded and formatted by the catalogue of figures, as on the result and risk pages; records at risk: a count
    return {"uniques": fig("sample_uniques", r["sample_uniques"]),
            "highest": fig("prosecutor_risk_highest", r["prosecutor_risk_highest"]),
            "average": fig("prosecutor_risk_average", r["prosecutor_risk_average"]),
            "at_risk": fig("records_at_risk_count", r["records_at_risk"]), "marketer": fig("marketer_risk", r["marketer_risk"])}


@login_required
@require_GET
def comparison(request, job_id):
    j = owned_job(request, job_id)
    if j.kind != Job.COMPARISON:
        raise Http404("this job is not a comparison")
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    report = job_result(j).report
    rows = report.get("comparison", [])
    if request.GET.get("format") == "csv":
        response = HttpResponse(comparison_service.comparison_csv(rows), content_type="text/csv; charset=utf-8")
        filename = f"{Path(j.dataset.original_name).stem}-comparison.csv"
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response
    population_form, population = population_risk(request, j, report)
    return render(request, "anonymizer/comparison.html", {
        "job": j, "dataset": j.dataset, "rows": comparison_rows(rows, j),
        "risk_before": risk_cells(report.get("risk_before") or {}),
        "population_form": population_form, "population": population,
        **comparison_settings(j),
        "duration": format_duration(j.duration),
        "charts": comparison_service.comparison_figures(rows),
    })


def population_risk(request, job: Job, report: dict) -> tuple[PopulationForm, dict | None]:
    """The page's population form and, once it is submitted (a GET with ``population``), the journalist risk and
    population uniqueness of the input and of every run (services.comparison_risk), formatted; a bad choice is
    an error on the form."""
    populations = risk_service.population_choices(job.dataset)
    if "population" not in request.GET:
        return PopulationForm(populations=populations, initial={"sampling_fraction": 0.01}), None
    form = PopulationForm(request.GET, populations=populations)
    if not form.is_valid():
        return form, None
    try:
        figures = comparison_risk.comparison_population_risk(job, report, form.population_options(),
                                                             form.cleaned_data["threshold"])
    except InputError as exc:
        form.add_error(None, str(exc))
        return form, None
    runs = [{"algorithm": algorithm_label(r["algorithm"]), "k": r["k"], "error": r["error"], "stored": r["stored"],
             **population_cells(r["figures"])} for r in figures["runs"]]
    return form, {"model": figures["population"], "before": population_cells(figures["before"]), "runs": runs,
                  "table_uniques": figures["before"]["table_uniques"]}


def population_cells(figures: dict | None) -> dict:
    """One row of the population table as shown: π, journalist risk, and population uniques by Dankar's choice
    with every estimator (a value, or "did not converge" with the reason)."""
    if not figures or figures.get("journalist_risk_highest") is None:
        return {"shown": False}
    pu = figures["population_uniqueness"]
    chosen = pu["dankar"]
    estimators = [{"label": ESTIMATOR_LABELS[name], "converged": e["converged"], "reason": e["reason"],
                   "uniques": fig("population_uniques", e["uniques"]) if e["converged"] else "",
                   "chosen": name == chosen["model"]}
                  for name, e in pu["estimators"].items()]
    return {
        "shown": True, "records": f"{figures['records']:,}", "fraction": f"{figures['sampling_fraction']:.6g}",
        "j_highest": fig("journalist_risk_highest", figures["journalist_risk_highest"]),
        "j_average": fig("journalist_risk_average", figures["journalist_risk_average"]),
        "j_at_risk": fig("journalist_records_at_risk", figures["journalist_records_at_risk"]),
        "chosen": ESTIMATOR_LABELS.get(chosen["model"], "none needed") if chosen["model"] else "none needed",
        "chosen_converged": chosen["converged"],
        "chosen_uniques": fig("population_uniques", chosen["uniques"]) if chosen["converged"] else "",
        "chosen_share": fig("population_uniqueness", chosen["share"]) if chosen["converged"] else "",
        "chosen_reason": pu["estimators"].get(chosen["model"] or "", {}).get("reason", ""),
        "why": chosen["why"], "estimators": estimators,
    }
