"""Statistics before and after in the API: the statistics page's figures of a run (services.statistics: per
column counts, numbers and frequencies, the dataset's rows against the published rows) and, with ``a`` and
``b``, the contingency tables and association of two columns. Computed once per result and cached."""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError
from ..services import statistics as statistics_service
from ..services.results import job_result
from .common import owned_job, refused
from .serializers import ApiErrorSerializer

PAIR_PARAMETERS = [
    OpenApiParameter("a", str, required=False, description="first column of a pair (with b): contingency tables "
                                                            "and association before and after"),
    OpenApiParameter("b", str, required=False, description="second column of the pair"),
]


class RunStatistics(APIView):
    throttle_scope = "run"

    @extend_schema(parameters=PAIR_PARAMETERS,
                   responses={200: OpenApiTypes.OBJECT, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Statistics before (the dataset's rows) and after (the published rows) of a run",
                   tags=["statistics"])
    def get(self, request, job_id):
        job = owned_job(request, job_id)
        if job.kind not in statistics_service.PUBLISHING_KINDS:
            raise Http404("this job has no published table")
        result = job_result(job)
        first, second = request.query_params.get("a", ""), request.query_params.get("b", "")
        try:
            figures = statistics_service.result_statistics(result)
            pair = statistics_service.pair_statistics(result, first, second) if first or second else None
        except InputError as exc:
            return refused(str(exc))
        return Response({"statistics": figures, "pair": pair})


urlpatterns = [path("<uuid:job_id>/statistics/", RunStatistics.as_view(), name="api-run-statistics")]
