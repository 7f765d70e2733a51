"""Synthetic data in the API: POST /datasets/<id>/synthesis/ queues a job of kind "synthesis" (services.synthesis,
the web form's path: the same validation, the same ε ledger and refusal); it is polled and cancelled like any job
(GET /runs/<job>/, POST /runs/<job>/cancel/); GET /synthesis/<job>/ gives the guarantee, ε, δ, the budget split
and the figures (each also as the figure catalogue words and formats it) once it has succeeded;
GET /synthesis/<job>/download/?format=csv the synthetic rows in an export format (formulas neutralized).
Owner-only: another user's dataset or job is a 404."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.urls import path
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError
from ..engine.synthesis import SYNTHESIZERS
from ..models import Job
from ..services import exports
from ..services import synthesis as synthesis_service
from .common import owned_dataset, owned_job, queue, refused
from .parsers import BoundedJSONParser as JSONParser
from .runs import JobSerializer
from .serializers import ApiErrorSerializer


class SynthesisSerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=list(SYNTHESIZERS), help_text="a synthesizer of the registry")
    epsilon = serializers.FloatField(required=False, default=1.0, help_text="spent from the dataset's ε ledger")
    delta = serializers.FloatField(required=False, default=synthesis_service.DEFAULT_DELTA)
    columns = serializers.ListField(child=serializers.CharField(), required=False, default=list,
                                    help_text="the columns to synthesize (default: all but the identifiers)")
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**32 - 1)
    holdout = serializers.FloatField(required=False, default=synthesis_service.DEFAULT_HOLDOUT,
                                     help_text="share of rows held out of the synthesis for the membership test")
    bounds = serializers.DictField(child=serializers.ListField(child=serializers.FloatField(), min_length=2,
                                                               max_length=3),
                                   required=False, default=dict,
                                   help_text="numeric column -> [lower, upper] or [lower, upper, bins], chosen "
                                             "without looking at the data")
    options = serializers.DictField(required=False, default=dict, help_text="the method's parameters")


class DatasetSynthesis(APIView):
    throttle_scope = "run"
    parser_classes = [JSONParser]

    @extend_schema(request=SynthesisSerializer,
                   responses={201: JobSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Draw a synthetic table of the dataset (one job; a DP method spends its ε from the "
                           "dataset's ledger, refused past the budget)", tags=["synthesis"])
    def post(self, request, dataset_id):
        dataset = owned_dataset(request, dataset_id)
        s = SynthesisSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        try:
            job = synthesis_service.create_synthesis_job(dataset, request.user, dict(s.validated_data))
        except InputError as exc:
            return refused(str(exc))
        return Response(JobSerializer(queue(job)).data, status=status.HTTP_201_CREATED)


def _synthesis_job(request, job_id) -> Job:
    job = owned_job(request, job_id)
    if job.kind != Job.SYNTHESIS:
        raise Http404("this job draws no synthetic data")
    return job


class SynthesisFigures(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: ApiErrorSerializer},
                   summary="A synthetic set: the guarantee in words, ε, δ, the budget split and the figures (null "
                           "until it has succeeded)", tags=["synthesis"])
    def get(self, request, job_id):
        job = _synthesis_job(request, job_id)
        report = synthesis_service.report_of(job)
        shown = synthesis_service.figure_rows(report["figures"]) if report else []
        return Response({"job": JobSerializer(job).data, "synthesis": report,
                         "figures": [{"key": f["key"], "label": f["label"], "text": f["text"]} for f in shown]})


class SynthesisDownload(APIView):
    throttle_scope = "download"

    @extend_schema(parameters=[OpenApiParameter("format", str, enum=list(exports.EXPORT_FORMATS), required=False)],
                   responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, 400: ApiErrorSerializer,
                              404: ApiErrorSerializer},
                   summary="Download the synthetic rows (spreadsheet formulas neutralized)", tags=["synthesis"])
    def get(self, request, job_id):
        job = _synthesis_job(request, job_id)
        fmt = request.query_params.get("format", "csv")
        if fmt not in exports.EXPORT_FORMATS:
            return refused("format must be one of: " + ", ".join(exports.EXPORT_FORMATS))
        result = job.result if job.status == Job.SUCCEEDED and hasattr(job, "result") else None
        if result is None:
            raise Http404("this job has no synthetic rows")
        try:
            body = exports.export_result(result, fmt)
        except exports.ExportError as exc:
            return refused(str(exc))
        export = exports.EXPORT_FORMATS[fmt]
        response = HttpResponse(body, content_type=export.content_type)
        response["Content-Disposition"] = content_disposition_header(True, f"synthetic-{job.pk}{export.extension}")
        return response


urlpatterns = [
    path("datasets/<int:dataset_id>/", DatasetSynthesis.as_view(), name="api-dataset-synthesis"),
    path("<uuid:job_id>/", SynthesisFigures.as_view(), name="api-synthesis"),
    path("<uuid:job_id>/download/", SynthesisDownload.as_view(), name="api-synthesis-download"),
]
