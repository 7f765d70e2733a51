"""Hierarchies in the API: the library (list, upload a file through the web upload's form and parsers, build
one with the builders and the builder form's parameters, retrieve, export in each file format, delete through
the web's erasure). Uploading or building for a column binds the hierarchy to it, as the column page does."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import path
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from anonymizer_app.engine.model.builders import BUILDERS
from anonymizer_app.engine.model.hierarchy import without_missing
from hierarchy_editor.building import build as build_hierarchy
from hierarchy_editor.building import builder_for, builder_form
from hierarchy_editor.forms import HierarchyUploadForm, field_name
from hierarchy_editor.models import NAME_MAX, Hierarchy, fit_name
from hierarchy_editor.services import column_values, parsed_hierarchy

from ..engine import HierarchyError
from ..engine.model.formats import FORMATS, write_hierarchy
from ..models import Column
from ..services import datasets as dataset_service
from ..services import erasure
from .common import owned_dataset, owned_hierarchy, refused
from .parsers import BoundedJSONParser as JSONParser
from .serializers import ApiErrorSerializer

LEAF_ROWS = 20  # leaves shown with their path in a hierarchy's detail


class BoundColumnSerializer(serializers.Serializer):
    dataset = serializers.IntegerField(source="dataset_id")
    column = serializers.CharField(source="name")


class HierarchySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    source_name = serializers.CharField()
    source_format = serializers.CharField()
    on_conflict = serializers.CharField()
    leaves = serializers.IntegerField()
    height = serializers.IntegerField()
    created = serializers.DateTimeField()


class HierarchyDetailSerializer(HierarchySerializer):
    columns = BoundColumnSerializer(many=True, help_text="the columns using it")
    rows = serializers.ListField(child=serializers.ListField(child=serializers.CharField()),
                                 help_text=f"the first {LEAF_ROWS} leaves with their generalizations")
    error = serializers.CharField(allow_blank=True, help_text="why the stored file no longer parses, if so")


class HierarchyUploadSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True,  # the parser names the empty file
                                 help_text="ARX or Datafly CSV (one row per value), or an Amnesia hierarchy")
    name = serializers.CharField(required=False)
    format = serializers.ChoiceField(choices=["auto", *FORMATS], required=False, default="auto")
    on_conflict = serializers.ChoiceField(choices=["error", "lift", "first"], required=False, default="error")
    dataset = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1,
                                       help_text="with column: bind the hierarchy to this dataset's column")
    column = serializers.CharField(required=False)


class BuildSerializer(serializers.Serializer):
    dataset = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    column = serializers.CharField()
    builder = serializers.CharField(required=False, help_text="a builder of the registry; default: the one of "
                                                              "the column's default hierarchy")
    options = serializers.DictField(required=False, default=dict,
                                    help_text="the builder's parameters by name (GET /registry/); missing ones "
                                              "take the values derived from the data")
    name = serializers.CharField(required=False, max_length=200)


def _column(request, dataset_id: int, name: str) -> tuple[object, Column] | str:
    ds = owned_dataset(request, dataset_id)
    col = ds.columns.filter(name=name).first()
    if col is None:
        return f"column: no column {name!r} in {ds.name!r}"
    return ds, col


def _detail(h) -> dict:
    data = dict(HierarchySerializer(h).data)
    data["columns"] = BoundColumnSerializer(h.columns.order_by("dataset_id", "position"), many=True).data
    data["rows"], data["error"] = [], ""
    try:
        parsed = parsed_hierarchy(h)
    except HierarchyError as exc:
        data["error"] = str(exc)
    else:
        data["rows"] = [[str(parsed.labels[lv][parsed.maps[lv][i]]) for lv in range(parsed.level_count)]
                        for i in range(min(LEAF_ROWS, len(parsed.leaves)))]
    return data


class HierarchyList(APIView):
    throttle_scope = {"POST": "upload"}
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(responses=HierarchySerializer(many=True), summary="Your hierarchy library", tags=["hierarchies"])
    def get(self, request):
        qs = Hierarchy.objects.filter(owner=request.user).defer("content")
        return Response(HierarchySerializer(qs, many=True).data)

    @extend_schema(request={"multipart/form-data": HierarchyUploadSerializer},
                   responses={201: HierarchyDetailSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Upload a hierarchy file (optionally for a column)", tags=["hierarchies"])
    def post(self, request):
        s = HierarchyUploadSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        target = None
        if ("dataset" in d) != ("column" in d):
            return refused("give both dataset and column to bind the hierarchy, or neither")
        if "dataset" in d:
            target = _column(request, d["dataset"], d["column"])
            if isinstance(target, str):
                return refused(target)
        form = HierarchyUploadForm({"name": d.get("name", ""), "format": d["format"], "on_conflict": d["on_conflict"]},
                                   {"file": d["file"]}, user=request.user,
                                   default_name=f"{target[1].name} ({target[0].name})" if target else "")
        if not form.is_valid():
            return refused("; ".join(str(m) for v in form.errors.values() for m in v))
        try:
            h = form.build()
        except HierarchyError as exc:
            return refused(f"file: {exc}")
        h.save()
        if target is not None:
            ds, col = target
            col.hierarchy = h
            col.save(update_fields=["hierarchy"])
            # the column's distinct values (first-seen order, as the listed values were): not its million cells
            values = dataset_service.distinct_values(ds, col.name)
            missing = parsed_hierarchy(h).missing_values(values)
            if missing:  # bound as on the column page, which warns: a run fails until they are covered
                body = _detail(h)
                body["warning"] = (f"{len(missing)} value(s) of column {col.name!r} are not covered by the "
                                   f"hierarchy: a run will fail until they are, e.g. "
                                   + ", ".join(repr(str(v)) for v in missing[:8]))
                return Response(body, status=status.HTTP_201_CREATED)
        return Response(_detail(h), status=status.HTTP_201_CREATED)


class HierarchyBuild(APIView):
    parser_classes = [JSONParser]

    @extend_schema(request=BuildSerializer,
                   responses={201: HierarchyDetailSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Build a hierarchy for a column with a builder, save it and bind it", tags=["hierarchies"])
    def post(self, request):
        s = BuildSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        target = _column(request, d["dataset"], d["column"])
        if isinstance(target, str):
            return refused(target)
        ds, col = target
        if d.get("builder") and d["builder"] not in BUILDERS:
            return refused(f"builder: no builder {d['builder']!r}; choose one of {', '.join(BUILDERS)}")
        values = column_values(ds, col.name)
        key, builder = builder_for(d.get("builder"), col, values)
        known = {p.name: p for p in builder.parameters}
        unknown = [n for n in d["options"] if n not in known and n not in {field_name(p) for p in known.values()}]
        if unknown:
            return refused(f"options: the {key} builder has no parameter {unknown[0]!r}; it has "
                           f"{', '.join(known) or 'none'}")
        form_data = {}
        base = builder_form(builder, col, values)
        for p in builder.parameters:  # the builder page's form, filled with the data's defaults like the page
            fname = field_name(p)
            value = d["options"].get(p.name, d["options"].get(fname, base.fields[fname].initial))
            if p.kind is bool:
                if value in (False, "", None, "false", "0"):
                    continue  # an unticked box is absent from a form
                value = "on"
            form_data[fname] = "" if value is None else str(value)
        form = builder_form(builder, col, values, form_data)
        name = d.get("name") or fit_name(f"{col.name} ({ds.name}) {builder.label.lower()}")
        if len(name) > NAME_MAX:
            return refused(f"name: at most {NAME_MAX} characters (it has {len(name)})")
        parsed, error = build_hierarchy(builder, form, col.name, values)
        if parsed is None:
            return refused(f"{key}: {error}")
        parsed = without_missing(parsed)
        h = Hierarchy(owner=request.user, name=name, source_name=f"{builder.label} builder", source_format="builder",
                      content=parsed.to_csv(";"), delimiter=";", leaves=len(parsed.leaves), height=parsed.height)
        h.save()
        col.hierarchy = h
        col.save(update_fields=["hierarchy"])
        return Response(_detail(h), status=status.HTTP_201_CREATED)


class HierarchyDetail(APIView):
    @extend_schema(responses={200: HierarchyDetailSerializer, 404: ApiErrorSerializer},
                   summary="A hierarchy: its leaves' paths and the columns using it", tags=["hierarchies"])
    def get(self, request, hierarchy_id: int):
        return Response(_detail(owned_hierarchy(request, hierarchy_id)))

    @extend_schema(responses={204: None, 404: ApiErrorSerializer},
                   summary="Delete a hierarchy (its columns fall back to the default one)", tags=["hierarchies"])
    def delete(self, request, hierarchy_id: int):
        erasure.erase_hierarchy(owned_hierarchy(request, hierarchy_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


EXPORT_FILES = {"arx": (".csv", "text/csv"), "datafly": ("-datafly.csv", "text/csv"),
                "amnesia-text": ("-amnesia.txt", "text/plain"), "amnesia-json": ("-amnesia.json", "application/json")}


class HierarchyExport(APIView):
    throttle_scope = "download"
    @extend_schema(responses={(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="the file"),
                              400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="The hierarchy as a file: arx, datafly, amnesia-text or amnesia-json", tags=["hierarchies"])
    def get(self, request, hierarchy_id: int, fmt: str):
        h = owned_hierarchy(request, hierarchy_id)
        if fmt not in FORMATS:
            return refused(f"format: no format {fmt!r}; choose one of {', '.join(FORMATS)}",
                           status.HTTP_404_NOT_FOUND)
        try:
            text = write_hierarchy(parsed_hierarchy(h), fmt)
        except HierarchyError as exc:
            return refused(f"cannot export {h.name!r} as {fmt}: {exc}")
        suffix, content_type = EXPORT_FILES.get(fmt, (f".{fmt}.txt", "text/plain"))
        response = HttpResponse(text, content_type=f"{content_type}; charset=utf-8")
        response["Content-Disposition"] = content_disposition_header(
            as_attachment=True, filename=f"{slugify(h.name) or 'hierarchy'}{suffix}")
        return response


urlpatterns = [
    path("", HierarchyList.as_view(), name="api-hierarchies"),
    path("build/", HierarchyBuild.as_view(), name="api-hierarchy-build"),
    path("<int:hierarchy_id>/", HierarchyDetail.as_view(), name="api-hierarchy"),
    path("<int:hierarchy_id>/export/<str:fmt>/", HierarchyExport.as_view(), name="api-hierarchy-export"),
]
