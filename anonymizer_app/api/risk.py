"""Risk analysis in the API: a dataset's re-identification risk before any run, and a result's before and
after; the risk page's form (RiskForm) and services.risk, computed in the request as on the web (the service
caps the QI combinations), nothing stored."""

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
from ..services import datasets as dataset_service
from ..services import results
from ..services import risk as risk_service
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


def _form_data(d: dict, qi: list[str]) -> dict:
    data = {k: v for k, v in d.items() if v is not None and k != "qi"}
    data["qi"] = qi
    return data


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
        return Response({**stored, "figures": risk_figures(stored)})


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
        return Response({**stored, "figures": {side: risk_figures(stored[side]) for side in ("before", "after")}})


dataset_urlpatterns = [path("<int:dataset_id>/risk/", DatasetRisk.as_view(), name="api-dataset-risk")]
run_urlpatterns = [path("<uuid:job_id>/risk/", ResultRisk.as_view(), name="api-run-risk")]
