"""Risk analysis pages: a dataset's risk before any run (reachable from the dataset's tabs right after the
upload), and a result's figures before and after (the dataset's rows against the published rows).

Both compute in the request (services.risk caps the QI combinations so that none runs long) and store
nothing; the form is a GET form. Above its in-request limit, SUDA2 comes from a job (services.sdc_risk_jobs,
views.sdc_risk_jobs) once one has run. Owner-only: another user's dataset or job is a 404.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..engine import InputError
from ..engine.measure.figure_catalogue import FIGURES as CATALOGUE
from ..engine.measure.figure_catalogue import RISK_ANALYSIS
from ..models import Job
from ..plotly_text import plotly_escape
from ..risk_forms import RiskForm
from ..sdc_risk_forms import SdcRiskForm
from ..services import datasets as dataset_service
from ..services import identifier_suggestions, sdc_risk_jobs
from ..services import risk as risk_service
from ..services import sdc_risk as sdc_risk_service
from .common import job_result, owned_dataset, owned_job

BAND_COLORS = ["#2f855a", "#38a169", "#68d391", "#d69e2e", "#dd6b20", "#c05621", "#e53e3e", "#c53030", "#9b2c2c"]
ESTIMATOR_LABELS = {"pitman": "Pitman", "zayatz": "Zayatz", "snb": "SNB (slide negative binomial)"}


def band_chart(series: list[tuple[str, list[dict]]], title: str) -> dict:
    """Records per risk band, one bar trace per analysed table (before, after)."""
    data = []
    for i, (name, bands) in enumerate(series):
        data.append({"type": "bar", "name": plotly_escape(name), "x": [plotly_escape(b["label"]) for b in bands],
                     "y": [b["records"] for b in bands],
                     "marker": {"color": BAND_COLORS if len(series) == 1 else ["#1f4e79", "#c05621"][i % 2]},
                     "hovertemplate": "%{x}: %{y:,} records<extra></extra>"})
    layout = {"title": {"text": plotly_escape(title)}, "barmode": "group", "height": 320,
              "margin": {"l": 60, "r": 20, "t": 40, "b": 60}, "showlegend": len(series) > 1,
              "xaxis": {"title": {"text": "risk of re-identification"}, "type": "category"},
              "yaxis": {"title": {"text": "records"}}}
    return {"data": data, "layout": layout}


def estimator_rows(report: dict) -> list[dict]:
    """Population uniqueness per estimator, Dankar's choice marked."""
    pu = report.get("population_uniqueness")
    if not pu:
        return []
    chosen = pu["dankar"]["model"]
    return [{"model": name, "label": ESTIMATOR_LABELS[name], "converged": e["converged"], "uniques": e["uniques"],
             "share": e["share"], "reason": e["reason"], "chosen": name == chosen}
            for name, e in pu["estimators"].items()]


def _given_as(report: dict | None) -> str:
    """How the population was given, unless it is the sampling fraction shown beside it anyway."""
    source = ((report or {}).get("population") or {}).get("source", "")
    return "" if source.startswith("sampling fraction") else source


def _form(request, columns: list[str], default_qi: list[str], populations: list) -> RiskForm:
    if request.GET:
        return RiskForm(request.GET, columns=columns, populations=populations)
    if default_qi:  # right after the upload: the QIs marked so far, no population model
        return RiskForm({"qi": default_qi, "population": "none", "threshold": 0.2, "combinations": 1},
                        columns=columns, populations=populations)
    return RiskForm(columns=columns, populations=populations, initial={"qi": default_qi})


@login_required
@require_GET
def dataset_risk(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    columns = dataset_service.dataset_columns(ds)
    default_qi = risk_service.default_qi(ds)
    form = _form(request, columns, default_qi, risk_service.population_choices(ds))
    report = None
    status = 200
    if form.is_bound:
        if form.is_valid():
            d = form.cleaned_data
            try:
                report = risk_service.dataset_risk(ds, d["qi"], threshold=d["threshold"],
                                                   population=form.population_options(),
                                                   combinations=d["combinations"])
            except InputError as exc:
                form.add_error(None, str(exc))
                status = 400
        else:
            status = 400
    charts = {"bands": band_chart([("records", report["risk_bands"])], "Prosecutor risk")} if report else {}
    sdc_form = _sdc_form(request)
    sdc, sdc_error = None, None
    if report:  # sdcMicro's figures on the same key variables, with the dataset's weight and household columns
        if not sdc_form.is_bound or sdc_form.is_valid():
            try:
                sdc = sdc_risk_jobs.attach_dataset(ds, sdc_risk_service.dataset_sdc_risk(
                    ds, report["quasi_identifiers"], _sdc_options(sdc_form)))
            except InputError as exc:
                sdc_error = str(exc)
        else:
            sdc_error = "; ".join(str(m) for v in sdc_form.errors.values() for m in v)
    if sdc and (sdc.get("suda2") or {}).get("attribute_contributions"):
        charts["sdc_contributions"] = contribution_chart([("records", sdc["suda2"]["attribute_contributions"])])
    detection = identifier_suggestions.for_dataset(ds, dataset_service.stored_table(ds))
    if report and report.get("journalist_risk_bands"):
        charts["journalist"] = band_chart([("records", report["journalist_risk_bands"])], "Journalist risk")
    return render(request, "anonymizer/risk.html", {
        "dataset": ds, "tab": "risk", "form": form, "report": report, "charts": charts,
        "estimators": estimator_rows(report) if report else [], "default_qi": default_qi,
        "population_source": _given_as(report),
        # the columns that look like direct identifiers (names, patient ids, e-mails, ...), whatever the QIs
        "identifier_suggestions": detection.with_confidence("high", "medium"),
        "identifier_free_text": detection.free_text,
        "identifying": {c.name for c in ds.columns.all() if c.role == "identifying"},
        "sdc_form": sdc_form, "sdc": sdc, "sdc_error": sdc_error, "sdc_figures": None,
    }, status=status)


@login_required
@require_GET
def result_risk(request, job_id):
    job = owned_job(request, job_id)
    if job.kind != Job.RUN:  # comparisons and experiments publish no table (the comparison shows its own risk)
        raise Http404("this job has no published table")
    result = job_result(job)
    qi = list(result.report.get("quasi_identifiers") or [])
    # no distinction/separation table on this page: no "QI combinations up to" that would change nothing
    form = RiskForm(request.GET or {"qi": qi, "population": "none", "threshold": 0.2},
                    columns=qi, populations=risk_service.population_choices(job.dataset), combinations=False)
    figures = None
    status = 200
    if form.is_valid():
        try:
            figures = risk_service.result_risk(result, threshold=form.cleaned_data["threshold"],
                                               population=form.population_options())
        except InputError as exc:
            form.add_error(None, str(exc))
            status = 400
    else:
        status = 400
    charts = {}
    if figures:
        charts["bands"] = band_chart([("before", figures["before"]["risk_bands"]),
                                      ("after", figures["after"]["risk_bands"])], "Prosecutor risk, before and after")
    sdc_form = _sdc_form(request)
    sdc: dict = {"sdc_form": sdc_form, "sdc": None, "sdc_error": None, "sdc_figures": None}
    if figures:
        if not sdc_form.is_bound or sdc_form.is_valid():
            try:
                sdc.update(sdc_context(sdc_risk_jobs.attach_result(
                    job, sdc_risk_service.result_sdc_risk(result, _sdc_options(sdc_form)))))
            except InputError as exc:
                sdc["sdc_error"] = str(exc)
        else:
            sdc["sdc_error"] = "; ".join(str(m) for v in sdc_form.errors.values() for m in v)
        if sdc.get("sdc_contributions"):
            charts["sdc_contributions"] = contribution_chart(
                [(side, sdc["sdc_figures"][side]["suda2"]["attribute_contributions"]) for side in ("before", "after")])
    return render(request, "anonymizer/result_risk.html", {
        "job": job, "dataset": job.dataset, "form": form, "figures": figures, "charts": charts,
        "rows": comparison_rows(figures) if figures else [],
        "estimators": bool(figures and figures["before"].get("population_uniqueness")),
        "before_estimators": estimator_rows(figures["before"]) if figures else [],
        "after_estimators": estimator_rows(figures["after"]) if figures else [],
        **sdc,
    }, status=status)


def comparison_rows(figures: dict) -> list[dict]:
    """The before/after table (journalist rows only with a population model), worded and formatted by the
    catalogue of figures (engine.measure.figure_catalogue)."""
    before, after = figures["before"], figures["after"]
    return [{"key": key, "label": CATALOGUE[key].label, "help": CATALOGUE[key].help,
             "before": CATALOGUE[key].format(before.get(source)), "after": CATALOGUE[key].format(after.get(source))}
            for key, source in RISK_ANALYSIS if source in before]


def _sdc_form(request) -> SdcRiskForm:
    """The sdcMicro section's options: bound when the page was asked with any of them, else the defaults."""
    asked = any(key.startswith("sdc-") for key in request.GET)
    return SdcRiskForm(request.GET if asked else None, prefix="sdc")


def _sdc_options(form: SdcRiskForm) -> dict:
    return form.options() if form.is_bound else {"method": "approx", "max_global_risk": 0.01, "suda": True}


def contribution_chart(series: list[tuple[str, list[dict]]]) -> dict:
    """SUDA2's attribute contributions (% of the total SUDA score per key variable), one bar trace per side."""
    data = [{"type": "bar", "name": plotly_escape(name), "x": [plotly_escape(c["variable"]) for c in rows],
             "y": [c["contribution"] for c in rows], "marker": {"color": ["#1f4e79", "#c05621"][i % 2]},
             "hovertemplate": "%{x}: %{y:.3g}% of the SUDA scores<extra></extra>"}
            for i, (name, rows) in enumerate(series)]
    layout = {"title": {"text": "SUDA2 attribute contributions"}, "barmode": "group", "height": 300,
              "margin": {"l": 60, "r": 20, "t": 40, "b": 60}, "showlegend": len(series) > 1,
              "xaxis": {"title": {"text": "key variable"}, "type": "category"},
              "yaxis": {"title": {"text": "% of the SUDA scores"}}}
    return {"data": data, "layout": layout}


def sdc_context(figures: dict) -> dict:
    """The result page's sdcMicro section: the figures before and after as rows, the records above each risk
    level and the attribute contributions side by side."""
    before, after = figures["before"], figures["after"]
    out: dict = {"sdc_figures": figures, "sdc_rows": sdc_risk_service.before_after_rows(figures),
                 "sdc_above": [{"level": b["level"], "before": b["records"], "after": a["records"]}
                               for b, a in zip(before["above_levels"], after["above_levels"])]}
    b_suda, a_suda = before.get("suda2") or {}, after.get("suda2") or {}
    out["sdc_suda_unavailable"] = b_suda.get("unavailable") or a_suda.get("unavailable")
    out["sdc_worker"] = figures.get("suda_worker")
    if b_suda.get("attribute_contributions") is not None and a_suda.get("attribute_contributions") is not None:
        after_by = {c["variable"]: c["contribution"] for c in a_suda["attribute_contributions"]}
        out["sdc_contributions"] = [{"variable": c["variable"], "before": c["contribution"],
                                     "after": after_by.get(c["variable"])} for c in b_suda["attribute_contributions"]]
    return out
