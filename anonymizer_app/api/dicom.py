"""DICOM in the API (services/dicom.py, the web upload's form and checks in dicom_forms.py): upload a zip (``archive``) or
several DICOM files (``files``, repeated) as a dataset whose table is the chosen header attributes, one row
per file, series or study; download a run's de-identified DICOM files (a zip built from its published rows).
Runs go through ``/api/v1/runs/`` as for any dataset."""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from django.utils.datastructures import MultiValueDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from ..dicom_forms import DicomUploadForm
from ..engine import InputError
from ..engine import dicom as dicom_engine
from ..models import Job
from ..services import dicom
from .common import owned_job, refused
from .datasets import DatasetDetailSerializer
from .serializers import ApiErrorSerializer


class DicomUploadSerializer(serializers.Serializer):
    archive = serializers.FileField(required=False, help_text="a zip of DICOM files")
    files = serializers.ListField(child=serializers.FileField(), required=False,
                                  help_text="DICOM files (instead of a zip), the field repeated")
    level = serializers.ChoiceField(choices=list(dicom_engine.LEVELS), help_text="one row per file, series or study")
    attributes = serializers.ListField(child=serializers.CharField(), required=False,
                                       help_text="keywords or tags (repeat the field); default: those the level's "
                                                 "rows share among the usual identifiers and quasi-identifiers")
    name = serializers.CharField(required=False, allow_blank=True)


class DicomDatasetSerializer(DatasetDetailSerializer):
    dicom = serializers.SerializerMethodField()

    class Meta(DatasetDetailSerializer.Meta):
        fields = [*DatasetDetailSerializer.Meta.fields, "dicom"]

    def get_dicom(self, obj) -> dict:
        return dicom.describe(obj) or {}


class DicomUpload(APIView):
    throttle_scope = "upload"
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": DicomUploadSerializer},
                   responses={201: DicomDatasetSerializer, 400: ApiErrorSerializer, 413: ApiErrorSerializer},
                   summary="Upload DICOM files: their header attributes become a dataset (the profile's roles "
                           "proposed); a file that is not DICOM is named and nothing is stored", tags=["datasets"])
    def post(self, request):
        files = request.FILES  # parses the body: the upload limit handler may refuse it here
        too_big = getattr(request._request, "upload_refused", "")
        if too_big:
            return refused(f"files: {too_big}", status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        level = request.data.get("level", "file")
        attributes = request.data.getlist("attributes") if hasattr(request.data, "getlist") else []
        if not attributes and level in dicom_engine.LEVELS:
            attributes = [a.keyword for a in dicom_engine.default_attributes(level)]
        known = {a.keyword for a in dicom_engine.DEFAULT_ATTRIBUTES}
        data = {"level": level, "name": request.data.get("name", ""),
                "attributes": [a for a in attributes if a in known],
                "other": ",".join(a for a in attributes if a not in known)}
        form = DicomUploadForm(data, MultiValueDict({k: v for k, v in (("archive", files.getlist("archive")),
                                                                       ("folder", files.getlist("files"))) if v}))
        if not form.is_valid():
            errors = {k: [str(m) for m in v] for k, v in form.errors.items()}
            return refused("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()), errors=errors)
        d = form.cleaned_data
        try:
            dataset = dicom.create_dicom_dataset(request.user, d["uploads"], d["level"], d["names"],
                                                 name=d["name"].strip() or None)
        except InputError as exc:
            return refused(str(exc), errors={"files": [str(exc)]})
        return Response(DicomDatasetSerializer(dataset).data, status=status.HTTP_201_CREATED)


class DicomDownload(APIView):
    throttle_scope = "download"
    @extend_schema(responses={(200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY),
                              400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="A run's de-identified DICOM files (zip), built from its published rows",
                   tags=["runs"])
    def get(self, request, job_id):
        job = owned_job(request, job_id)
        if job.kind != Job.RUN or not dicom.is_dicom(job.dataset):
            raise Http404("this run's dataset is not a set of DICOM files")
        if job.status != Job.SUCCEEDED or not hasattr(job, "result"):
            return refused(f"the run has no result (status: {job.status})")
        try:
            chunks = dicom.result_archive(job)
        except InputError as exc:
            return refused(str(exc))
        return dicom.zip_response(chunks, job)


urlpatterns = [
    path("datasets/", DicomUpload.as_view(), name="api-dicom-upload"),
    path("runs/<uuid:job_id>/download/", DicomDownload.as_view(), name="api-dicom-download"),
]
