"""SQL databases in the API (services/sql.py, with the web app's checks: servers off
ANONYMIZER_SQL_ALLOWED_HOSTS, the app's own database and SQLite files outside ANONYMIZER_SQL_SQLITE_DIR are
refused; connections built by services/connections.py). Both directions are jobs on a worker, so that no
request waits for a connection or a long read: the request checks what needs no connection and answers 202.
The import of a table or one SELECT query as a new dataset is a SourceImport (services/source_imports.py),
polled at ``/api/v1/sql/imports/<id>/`` (rows read, of how many when counted; the dataset's id when it
succeeded) and cancelled at ``.../cancel/``; the export of a run's published rows to a new table is a job
(services/sql_jobs.py), polled at ``/api/v1/runs/<id>/``. The published rows in other file formats are the
run's download (``/api/v1/runs/<id>/download/?format=``)."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError
from ..models import Job, SourceImport
from ..services import source_imports, sql_jobs
from ..sql_forms import SqlExportForm, SqlImportForm
from .common import owned_job, queue, refused
from .runs import JobSerializer
from .serializers import ApiErrorSerializer


class SqlImportSerializer(serializers.Serializer):
    url = serializers.CharField(help_text="postgresql://user@host:5432/db or mysql://user@host:3306/db")
    password = serializers.CharField(required=False, allow_blank=True, write_only=True,
                                     help_text="the password, apart from the URL")
    table = serializers.CharField(required=False, allow_blank=True, help_text="table or schema.table")
    query = serializers.CharField(required=False, allow_blank=True,
                                  help_text="one SELECT (or WITH ... SELECT), instead of a table")
    name = serializers.CharField(required=False, allow_blank=True, help_text="default: the table's name")
    keep_password = serializers.BooleanField(required=False, default=False,
                                             help_text="keep the password encrypted for re-imports")


class SqlExportSerializer(serializers.Serializer):
    url = serializers.CharField(help_text="postgresql://user@host:5432/db or mysql://user@host:3306/db")
    password = serializers.CharField(required=False, allow_blank=True, write_only=True)
    table = serializers.CharField(help_text="the new table: table or schema.table")
    replace = serializers.BooleanField(required=False, default=False, help_text="replace the table if it exists")
    drop_suppressed = serializers.BooleanField(required=False, default=False)


class SqlExportJobSerializer(JobSerializer):
    poll = serializers.SerializerMethodField(help_text="GET it until finished_job; options.rows: the rows written")

    class Meta(JobSerializer.Meta):
        fields = [*JobSerializer.Meta.fields, "poll"]

    def get_poll(self, job) -> str:
        return reverse("api-run", args=[job.pk])


def _form_errors(form) -> Response:
    errors = {k: [str(m) for m in v] for k, v in form.errors.items()}
    return refused("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()), errors=errors)


def _data(request) -> dict:
    body = request.data if isinstance(request.data, dict) else {}
    return {k: ("on" if v is True else "" if v is False else v) for k, v in body.items()}


class SourceImportSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField(help_text="the share read (0 until it ends when not counted)")
    finished_import = serializers.BooleanField(source="is_finished", help_text="succeeded, failed or cancelled")
    dataset = serializers.IntegerField(source="dataset_id", allow_null=True,
                                       help_text="the new dataset (GET /api/v1/datasets/<id>/) once succeeded")
    poll = serializers.SerializerMethodField(help_text="GET it until finished_import")

    class Meta:
        model = SourceImport
        fields = ["id", "source", "url", "table", "query", "server", "record", "name", "keep_password", "status",
                  "rows", "total",
                  "progress", "phase", "message", "cancel_requested", "finished_import", "dataset", "poll",
                  "created", "started", "finished"]
        extra_kwargs = {
            "rows": {"help_text": "rows read (sql) or bytes downloaded (zenodo, dataverse)"},
            "total": {"help_text": "the table's rows when counted (sql) or the file's declared bytes (zenodo, dataverse)"},
            "url": {"help_text": "the connection URL without its password (sql) or the file's download link"},
            "table": {"help_text": "the table (sql) or the file's name (zenodo, dataverse)"},
            "server": {"help_text": "zenodo, dataverse: the repository's root URL"},
            "record": {"help_text": "zenodo, dataverse: the record or dataset as named"},
        }

    def get_progress(self, imp) -> float:
        return source_imports.fraction(imp)

    def get_poll(self, imp) -> str:
        return reverse("api-sql-import-detail", args=[imp.pk])


def owned_import(request, import_id) -> SourceImport:
    return get_object_or_404(SourceImport, pk=import_id, owner=request.user)


class SqlImport(APIView):
    throttle_scope = "sql"

    @extend_schema(request=SqlImportSerializer, responses={202: SourceImportSerializer, 400: ApiErrorSerializer},
                   summary="Import a database table or a SELECT query as a new dataset, as a job: 202 with the "
                           "import to poll (GET /api/v1/sql/imports/<id>/: status, rows read, phase, message, the "
                           "dataset's id when it succeeded); read-only, in chunks, the upload's limits",
                   tags=["datasets"])
    def post(self, request):
        data = _data(request)
        data.setdefault("source", "query" if data.get("query") and not data.get("table") else "table")
        form = SqlImportForm(data)
        if not form.is_valid():
            return _form_errors(form)
        d = form.cleaned_data
        by_table = d["source"] == "table"
        try:
            imp = source_imports.create_sql(request.user, d["url"], table=d["table"] if by_table else "",
                                            query="" if by_table else d["query"], name=d["name"],
                                            keep_password=d["keep_password"], password=d["password"] or None)
        except InputError as exc:
            return refused(str(exc))
        imp = source_imports.submit(imp)
        return Response(SourceImportSerializer(imp).data, status=status.HTTP_202_ACCEPTED,
                        headers={"Location": reverse("api-sql-import-detail", args=[imp.pk])})


class SqlImportDetail(APIView):
    @extend_schema(responses={200: SourceImportSerializer, 404: ApiErrorSerializer},
                   summary="An import's status: queued, running (rows read, of how many when the table was "
                           "counted), succeeded (the dataset's id), failed (the reason) or cancelled",
                   tags=["datasets"])
    def get(self, request, import_id):
        return Response(SourceImportSerializer(owned_import(request, import_id)).data)


class SqlImportCancel(APIView):
    @extend_schema(request=None, responses={200: SourceImportSerializer, 404: ApiErrorSerializer,
                                            409: ApiErrorSerializer},
                   summary="Cancel a queued or running import (it stops at its next chunk; nothing is stored)",
                   tags=["datasets"])
    def post(self, request, import_id):
        imp = owned_import(request, import_id)
        if imp.is_finished:
            return refused(f"the import has already {imp.status}", status.HTTP_409_CONFLICT)
        source_imports.cancel(imp)
        imp.refresh_from_db()
        return Response(SourceImportSerializer(imp).data)


class SqlExport(APIView):
    throttle_scope = "sql"
    @extend_schema(request=SqlExportSerializer,
                   responses={202: SqlExportJobSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Write a run's published rows to a new database table (all or nothing), as a job: 202 "
                           "with the job to poll (GET /api/v1/runs/<id>/: status, progress, phase, message; "
                           "options.rows when it succeeded)", tags=["results"])
    def post(self, request, job_id):
        j = owned_job(request, job_id)
        if j.kind not in (Job.RUN, Job.SYNTHESIS) or j.dataset.is_transactions or j.status != Job.SUCCEEDED or not hasattr(j, "result"):
            raise Http404("this job has no table of published rows")
        form = SqlExportForm(_data(request))
        if not form.is_valid():
            return _form_errors(form)
        d = form.cleaned_data
        try:
            export = sql_jobs.create_export(j, d["url"], d["table"], replace=d["replace"],
                                            drop_suppressed=d["drop_suppressed"], password=d["password"] or None)
        except InputError as exc:
            return refused(str(exc))
        export = queue(export)
        return Response(SqlExportJobSerializer(export).data, status=status.HTTP_202_ACCEPTED,
                        headers={"Location": reverse("api-run", args=[export.pk])})


urlpatterns = [
    path("import/", SqlImport.as_view(), name="api-sql-import"),
    path("imports/<uuid:import_id>/", SqlImportDetail.as_view(), name="api-sql-import-detail"),
    path("imports/<uuid:import_id>/cancel/", SqlImportCancel.as_view(), name="api-sql-import-cancel"),
    path("export/<uuid:job_id>/", SqlExport.as_view(), name="api-sql-export"),
]
