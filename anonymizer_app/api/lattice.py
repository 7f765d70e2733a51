"""The solution lattice of a finished lattice run (Flash, Incognito, Samarati, exhaustive) in the API: the lattice
(every node's levels, tag, metric, frontier; evaluated once on a worker, 202 with its progress meanwhile), one
node's published table and metrics, and "keep this node": a new job through the one pipeline and its publishing
gate, checked against every privacy model of the run (l-diversity, t-closeness, β-likeness, δ-presence... as the
web's keep). The web's lattice pages answer the same functions (services.lattice_pages, services.lattice).

A SafePub run ((ε,δ)-differential privacy) has no lattice and no node to keep: 409 with the reason."""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import engine
from ..models import Job, Result
from ..services import lattice as lattice_service
from ..services import lattice_pages
from ..services import safepub as safepub_service
from .common import owned_job, queue, refused
from .parsers import BoundedJSONParser as JSONParser
from .runs import JobSerializer
from .serializers import ApiErrorSerializer


def _lattice_job(request, job_id) -> Job:
    """The user's finished lattice run with a result (404 otherwise); a SafePub run raises the 409 refusal."""
    job = owned_job(request, job_id)
    if safepub_service.is_dp_run(job):
        raise _Refused(safepub_service.LATTICE_REFUSAL)
    if (not lattice_pages.is_lattice_job(job) or job.status != Job.SUCCEEDED
            or not Result.objects.filter(job=job).exists()):
        raise Http404("this job has no solution lattice (a finished Flash, Incognito, Samarati or exhaustive run)")
    return job


class _Refused(Exception):
    pass


def _answer(request, job_id, handler):
    try:
        return handler(_lattice_job(request, job_id))
    except _Refused as exc:
        return refused(str(exc), status.HTTP_409_CONFLICT)


class PendingSerializer(serializers.Serializer):
    pending = serializers.BooleanField()
    job = serializers.CharField(help_text="the evaluation job (GET /runs/<id>/ polls it too)")
    status = serializers.CharField()
    progress = serializers.FloatField()
    phase = serializers.CharField()
    job_url = serializers.CharField()
    cancel_url = serializers.CharField()
    lattice = serializers.DictField(required=False, help_text="the nodes the run's own search left tagged (the "
                                    "200 answer's fields, 'partial': true; a metric value only where it checked a "
                                    "node), shown until the whole lattice is evaluated")


class LatticeFailedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    retry = serializers.BooleanField(required=False, help_text="?retry=1 starts a new evaluation")
    job = serializers.CharField(required=False)


class Lattice(APIView):
    throttle_scope = "lattice"
    @extend_schema(
        parameters=[OpenApiParameter("retry", OpenApiTypes.STR, enum=["0", "1"], required=False,
                                     description="1: start a new evaluation after a failed or cancelled one"),
                    OpenApiParameter("known", OpenApiTypes.STR, enum=["0", "1"], required=False,
                                     description="0: a 202 without the run's search's nodes (a poller that has "
                                                 "them already)")],
        responses={200: OpenApiTypes.OBJECT, 202: PendingSerializer, 404: ApiErrorSerializer,
                   409: ApiErrorSerializer, 422: LatticeFailedSerializer},
        summary="A lattice run's solution lattice (202 with progress, and the run's search's nodes under 'lattice', "
                "while a worker evaluates it; poll again)",
        description="The object has 'qi', 'heights', 'nodes' (per node: levels, tag, metric, rank...), 'optimum', "
                    "'models', 'kept' (levels -> the kept node's web result page), as the web's lattice page "
                    "reads it. 409: a SafePub run has no lattice.",
        tags=["lattice"])
    def get(self, request, job_id):
        retry = request.query_params.get("retry") == "1"

        def handle(job):
            code, data = lattice_pages.lattice_answer(job, retry, request.query_params.get("known") != "0")
            if "error" in data:  # the API's errors say "detail"
                data = {"detail": data.pop("error"), **data}
            return Response(data, status=code)
        return _answer(request, job_id, handle)


class NodeQuery(serializers.Serializer):
    levels = serializers.CharField(help_text="one generalization level per quasi-identifier, in the lattice's "
                                             "'qi' order, e.g. '1,0,2'")


class Node(APIView):
    throttle_scope = "lattice"
    @extend_schema(parameters=[NodeQuery],
                   responses={200: OpenApiTypes.OBJECT, 400: ApiErrorSerializer, 404: ApiErrorSerializer,
                              409: ApiErrorSerializer, 422: ApiErrorSerializer},
                   summary="One node: its published table (first 50 rows beside the original) and metrics",
                   description="'anonymous' false with 'message' when the node does not meet every model of the "
                               "run; else 'k_achieved', 'suppressed', 'records', 'models', 'transformation', "
                               "'metrics', 'table' and 'kept' (the web result page of this node kept, or null).",
                   tags=["lattice"])
    def get(self, request, job_id):
        q = NodeQuery(data=request.query_params)
        q.is_valid(raise_exception=True)

        def handle(job):
            try:
                levels = lattice_pages.checked_levels(job, q.validated_data["levels"])
                data = lattice_pages.node_detail(job, levels)
            except engine.InputError as exc:
                return refused(str(exc))
            except engine.EngineError as exc:
                return refused(str(exc), status.HTTP_422_UNPROCESSABLE_ENTITY)
            return Response(dict(data, kept=lattice_pages.kept_nodes(job).get(data["levels"])))
        return _answer(request, job_id, handle)


class KeepSerializer(serializers.Serializer):
    levels = serializers.CharField(max_length=1000, help_text="the node to keep, e.g. '1,0,2' (the lattice's "
                                                              "'qi' order)")


class Keep(APIView):
    throttle_scope = "lattice"
    parser_classes = [JSONParser]

    @extend_schema(request=KeepSerializer,
                   responses={201: JobSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer,
                              409: ApiErrorSerializer},
                   summary="Keep a node as a result of its own: a new job (full-domain, the node's levels, the "
                           "run's k, suppression limit and every privacy model) through the publishing gate",
                   description="Poll the job (GET /runs/<id>/); a node that does not meet every model fails "
                               "there and says why. 409: a SafePub run has no node to keep.",
                   tags=["lattice"])
    def post(self, request, job_id):
        s = KeepSerializer(data=request.data)
        s.is_valid(raise_exception=True)

        def handle(job):
            try:
                levels = lattice_pages.checked_levels(job, s.validated_data["levels"])
                kept = lattice_service.keep_node(job, ",".join(map(str, levels)))  # refused by name: a 400
            except engine.EngineError as exc:
                return refused(str(exc))
            new = queue(kept)
            return Response(JobSerializer(new).data, status=status.HTTP_201_CREATED)
        return _answer(request, job_id, handle)


urlpatterns = [
    path("<uuid:job_id>/", Lattice.as_view(), name="api-lattice"),
    path("<uuid:job_id>/node/", Node.as_view(), name="api-lattice-node"),
    path("<uuid:job_id>/keep/", Keep.as_view(), name="api-lattice-keep"),
]
