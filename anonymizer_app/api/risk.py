"""Risk analysis in the API: a dataset's re-identification risk before any run, and a result's before and
after; the risk page's form (RiskForm) and services.risk, computed in the request as on the web (the service
caps the QI combinations), nothing stored; above the in-request limit of SUDA2 the "sdc" figures take those of an
sdc-risk job (api.sdc_risk_jobs) once one has run."""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError
from ..engine.measure.figure_catalogue import risk_figures
from ..models import Job
from ..risk_forms import POPULATION_CHOICES, REGION_CHOICES, RiskForm
from ..sdc_risk_forms import SdcRiskForm
from ..services import datasets as dataset_service
from ..services import results, sdc_risk_jobs
from ..services import risk as risk_service
from ..services import sdc_risk as sdc_risk_service
from ..services.results import job_result
from .common import owned_dataset, owned_job, refused
from .parsers import BoundedJSONParser as JSONParser
from .serializers import ApiErrorSerializer


class RiskRequestSerializer(serializers.Serializer):
    qi = serializers.ListField(child=serializers.CharField(), required=False,
                               help_text="quasi-identifiers (a dataset's; default: those marked). A result: its own")
    population = serializers.ChoiceField(choices=[c for c, _ in POPULATION_CHOICES], required=False,
                                         default="none")
    sampling_fraction = serializers.FloatField(required=False, allow_null=True)
    region = serializers.ChoiceField(choices=[c for c, _ in REGION_CHOICES], required=False, allow_null=True)
    population_size = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                               max_value=2**62)
    population_dataset = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                                  max_value=2**31 - 1)
    threshold = serializers.FloatField(required=False, default=0.2)
    combinations = serializers.IntegerField(required=False, default=1, min_value=1, max_value=2**31 - 1)
    # risk with sampling weights (sdcMicro), on the same quasi-identifiers as key variables, with the dataset's
    # sampling-weight and household columns: the answer's "sdc" (a result: "before" and "after")
    sdc = serializers.BooleanField(required=False, default=False,
                                   help_text="add sdcMicro's figures: fk/Fk, individual and global risk, household "
                                             "risk, SUDA2 (and dRisk of a result's changed numeric columns)")
    sdc_method = serializers.ChoiceField(choices=["approx", "exact"], required=False, default="approx")
    sdc_max_global_risk = serializers.FloatField(required=False, default=0.01)
    sdc_suda = serializers.BooleanField(required=False, default=True)


def _form_data(d: dict, qi: list[str]) -> dict:
    data = {k: v for k, v in d.items() if v is not None and k != "qi" and not k.startswith("sdc")}
    data["qi"] = qi
    return data


def _sdc_options(d: dict):
    """SdcRiskForm's options from the request, or the refusal naming the bad one."""
    form = SdcRiskForm({"method": d["sdc_method"], "max_global_risk": d["sdc_max_global_risk"],
                        "suda": "yes" if d["sdc_suda"] else "no"})
    if not form.is_valid():
        return None, refused("; ".join(f"sdc_{k}: {' '.join(str(m) for m in v)}" for k, v in form.errors.items()))
    return form.options(), None


def _invalid(form) -> object:
    errors = {("qi" if k == "__all__" else k): [str(m) for m in v] for k, v in form.errors.items()}
    return refused("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()), errors=errors)


class DatasetRisk(APIView):
    throttle_scope = "run"
    parser_classes = [JSONParser]

    @extend_schema(request=RiskRequestSerializer,
                   responses={200: OpenApiTypes.OBJECT, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Re-identification risk of a dataset as uploaded (the risk page's figures)",
                   tags=["risk"])
    def post(self, request, dataset_id: int):
        ds = owned_dataset(request, dataset_id)
        s = RiskRequestSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        qi = d.get("qi") or risk_service.default_qi(ds)
        form = RiskForm(_form_data(d, qi), columns=dataset_service.dataset_columns(ds),
                        populations=risk_service.population_choices(ds))
        if not form.is_valid():
            return _invalid(form)
        c = form.cleaned_data
        try:
            report = risk_service.dataset_risk(ds, c["qi"], threshold=c["threshold"],
                                               population=form.population_options(), combinations=c["combinations"])
        except InputError as exc:
            return refused(str(exc))
        # each figure's label and text as the risk page shows them (engine.measure.figure_catalogue)
        stored = results.report_json(report)
        answer = {**stored, "figures": risk_figures(stored)}
        if d["sdc"]:
            options, problem = _sdc_options(d)
            if problem is not None:
                return problem
            try:
                answer["sdc"] = results.report_json(sdc_risk_jobs.attach_dataset(
                    ds, sdc_risk_service.dataset_sdc_risk(ds, c["qi"], options)))
            except InputError as exc:
                return refused(f"sdc: {exc}")
        return Response(answer)


class ResultRisk(APIView):
    throttle_scope = "run"
    parser_classes = [JSONParser]

    @extend_schema(request=RiskRequestSerializer,
                   responses={200: OpenApiTypes.OBJECT, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Risk before (the dataset's rows) and after (the published rows) of a run", tags=["risk"])
    def post(self, request, job_id):
        job = owned_job(request, job_id)
        if job.kind != Job.RUN:
            raise Http404("this job has no published table")
        result = job_result(job)
        s = RiskRequestSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        qi = list(result.report.get("quasi_identifiers") or [])
        form = RiskForm(_form_data(s.validated_data, qi), columns=qi,
                        populations=risk_service.population_choices(job.dataset))
        if not form.is_valid():
            return _invalid(form)
        c = form.cleaned_data
        try:
            figures = risk_service.result_risk(result, threshold=c["threshold"], population=form.population_options())
        except InputError as exc:
            return refused(str(exc))
        stored = results.report_json(figures)
        answer = {**stored, "figures": {side: risk_figures(stored[side]) for side in ("before", "after")}}
        if s.validated_data["sdc"]:
            options, problem = _sdc_options(s.validated_data)
            if problem is not None:
                return problem
            try:
                answer["sdc"] = sdc_risk_jobs.attach_result(job, sdc_risk_service.result_sdc_risk(result, options))
            except InputError as exc:
                return refused(f"sdc: {exc}")
        return Response(answer)


dataset_urlpatterns = [path("<int:dataset_id>/risk/", DatasetRisk.as_view(), name="api-dataset-risk")]
run_urlpatterns = [path("<uuid:job_id>/risk/", ResultRisk.as_view(), name="api-run-risk")]
