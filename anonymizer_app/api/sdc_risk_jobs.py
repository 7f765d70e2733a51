"""SUDA2 on a worker in the API (services.sdc_risk_jobs, the risk page's button): POST /sdc-risk/datasets/<id>/ queues
a job of kind "sdc-risk" of a dataset on key variables, POST /sdc-risk/runs/<job>/ one of a run's result before and
after; they are polled and cancelled like any job (GET /runs/<job>/, POST /runs/<job>/cancel/), and
GET /sdc-risk/<job>/ gives the stored figures once it has succeeded (with "stale" when the dataset's column roles
changed since). POST /datasets/<id>/risk/ and /runs/<id>/risk/ with "sdc" also show them above the in-request limit.
Owner-only: another user's dataset or job is a 404."""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError
from ..engine.measure.risk.sdc_individual import METHODS
from ..models import Job
from ..services import risk as risk_service
from ..services import sdc_risk_jobs
from .common import owned_dataset, owned_job, queue, refused
from .parsers import BoundedJSONParser as JSONParser
from .runs import JobSerializer
from .serializers import ApiErrorSerializer


class SdcRiskJobSerializer(serializers.Serializer):
    qi = serializers.ListField(child=serializers.CharField(), required=False, default=list, max_length=1000,
                               help_text="the key variables (a dataset's; default: its quasi-identifiers). A run: "
                                         "its own")
    # named as POST /datasets/<id>/risk/ names them
    sdc_method = serializers.ChoiceField(choices=list(METHODS), required=False, default="approx",
                                         help_text="individual-risk method of the figures stored beside SUDA2")
    sdc_max_global_risk = serializers.FloatField(required=False, default=0.01, min_value=0.0001, max_value=0.9999)


def _options(d: dict) -> dict:
    return {"method": d["sdc_method"], "max_global_risk": d["sdc_max_global_risk"], "suda": True}


class DatasetSdcRiskJob(APIView):
    throttle_scope = "run"
    parser_classes = [JSONParser]

    @extend_schema(request=SdcRiskJobSerializer,
                   responses={201: JobSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Compute a dataset's SUDA2 and risk with sampling weights on a worker (no row cap)",
                   tags=["risk"])
    def post(self, request, dataset_id: int):
        ds = owned_dataset(request, dataset_id)
        s = SdcRiskJobSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        try:
            job = sdc_risk_jobs.create_dataset_job(ds, d["qi"] or risk_service.default_qi(ds), _options(d))
        except InputError as exc:
            return refused(str(exc))
        return Response(JobSerializer(queue(job)).data, status=status.HTTP_201_CREATED)


class RunSdcRiskJob(APIView):
    throttle_scope = "run"
    parser_classes = [JSONParser]

    @extend_schema(request=SdcRiskJobSerializer,
                   responses={201: JobSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Compute a run's SUDA2 and risk with sampling weights before and after on a worker",
                   tags=["risk"])
    def post(self, request, job_id):
        source = owned_job(request, job_id)
        s = SdcRiskJobSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        try:
            job = sdc_risk_jobs.create_result_job(source, _options(s.validated_data))
        except InputError as exc:
            return refused(str(exc))
        return Response(JobSerializer(queue(job)).data, status=status.HTTP_201_CREATED)


class SdcRiskJobFigures(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: ApiErrorSerializer},
                   summary="The stored figures of an sdc-risk job: the dataset's report, or before and after (null "
                           "until it has succeeded)", tags=["risk"])
    def get(self, request, job_id):
        job = owned_job(request, job_id)
        if job.kind != Job.SDC_RISK:
            raise Http404("this job does not compute SUDA2")
        spec = sdc_risk_jobs.spec_of(job)
        figures = sdc_risk_jobs.figures_of(job)
        return Response({"job": JobSerializer(job).data, "target": spec.get("target"),
                         "source_job": spec.get("source_job"), "key_variables": spec.get("keys"),
                         "stale": sdc_risk_jobs.is_stale(job) if figures is not None else None, "figures": figures})


urlpatterns = [
    path("datasets/<int:dataset_id>/", DatasetSdcRiskJob.as_view(), name="api-dataset-sdc-risk-job"),
    path("runs/<uuid:job_id>/", RunSdcRiskJob.as_view(), name="api-run-sdc-risk-job"),
    path("<uuid:job_id>/", SdcRiskJobFigures.as_view(), name="api-sdc-risk-job"),
]
