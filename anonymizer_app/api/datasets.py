"""Datasets in the API: upload (the web upload's form and ingestion, the same limits and messages), list,
retrieve with columns, preview rows, delete (the web's erasure); columns: roles, types and hierarchy bindings
checked by the columns page's form and the column page's hierarchy check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from hierarchy_editor.forms import SelectHierarchyForm
from hierarchy_editor.services import parsed_hierarchy

from .. import demo
from ..engine import COLUMN_TYPES, EngineError, Format, InputError, Role
from ..engine.io.reader import DELIMITER_NAMES
from ..forms import DELIMITER_CHOICES, ENCODING_CHOICES, ColumnsForm, FormatForm, UploadForm
from ..models import Column, Dataset
from ..services import datasets as dataset_service
from ..services import erasure, identifier_suggestions, sas_uploads
from . import dp, identifiers, risk
from .common import owned_dataset, owned_hierarchy, refused
from .parsers import BoundedJSONParser as JSONParser
from .serializers import ApiErrorSerializer

if TYPE_CHECKING:
    from hierarchy_editor.models import Hierarchy

MAX_PAGE = 1000  # rows per page of a preview or of published rows


class IdentifierSuggestionSerializer(serializers.Serializer):
    """Why a column looks like a direct identifier (engine/model/identifier_detection/)."""

    kind = serializers.CharField(help_text="what it looks like: surname, e-mail, person id, unique values, ...")
    confidence = serializers.ChoiceField(choices=["high", "medium", "low"],
                                         help_text="high: pre-selected as identifying at upload; a run publishing "
                                                   "it as it is is held until publish_as_is (POST /runs/) names it")
    score = serializers.FloatField()
    reason = serializers.CharField()
    role = serializers.CharField(help_text="the role to give it")
    suggested_role = serializers.CharField(help_text="'person id' for an id that repeats across records")
    person_id = serializers.BooleanField()
    rows = serializers.IntegerField()
    distinct = serializers.IntegerField()


class FreeTextFindingSerializer(serializers.Serializer):
    sampled = serializers.IntegerField()
    emails = serializers.IntegerField()
    phones = serializers.IntegerField()
    samples = serializers.ListField(child=serializers.CharField(), help_text="masked")
    message = serializers.CharField()


class ColumnSerializer(serializers.ModelSerializer):
    hierarchy = serializers.IntegerField(source="hierarchy_id", allow_null=True,
                                         help_text="the bound hierarchy of your library; null: the default one")
    identifier_suggestion = serializers.SerializerMethodField()
    free_text_identifiers = serializers.SerializerMethodField()

    class Meta:
        model = Column
        fields = ["name", "position", "type", "inferred_type", "role", "distinct_count", "hierarchy",
                  "item_delimiter", "identifier_suggestion", "free_text_identifiers"]

    def _detection(self, column: Column):
        # one detection per response (cached per stored table), kept in the root serializer's context
        found = self.context.get("identifier_detection")
        if found is None or found[0] != column.dataset_id:
            found = (column.dataset_id, identifier_suggestions.for_dataset(column.dataset))
            self.context["identifier_detection"] = found  # type: ignore[index]  # the root's dict; the stubs say Mapping
        return found[1]

    @extend_schema_field(IdentifierSuggestionSerializer(allow_null=True))
    def get_identifier_suggestion(self, column: Column) -> dict | None:
        s = self._detection(column).for_column(column.name)
        return None if s is None else {k: v for k, v in s.to_dict().items() if k != "column"}

    @extend_schema_field(FreeTextFindingSerializer(allow_null=True))
    def get_free_text_identifiers(self, column: Column) -> dict | None:
        f = self._detection(column).free_text_for(column.name)
        return None if f is None else {k: v for k, v in f.to_dict().items() if k != "column"}


class DatasetSerializer(serializers.ModelSerializer):
    class Meta:
        model = Dataset
        fields = ["id", "name", "original_name", "size_bytes", "kind", "delimiter", "encoding", "has_header",
                  "n_rows", "n_columns", "layout", "created"]


class DatasetDetailSerializer(DatasetSerializer):
    columns = ColumnSerializer(many=True, read_only=True)

    class Meta(DatasetSerializer.Meta):
        fields = DatasetSerializer.Meta.fields + ["columns"]


class DatasetUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text=".csv, .tsv, .txt or .xlsx; Stata .dta, SPSS .sav or SAS .sas7bdat; a .zip "
                                           "of a .sas7bdat and its .sas7bcat format catalog")
    catalog = serializers.FileField(required=False, help_text="with a .sas7bdat: its .sas7bcat format catalog, whose "
                                                              "value labels are shown instead of the codes")
    name = serializers.CharField(required=False, help_text="default: the file name")
    header = serializers.ChoiceField(choices=["auto", "yes", "no"], required=False, default="auto")


class FormatChangeSerializer(serializers.Serializer):
    delimiter = serializers.ChoiceField(
        choices=[name for name, _ in DELIMITER_CHOICES], required=False, help_text="a text file's delimiter, by name",
        error_messages={"invalid_choice": '"{input}" is not a delimiter name; use one of '
                        + ", ".join(f"{name} ({char!r})" for char, name in DELIMITER_NAMES.items())})
    encoding = serializers.ChoiceField(
        choices=[e for e, _ in ENCODING_CHOICES], required=False,
        error_messages={"invalid_choice": '"{input}" is not an encoding offered; use one of '
                        + ", ".join(e for e, _ in ENCODING_CHOICES)})
    header = serializers.BooleanField(required=False, help_text="the first row holds the column names")


class ColumnChangeSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="the column's name")
    role = serializers.ChoiceField(choices=[r.value for r in Role], required=False)
    type = serializers.ChoiceField(choices=list(COLUMN_TYPES), required=False)
    hierarchy = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2**63 - 1,
                                         help_text="a hierarchy of your library covering the column's values; "
                                                   "null: the default hierarchy")


class ColumnsChangeSerializer(serializers.Serializer):
    columns = ColumnChangeSerializer(many=True)


class RowsSerializer(serializers.Serializer):
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    count = serializers.IntegerField(help_text="rows in all")
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.ListField(child=serializers.CharField(allow_null=True)))


PAGE_PARAMETERS = [
    OpenApiParameter("offset", OpenApiTypes.INT, description="first row (0-based)", required=False),
    OpenApiParameter("limit", OpenApiTypes.INT, description=f"rows, at most {MAX_PAGE}", required=False),
]


class PageSerializer(serializers.Serializer):
    offset = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_PAGE, default=100)


def page_of(request) -> tuple[int, int]:
    s = PageSerializer(data=request.query_params)
    s.is_valid(raise_exception=True)
    return s.validated_data["offset"], s.validated_data["limit"]


def _cells(frame) -> list[list[str | None]]:
    return [[None if v is None else str(v) for v in row] for row in frame.itertuples(index=False)]


class DatasetList(APIView):
    throttle_scope = {"POST": "upload"}
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(responses=DatasetSerializer(many=True), summary="Your datasets", tags=["datasets"])
    def get(self, request):
        return Response(DatasetSerializer(Dataset.objects.filter(owner=request.user), many=True).data)

    @extend_schema(request={"multipart/form-data": DatasetUploadSerializer},
                   responses={201: DatasetDetailSerializer, 400: ApiErrorSerializer, 413: ApiErrorSerializer},
                   summary="Upload a table (the web upload's checks and limits)", tags=["datasets"])
    def post(self, request):
        files = request.FILES  # parses the body: the upload limit handler may refuse it here
        too_big = getattr(request._request, "upload_refused", "")
        if too_big:
            return refused(f"file: {too_big}", status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        form = UploadForm(request.data, files)
        if not form.is_valid():
            errors = {k: [str(m) for m in v] for k, v in form.errors.items()}
            return refused("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()), errors=errors)
        f = form.cleaned_data["file"]
        try:
            stored = sas_uploads.prepare(f, f.name, form.cleaned_data["catalog"])  # a SAS file with its catalog
            ds = dataset_service.create_dataset(request.user, stored, f.name, name=form.cleaned_data["name"] or None,
                                                header=form.cleaned_data["header"])
        except InputError as exc:
            return refused(f"file: {exc}", errors={"file": [str(exc)]})
        return Response(DatasetDetailSerializer(ds).data, status=status.HTTP_201_CREATED)


class DatasetDetail(APIView):
    parser_classes = [JSONParser]

    @extend_schema(responses={200: DatasetDetailSerializer, 404: ApiErrorSerializer},
                   summary="A dataset with its columns", tags=["datasets"])
    def get(self, request, dataset_id: int):
        return Response(DatasetDetailSerializer(owned_dataset(request, dataset_id)).data)

    @extend_schema(request=FormatChangeSerializer,
                   responses={200: DatasetDetailSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Re-read the upload with another read format (the preview page's form): column types "
                           "and roles are detected anew", tags=["datasets"])
    def patch(self, request, dataset_id: int):
        ds = owned_dataset(request, dataset_id)
        if ds.is_transactions:
            return refused("a transaction dataset is re-read on the web items page")
        s = FormatChangeSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = {"delimiter": DELIMITER_NAMES.get(ds.delimiter, ds.delimiter), "encoding": ds.encoding,
             "header": ds.has_header, **s.validated_data}
        if not d["header"]:
            del d["header"]  # an unticked box is absent from a form
        form = FormatForm(d, kind=ds.kind)
        if not form.is_valid():
            return refused("; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items()))
        c = form.cleaned_data
        fmt = Format(ds.kind, c.get("delimiter", ds.delimiter), c.get("encoding", ds.encoding), c["header"])
        try:
            dataset_service.reformat_dataset(ds, fmt)
        except InputError as exc:
            return refused(str(exc))
        return Response(DatasetDetailSerializer(Dataset.objects.get(pk=ds.pk)).data)

    @extend_schema(responses={204: None, 404: ApiErrorSerializer},
                   summary="Delete a dataset, its jobs, results and files", tags=["datasets"])
    def delete(self, request, dataset_id: int):
        erasure.erase_dataset(owned_dataset(request, dataset_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DatasetRows(APIView):
    @extend_schema(parameters=PAGE_PARAMETERS, responses={200: RowsSerializer, 400: ApiErrorSerializer,
                                                          404: ApiErrorSerializer},
                   summary="A page of the dataset's rows as read", tags=["datasets"])
    def get(self, request, dataset_id: int):
        ds = owned_dataset(request, dataset_id)
        offset, limit = page_of(request)
        if ds.is_transactions:
            return refused("a transaction dataset has records of items, not rows of columns")
        frame = dataset_service.dataset_rows(ds, offset, offset + limit)
        return Response({"offset": offset, "limit": limit, "count": ds.n_rows,
                         "columns": [str(c) for c in frame.columns], "rows": _cells(frame)})


class DatasetColumns(APIView):
    parser_classes = [JSONParser]

    @extend_schema(responses={200: ColumnSerializer(many=True), 404: ApiErrorSerializer},
                   summary="The dataset's columns", tags=["datasets"])
    def get(self, request, dataset_id: int):
        return Response(ColumnSerializer(owned_dataset(request, dataset_id).columns.all(), many=True).data)

    @extend_schema(request=ColumnsChangeSerializer,
                   responses={200: ColumnSerializer(many=True), 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Set roles, types and hierarchies of some columns (all or nothing)", tags=["datasets"])
    def patch(self, request, dataset_id: int):
        ds = owned_dataset(request, dataset_id)
        if ds.is_transactions:
            return refused("a transaction dataset has no columns")
        s = ColumnsChangeSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        cols = list(ds.columns.select_related("hierarchy"))
        by_name = {c.name: c for c in cols}
        changes = s.validated_data["columns"]
        data = {}
        for c in cols:  # the columns page posts every column: unchanged ones keep their settings
            data[f"type:{c.name}"], data[f"role:{c.name}"] = c.type, c.role
        bindings = {}
        for i, change in enumerate(changes):
            name = change["name"]
            if name not in by_name:
                return refused(f"columns[{i}].name: no column {name!r} in {ds.name!r}")
            if "type" in change:
                data[f"type:{name}"] = change["type"]
            if "role" in change:
                data[f"role:{name}"] = change["role"]
            if "hierarchy" in change:
                bindings[name] = change["hierarchy"]
        stored = set(dataset_service.dataset_columns(ds))
        form = ColumnsForm(data, columns=cols,
                           values=lambda n: dataset_service.distinct_values(ds, n) if n in stored else None,
                           rows=lambda n: dataset_service.load_frame(ds, [n])[n] if n in stored else None)
        if not form.is_valid():
            errors = {("columns" if k == "__all__" else k): [str(m) for m in v] for k, v in form.errors.items()}
            return refused("; ".join(m for v in errors.values() for m in v), errors=errors)
        chosen: dict[str, Hierarchy | None] = {}
        for name, hierarchy_id in bindings.items():
            if hierarchy_id is None:
                chosen[name] = None
                continue
            problem = _binding_problem(request, ds, by_name[name], hierarchy_id)
            if isinstance(problem, str):
                return refused(f"columns: {problem}")
            chosen[name] = problem
        new = form.changes()
        with transaction.atomic():
            for c in cols:
                c.type, c.role = new[c.name]
                fields = ["type", "role"]
                if c.name in chosen:
                    c.hierarchy = chosen[c.name]
                    fields.append("hierarchy")
                c.save(update_fields=fields)
        return Response(ColumnSerializer(ds.columns.all(), many=True).data)


def _binding_problem(request, ds: Dataset, column: Column, hierarchy_id: int):
    """The hierarchy to bind, or why not: the column page's check (SelectHierarchyForm: yours, parsable,
    covering the column's values)."""
    from django.http import Http404


    try:
        owned_hierarchy(request, hierarchy_id)
    except Http404:
        return f"column {column.name!r}: no hierarchy {hierarchy_id} in your library"
    values = dataset_service.distinct_values(ds, column.name)  # coverage needs the distinct values only
    form = SelectHierarchyForm({"hierarchy": hierarchy_id}, user=request.user, values=values,
                               column_name=column.name, parse=parsed_hierarchy)
    if not form.is_valid():
        return " ".join(str(m) for v in form.errors.values() for m in v)
    return form.cleaned_data["hierarchy"]


class DemoData(APIView):
    throttle_scope = "upload"
    @extend_schema(request=None, responses={201: DatasetSerializer(many=True), 400: ApiErrorSerializer},
                   summary="Load the demo datasets (roles and hierarchies set), as the web's demo button",
                   tags=["datasets"])
    def post(self, request):
        try:
            created = demo.load_demo(request.user)
        except EngineError as exc:
            return refused(f"the demo data could not be loaded: {exc}")
        return Response(DatasetSerializer(created, many=True).data, status=status.HTTP_201_CREATED)


urlpatterns = [
    path("", DatasetList.as_view(), name="api-datasets"),
    path("demo/", DemoData.as_view(), name="api-datasets-demo"),
    path("<int:dataset_id>/", DatasetDetail.as_view(), name="api-dataset"),
    path("<int:dataset_id>/rows/", DatasetRows.as_view(), name="api-dataset-rows"),
    path("<int:dataset_id>/columns/", DatasetColumns.as_view(), name="api-dataset-columns"),
    *risk.dataset_urlpatterns,
    *identifiers.dataset_urlpatterns,
    *dp.dataset_urlpatterns,
]
