"""Set-valued data in the API: upload a transaction file (the web's items upload: its form, layout detection and
limits), the records & items summary of a transaction dataset or of a table's set-valued column (the items page's
figures), a k^m run (Apriori with an item hierarchy, or dynamic hierarchies: the items run form and
services.setvalued.create_set_job; the job runs through the one pipeline and its publishing gate), and the
result's published records and generalization rules (the web downloads, formulas neutralized). The job itself is
polled, cancelled and deleted under /runs/ like any run."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError
from ..engine.setvalued import SET_ALGORITHMS
from ..services import downloads, setvalued
from ..setvalued_forms import ITEM_DELIMITER_CHOICES, LAYOUT_CHOICES, SetRunForm, SetUploadForm, item_library
from .common import owned_dataset, owned_job, queue, refused
from .datasets import DatasetDetailSerializer
from .parsers import BoundedJSONParser as JSONParser
from .runs import JobSerializer
from .serializers import ApiErrorSerializer


def _form_refusal(form) -> Response:
    errors = {name: [str(m) for m in msgs] for name, msgs in form.errors.items()}
    return refused("; ".join(f"{n}: {' '.join(m)}" if n != "__all__" else " ".join(m) for n, m in errors.items()),
                   errors=errors)


class ItemsUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="one record per line, items separated by a delimiter (.txt, .csv, "
                                           ".tsv), or a table with a set-valued column")
    name = serializers.CharField(required=False, help_text="default: the file name")
    layout = serializers.ChoiceField(choices=["auto", *(v for v, _ in LAYOUT_CHOICES)], required=False,
                                     default="auto")
    item_delimiter = serializers.ChoiceField(choices=["auto", *(v for v, _ in ITEM_DELIMITER_CHOICES)],
                                             required=False, default="auto")
    record_id = serializers.ChoiceField(choices=["auto", "yes", "no"], required=False, default="auto",
                                        help_text="the first field of each line is the record's id")


class ItemsUpload(APIView):
    throttle_scope = "upload"
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": ItemsUploadSerializer},
                   responses={201: DatasetDetailSerializer, 400: ApiErrorSerializer, 413: ApiErrorSerializer},
                   summary="Upload set-valued data (the web items upload: layout detected or chosen)",
                   tags=["set-valued"])
    def post(self, request):
        files = request.FILES  # parses the body: the upload limit handler may refuse it here
        too_big = getattr(request._request, "upload_refused", "")
        if too_big:
            return refused(f"file: {too_big}", status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        # the web form's "detect" choices are the API's defaults
        data = {"layout": "auto", "item_delimiter": "auto", "record_id": "auto",
                **{k: v for k, v in request.data.items() if k != "file"}}
        form = SetUploadForm(data, files)
        if not form.is_valid():
            return _form_refusal(form)
        d = form.cleaned_data
        try:
            ds = setvalued.upload(request.user, d["file"], d["file"].name, d["layout"], form.delimiter(),
                                  d["record_id"], name=d["name"] or None)
        except InputError as exc:
            return refused(f"file: {exc}", errors={"file": [str(exc)]})
        return Response(DatasetDetailSerializer(ds).data, status=status.HTTP_201_CREATED)


class TopItemSerializer(serializers.Serializer):
    item = serializers.CharField()
    records = serializers.IntegerField(help_text="records holding the item")


class ItemsSummarySerializer(serializers.Serializer):
    dataset = serializers.IntegerField()
    layout = serializers.CharField()
    column = serializers.CharField(allow_null=True, help_text="a table's set-valued column; null: transactions")
    item_delimiter = serializers.CharField()
    record_id = serializers.BooleanField()
    records = serializers.IntegerField()
    items = serializers.IntegerField(help_text="distinct items")
    per_record_min = serializers.IntegerField()
    per_record_mean = serializers.FloatField()
    per_record_max = serializers.IntegerField()
    repeated_records = serializers.IntegerField(help_text="records that hold an item more than once")
    repeated_rule = serializers.CharField()
    top_items = TopItemSerializer(many=True, help_text="the most frequent items")


class ItemsSummary(APIView):
    @extend_schema(responses={200: ItemsSummarySerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Records and items: the items page's summary", tags=["set-valued"])
    def get(self, request, dataset_id):
        ds = owned_dataset(request, dataset_id)
        column = None
        try:
            if ds.is_transactions:
                tx, delimiter = setvalued.transactions(ds), ds.item_delimiter
            else:
                column = setvalued.set_column(ds)
                if column is None:
                    return refused("dataset: a table without a set-valued column has no items; mark one on the "
                                   "web items page")
                tx, delimiter = setvalued.column_records(ds, column.name, column.item_delimiter), column.item_delimiter
            figures = setvalued.figures(tx)
        except InputError as exc:
            return refused(str(exc))
        figures["top_items"] = [{"item": str(item), "records": int(n)} for item, n in figures["top_items"]]
        return Response({"dataset": ds.pk, "layout": ds.layout, "column": column.name if column else None,
                         "item_delimiter": delimiter, "record_id": bool(ds.record_id), **figures})


class ItemsRunSerializer(serializers.Serializer):
    k = serializers.IntegerField(min_value=-2**31, max_value=2**31 - 1,
                                 help_text="every set of at most m items that occurs is held by at least k records")
    m = serializers.IntegerField(min_value=-2**31, max_value=2**31 - 1, help_text="the adversary knows up to m items")
    set_algorithm = serializers.ChoiceField(choices=list(SET_ALGORITHMS),
                                            help_text="apriori (needs item_hierarchy) or dynamic (hierarchies "
                                                      "built from the data)")
    item_hierarchy = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2**63 - 1,
                                              help_text="a hierarchy of your library (GET /hierarchies/)")
    item_suppression = serializers.BooleanField(required=False, default=True,
                                                help_text="suppress an item that reaches the hierarchy's root")
    numeric_items = serializers.BooleanField(required=False, default=False,
                                             help_text="dynamic: the items are ordered numbers, merged into ranges "
                                                       "([20000-30500]); otherwise items are nominal, merged into sets")


class ItemsRun(APIView):
    throttle_scope = "run"
    parser_classes = [JSONParser]

    @extend_schema(request=ItemsRunSerializer,
                   responses={201: JobSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="A k^m run of a transaction dataset (the web items run form); poll it at /runs/<id>/",
                   tags=["set-valued"])
    def post(self, request, dataset_id):
        s = ItemsRunSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        ds = owned_dataset(request, dataset_id)
        if not ds.is_transactions:
            return refused("dataset: a table runs through POST /runs/ (its set-valued column with the 'set-m', "
                           "'set-set_algorithm', 'set-hierarchy' fields)")
        data = {"k": d["k"], "m": d["m"], "set_algorithm": d["set_algorithm"]}
        if d.get("item_hierarchy") is not None:
            data["item_hierarchy"] = d["item_hierarchy"]
        if d["item_suppression"]:  # a form's unticked box is absent
            data["item_suppression"] = "on"
        if d["numeric_items"]:
            data["numeric_items"] = "on"
        form = SetRunForm(data, hierarchies=item_library(request.user))
        if not form.is_valid():
            return _form_refusal(form)
        c = form.cleaned_data
        try:
            job = setvalued.create_set_job(ds, c["set_algorithm"], c["k"], c["m"], c["item_suppression"],
                                           form.hierarchy(), numeric_items=c["numeric_items"])
        except InputError as exc:
            return refused(str(exc))
        return Response(JobSerializer(queue(job)).data, status=status.HTTP_201_CREATED)


TEXT = OpenApiResponse(OpenApiTypes.BINARY, description="the file")


class ItemsRecords(APIView):
    throttle_scope = "download"
    @extend_schema(responses={(200, "text/plain"): TEXT, 404: ApiErrorSerializer},
                   summary="The published records of a transaction run (one per line, the input's layout)",
                   tags=["set-valued"])
    def get(self, request, job_id):
        return downloads.records_download(owned_job(request, job_id))


class ItemsRules(APIView):
    throttle_scope = "download"
    @extend_schema(responses={(200, "text/csv"): TEXT, 404: ApiErrorSerializer},
                   summary="The generalization rules (item;generalized item), or the dynamic hierarchy built",
                   tags=["set-valued"])
    def get(self, request, job_id):
        return downloads.rules_download(owned_job(request, job_id))


urlpatterns = [
    path("", ItemsUpload.as_view(), name="api-items-upload"),
    path("<int:dataset_id>/", ItemsSummary.as_view(), name="api-items"),
    path("<int:dataset_id>/runs/", ItemsRun.as_view(), name="api-items-run"),
    path("results/<uuid:job_id>/records/", ItemsRecords.as_view(), name="api-items-records"),
    path("results/<uuid:job_id>/rules/", ItemsRules.as_view(), name="api-items-rules"),
]
