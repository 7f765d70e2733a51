"""Sources in the API (services/sources): ``GET /api/v1/sources/`` lists every source with where it is
imported (its own endpoint, or the generic one) and its parameters; ``POST /api/v1/sources/<name>/`` imports
from a source that declares its parameters (the generic page's import: the table it fetches goes through the
upload's ingestion) and answers with the new dataset."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine.errors import EngineError
from ..services import sources
from .common import refused
from .datasets import DatasetDetailSerializer
from .parsers import BoundedJSONParser as JSONParser
from .registry import source_entries
from .serializers import ApiErrorSerializer, SourceSerializer


class SourceList(APIView):
    @extend_schema(responses=SourceSerializer(many=True), summary="Where datasets come from", tags=["sources"])
    def get(self, request):
        return Response(source_entries())


class SourceImport(APIView):
    throttle_scope = {"POST": "upload"}
    parser_classes = [JSONParser]

    @extend_schema(request=OpenApiTypes.OBJECT,
                   responses={201: DatasetDetailSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Import a dataset from a source with parameters ({\"name\": ..., \"parameters\": {...}})",
                   tags=["sources"])
    def post(self, request, name: str):
        source = sources.SOURCES.get(name)
        if source is None or not source.generic:
            where = f"; import it through /api/v1/{source.api_path}" if source is not None and source.api_path else ""
            return refused(f"no generic import for the source {name!r}{where}", status.HTTP_404_NOT_FOUND)
        body = request.data if isinstance(request.data, dict) else {}
        given = body.get("parameters") or {}
        if not isinstance(given, dict):
            return refused("parameters: an object of parameter -> value",
                           errors={"parameters": ["an object of parameter -> value"]})
        dataset_name = body.get("name")
        try:
            dataset = sources.import_dataset(request.user, name, given,
                                             str(dataset_name) if dataset_name else None)
        except EngineError as exc:
            return refused(str(exc))
        return Response(DatasetDetailSerializer(dataset).data, status=status.HTTP_201_CREATED)


urlpatterns = [
    path("", SourceList.as_view(), name="api-sources"),
    path("<slug:name>/", SourceImport.as_view(), name="api-source-import"),
]
