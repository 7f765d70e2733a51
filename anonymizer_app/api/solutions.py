"""Two solutions side by side in the API (services/solutions.py, as the web's side-by-side page): two runs of one
dataset, or two nodes of one lattice run, every figure of each with its text and the difference B - A.
Owner-scoped: another user's run, or a run of another dataset as B, is a 404."""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import engine
from ..models import Job, Result
from ..services import lattice_pages
from ..services import solutions as solution_service
from .common import owned_job, refused
from .serializers import ApiErrorSerializer


def _run(request, job_id) -> Job:
    job = owned_job(request, job_id)
    if not solution_service.is_comparable_run(job):
        raise Http404("this job has no result to compare")
    return job


class RunsSideBySide(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: ApiErrorSerializer}, tags=["results"],
                   summary="Two runs of one dataset side by side: settings, figures, models' checks and per-QI "
                           "figures of each, and B - A")
    def get(self, request, job_id, other_id):
        a, b = _run(request, job_id), _run(request, other_id)
        if a.dataset_id != b.dataset_id:
            raise Http404("these runs are not of one dataset")
        data = solution_service.side_by_side(solution_service.run_side(a), solution_service.run_side(b))
        data["statistics"] = solution_service.statistics_rows(a, b)
        return Response(data)


class NodesSideBySide(APIView):
    @extend_schema(parameters=[OpenApiParameter("a", str, description="node A's levels, '0,2,1' (QI order)"),
                               OpenApiParameter("b", str, description="node B's levels")],
                   responses={200: OpenApiTypes.OBJECT, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   tags=["results"], summary="Two nodes of a lattice run's solution lattice side by side")
    def get(self, request, job_id):
        job = owned_job(request, job_id)
        if (not lattice_pages.is_lattice_job(job) or job.status != Job.SUCCEEDED
                or not Result.objects.filter(job=job).exists()):
            raise Http404("this job has no solution lattice")
        try:
            a = lattice_pages.checked_levels(job, request.query_params.get("a", ""))
            b = lattice_pages.checked_levels(job, request.query_params.get("b", ""))
            side_a, side_b = solution_service.node_side(job, a), solution_service.node_side(job, b)
            data = solution_service.side_by_side(side_a, side_b)
            data["statistics"] = solution_service.node_statistics_rows(side_a, side_b)
        except engine.InputError as exc:
            return refused(str(exc))
        except engine.EngineError as exc:
            return refused(str(exc), code=422)
        return Response(data)


urlpatterns = [
    path("<uuid:job_id>/compare/<uuid:other_id>/", RunsSideBySide.as_view(), name="api-runs-side-by-side"),
    path("<uuid:job_id>/lattice-compare/", NodesSideBySide.as_view(), name="api-nodes-side-by-side"),
]
