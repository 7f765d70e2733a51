"""SafePub's parameters in the API: from (ε, δ) and the search's share of ε, the sampling probability β and the
smallest class size k a SafePub run uses (the web's /safepub/parameters.json, the same derivation)."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError
from ..services import safepub as safepub_service
from .common import refused
from .serializers import ApiErrorSerializer


class ParametersSerializer(serializers.Serializer):
    epsilon = serializers.FloatField()
    delta = serializers.FloatField()
    search_share = serializers.FloatField(help_text="the share of ε the search spends")
    epsilon_anon = serializers.FloatField(help_text="ε - ε_search: the anonymization's budget")
    epsilon_search = serializers.FloatField()
    beta = serializers.FloatField(help_text="β = 1 - e^(-ε_anon), the sampling probability")
    gamma = serializers.FloatField()
    k = serializers.IntegerField(help_text="the smallest class size: classes below k are suppressed")


class Parameters(APIView):
    @extend_schema(parameters=[OpenApiParameter("epsilon", OpenApiTypes.STR, required=True,
                                                description="ε, 0.01 to 10"),
                               OpenApiParameter("delta", OpenApiTypes.STR, required=False,
                                                description="δ, 1e-10 to 0.1 (default 1e-6)"),
                               OpenApiParameter("search_share", OpenApiTypes.STR, required=False,
                                                description="the search's share of ε, 0.01 to 0.9 (default 0.1)")],
                   responses={200: ParametersSerializer, 400: ApiErrorSerializer},
                   summary="SafePub's β and k for (ε, δ) (computes nothing on data, spends no budget)",
                   tags=["safepub"])
    def get(self, request):
        try:
            p = safepub_service.derive_from(request.query_params)
        except InputError as exc:
            return refused(str(exc))
        return Response(p.to_dict())


urlpatterns = [path("parameters/", Parameters.as_view(), name="api-safepub-parameters")]
