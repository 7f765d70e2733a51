"""Synthetic data: the dataset's "Synthetic data" tab (/datasets/<id>/synthesis/: method from the registry, ε, δ,
columns, seed, bounds of numeric columns without a hierarchy) queues a job of kind "synthesis"
(services.synthesis; drawn on a worker, never in the request; a DP method's ε charged to the dataset's ledger
first, refused with the ledger's message when the budget would be exceeded) and lists the dataset's earlier
synthetic sets; the job's page (/jobs/<id>/synthesis/) states the guarantee, the budget split, the figures
(through the figure catalogue), a preview of rows and the downloads (/jobs/<id>/synthesis/download/<format>,
the export registry's formats, formulas neutralized by services.exports). Owner-only: another user's dataset or
job is a 404. Every value is escaped by the template."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods

from accounts.throttling import throttle

from ..engine import InputError
from ..engine.measure.figure_catalogue import format_kind
from ..engine.synthesis import SYNTHESIZERS
from ..models import Job
from ..services import exports, privacy_ledger
from ..services import synthesis as synthesis_service
from .common import format_duration, job_result, owned_dataset, owned_job, queue_job


class SynthesisForm(forms.Form):
    method = forms.ChoiceField(label="Method")
    epsilon = forms.FloatField(label="ε (epsilon)", initial=1.0, required=False,
                               help_text="the privacy budget this release spends from the dataset's ledger")
    delta = forms.FloatField(label="δ (delta)", initial=synthesis_service.DEFAULT_DELTA, required=False,
                             help_text="the chance the ε bound fails; well below 1 / the number of records")
    columns = forms.MultipleChoiceField(label="Columns", widget=forms.CheckboxSelectMultiple)
    seed = forms.IntegerField(label="Seed", initial=0, min_value=0)
    holdout = forms.FloatField(label="Rows held out for the membership test (share)", required=False,
                               initial=synthesis_service.DEFAULT_HOLDOUT, min_value=0, max_value=0.9,
                               help_text="never shown to the synthesizer; 0: no membership figure")

    def __init__(self, *args, columns: list[dict], **kwargs):
        super().__init__(*args, **kwargs)
        self.field_columns = columns
        method = self.fields["method"]
        assert isinstance(method, forms.ChoiceField)
        method.choices = [(s.name, f"{s.label}{'' if s.dp else ' — no formal privacy guarantee'}")
                          for s in SYNTHESIZERS.values()]
        chosen = self.fields["columns"]
        assert isinstance(chosen, forms.MultipleChoiceField)
        chosen.choices = [(c["name"], c["name"]) for c in columns]
        self.fields["columns"].initial = [c["name"] for c in columns]
        for c in columns:
            if c["numeric"] and not c["hierarchy"]:
                for end in ("lower", "upper"):
                    self.fields[f"{end}__{c['name']}"] = forms.FloatField(
                        label=f"{c['name']}: {end} bound", required=False)
                self.fields[f"bins__{c['name']}"] = forms.IntegerField(
                    label=f"{c['name']}: bins", required=False, initial=20, min_value=1, max_value=1000)

    def bound_fields(self) -> list[list]:
        return [[self[f"lower__{c['name']}"], self[f"upper__{c['name']}"], self[f"bins__{c['name']}"]]
                for c in self.field_columns if f"lower__{c['name']}" in self.fields]

    def spec_data(self) -> dict:
        data = self.cleaned_data
        bounds = {}
        for c in self.field_columns:
            lower, upper = data.get(f"lower__{c['name']}"), data.get(f"upper__{c['name']}")
            if c["name"] in data["columns"] and lower is not None and upper is not None:
                bounds[c["name"]] = [lower, upper, data.get(f"bins__{c['name']}") or 20]
        return {"method": data["method"], "epsilon": data.get("epsilon"), "delta": data.get("delta"),
                "columns": data["columns"], "seed": data.get("seed") or 0, "bounds": bounds,
                "holdout": data.get("holdout")}


@login_required
@require_http_methods(["GET", "POST"])
@throttle("run")
def synthesis_form(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    if ds.is_transactions:
        raise Http404("a transaction dataset has no columns to synthesize")
    columns = synthesis_service.synthesizable_columns(ds)
    form = SynthesisForm(request.POST or None, columns=columns)
    if request.method == "POST" and form.is_valid():
        try:
            job = synthesis_service.create_synthesis_job(ds, request.user, form.spec_data())
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            queue_job(request, job)
            return redirect("anonymizer:job", job_id=job.pk)
    return render(request, "anonymizer/synthesis.html", {
        "dataset": ds, "tab": "synthesis", "form": form, "synthesizers": list(SYNTHESIZERS.values()),
        "past": synthesis_service.synthesis_jobs(ds)[:10], "ledger": privacy_ledger.state(ds),
        "numeric_with_hierarchy": [c["name"] for c in columns if c["numeric"] and c["hierarchy"]]})


def budget_rows(budget: dict) -> list[dict]:
    return [{"step": str(p.get("step", "")), "amount": format_kind("amount", p.get("rho"))}
            for p in budget.get("parts", [])]


@login_required
@require_GET
def synthesis_result(request, job_id):
    j = owned_job(request, job_id)
    if j.kind != Job.SYNTHESIS:
        raise Http404("this job draws no synthetic data")
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    result = job_result(j)
    report = result.report.get("synthesis") or {}
    header, rows = synthesis_service.preview(result)
    return render(request, "anonymizer/synthesis_result.html", {
        "job": j, "dataset": j.dataset, "report": report, "figures": synthesis_service.figure_rows(report.get("figures", {})),
        "budget": report.get("budget", {}), "budget_rows": budget_rows(report.get("budget", {})),
        "preview_header": header, "preview_rows": rows, "formats": list(exports.EXPORT_FORMATS.values()),
        "duration": format_duration(j.duration), "rare_below": report.get("figures", {}).get("rare_below")})


@login_required
@require_GET
def synthesis_download(request, job_id, fmt: str):
    j = owned_job(request, job_id)
    if j.kind != Job.SYNTHESIS or fmt not in exports.EXPORT_FORMATS:
        raise Http404("no such download")
    result = job_result(j)
    try:
        body = exports.export_result(result, fmt)
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    export = exports.EXPORT_FORMATS[fmt]
    response = HttpResponse(body, content_type=export.content_type)
    response["Content-Disposition"] = content_disposition_header(True, f"synthetic-{j.pk}{export.extension}")
    return response
