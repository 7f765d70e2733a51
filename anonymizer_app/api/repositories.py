"""Zenodo and Dataverse in the API (services/remote.py, the web pages' forms and checks): the user's
connections (tokens stored encrypted, never returned), listing a record's files, importing one as a new
dataset through the upload's ingestion (a SourceImport job: 202, polled like an SQL import), and depositing a run's published rows as a new DRAFT (never
published). Servers only from the allow-list (ANONYMIZER_REMOTE_HOSTS)."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError
from ..models import Job, RemoteAccount
from ..remote_forms import ConnectionForm, DepositForm, ImportRemoteForm
from ..services import exports, remote, remote_jobs, source_imports
from .common import object_key, owned_job, queue, refused
from .runs import JobSerializer
from .serializers import ApiErrorSerializer
from .sql import SourceImportSerializer


class RemoteConnectionSerializer(serializers.ModelSerializer):
    class Meta:
        model = RemoteAccount
        fields = ["id", "name", "service", "base_url", "token_hint", "created"]


class RemoteConnectionCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    service = serializers.ChoiceField(choices=list(remote.SERVICES.items()))
    base_url = serializers.CharField(help_text="an allow-listed server, e.g. https://zenodo.org")
    token = serializers.CharField(write_only=True, help_text="the API token; stored encrypted, never returned")


class RemoteSourceSerializer(serializers.Serializer):
    account = serializers.IntegerField(required=False, allow_null=True,
                                       help_text="a connection's id (its server and token); none: a public record")
    service = serializers.ChoiceField(choices=list(remote.SERVICES.items()), required=False, help_text="without a connection")
    base_url = serializers.CharField(required=False, help_text="without a connection: an allow-listed server")
    identifier = serializers.CharField(help_text="Zenodo: record number, DOI or page; Dataverse: doi:... or a file id")


class RemoteImportSerializer(RemoteSourceSerializer):
    file = serializers.CharField(required=False, help_text="the file's name; default: the record's one table file")
    name = serializers.CharField(required=False, help_text="the dataset's name; default: the file's")
    token = serializers.CharField(required=False, write_only=True,
                                  help_text="without a connection: a token for this import only, kept encrypted "
                                            "while it runs and erased when it ends")


class RemoteFileSerializer(serializers.Serializer):
    name = serializers.CharField()
    size = serializers.IntegerField(allow_null=True)
    is_table = serializers.BooleanField(help_text="CSV, TSV, tab, txt, xlsx, dta, sav or sas7bdat: importable")


class RemoteDepositSerializer(serializers.Serializer):
    account = serializers.IntegerField(help_text="the connection (its server and token) to deposit with")
    dataverse = serializers.CharField(required=False, help_text="Dataverse: the collection's alias")
    title = serializers.CharField()
    description = serializers.CharField()
    creators = serializers.ListField(child=serializers.CharField(), help_text="'Family, Given', at least one")
    contact_email = serializers.EmailField(required=False, help_text="Dataverse: required")
    format = serializers.ChoiceField(choices=list(exports.EXPORT_FORMATS), required=False, default="csv")
    drop_suppressed = serializers.BooleanField(required=False, default=False)
    with_report = serializers.BooleanField(required=False, default=False, help_text="add the release report (HTML)")


class RepositoryDepositJobSerializer(JobSerializer):
    poll = serializers.SerializerMethodField(
        help_text="GET it until finished_job; options.draft once succeeded: {service, identifier (Zenodo: the "
                  "deposition id; Dataverse: the persistent id), url (the draft's page, to review and publish "
                  "it), files}")

    class Meta(JobSerializer.Meta):
        fields = [*JobSerializer.Meta.fields, "poll"]

    def get_poll(self, job) -> str:
        return reverse("api-run", args=[job.pk])


def _form_errors(form) -> Response:
    errors = {k: [str(m) for m in v] for k, v in form.errors.items()}
    return refused("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()), errors=errors)


def _body(request) -> dict:
    body = request.data if isinstance(request.data, dict) else {}
    out = {}
    for k, v in body.items():
        if isinstance(v, bool):
            v = "on" if v else ""
        elif isinstance(v, list):
            v = "\n".join(str(x) for x in v)
        elif v is None:
            v = ""
        out[k] = v if isinstance(v, str) else str(v)
    return out


def _source(request, form_class):
    """The valid form, or the error answer."""
    data = _body(request)
    form = form_class(data, owner=request.user)
    return (form, None) if form.is_valid() else (None, _form_errors(form))


def _client(account: RemoteAccount | None, service: str = "", base_url: str = "",
            token: str | None = None) -> remote.Client:
    if account is None:
        if not base_url:
            raise remote.RemoteError("base_url: choose the server (or a connection)")
        return remote.make_client(service, base_url, token)
    return remote.account_client(account)


class RemoteConnections(APIView):
    required_scope = "admin"
    @extend_schema(responses={200: RemoteConnectionSerializer(many=True)}, summary="Your repository connections",
                   tags=["repositories"])
    def get(self, request):
        return Response(RemoteConnectionSerializer(RemoteAccount.objects.filter(owner=request.user), many=True).data)

    @extend_schema(request=RemoteConnectionCreateSerializer, responses={201: RemoteConnectionSerializer, 400: ApiErrorSerializer},
                   summary="Store an API token for Zenodo or Dataverse (encrypted)", tags=["repositories"])
    def post(self, request):
        form = ConnectionForm(_body(request), owner=request.user)
        if not form.is_valid():
            return _form_errors(form)
        d = form.cleaned_data
        try:
            base = remote.normalize_base_url(d["base_url"])
            remote.verify_token(d["service"], remote.make_client(d["service"], base, d["token"]))
        except InputError as exc:
            return refused(str(exc))
        account = RemoteAccount(owner=request.user, service=d["service"], name=d["name"], base_url=base)
        account.set_token(d["token"])
        account.save()
        return Response(RemoteConnectionSerializer(account).data, status=status.HTTP_201_CREATED)


class RemoteConnectionDetail(APIView):
    required_scope = "admin"
    @extend_schema(responses={204: None, 404: ApiErrorSerializer}, summary="Delete a connection and its token",
                   tags=["repositories"])
    def delete(self, request, account_id: int):
        get_object_or_404(RemoteAccount, pk=object_key(account_id), owner=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class RemoteFiles(APIView):
    required_scope = "admin"
    throttle_scope = "sql"
    @extend_schema(request=RemoteSourceSerializer, responses={200: RemoteFileSerializer(many=True), 400: ApiErrorSerializer},
                   summary="List the files of a Zenodo record or a Dataverse dataset", tags=["repositories"])
    def post(self, request):
        form, error = _source(request, ImportRemoteForm)
        if error is not None:
            return error
        d = form.cleaned_data
        account = d["account"]
        try:
            files = remote.list_files(account.service if account else d["service"],
                                      _client(account, d["service"], d["base_url"], d["token"] or None),
                                      d["identifier"])
        except InputError as exc:
            return refused(str(exc))
        return Response([{"name": f.name, "size": f.size, "is_table": f.is_table} for f in files])


class RemoteImport(APIView):
    required_scope = "admin"
    throttle_scope = "sql"
    @extend_schema(request=RemoteImportSerializer, responses={202: SourceImportSerializer, 400: ApiErrorSerializer},
                   summary="Import a record's CSV/TSV/Excel file as a new dataset, as a job: the record's files are "
                           "listed and the file chosen at once (400 when refused); 202 with the import to poll "
                           "(GET /api/v1/sql/imports/<id>/: bytes read of the declared size, the dataset's id when "
                           "it succeeded; cancel at .../cancel/); the upload's ingestion and limits",
                   tags=["repositories"])
    def post(self, request):
        form, error = _source(request, ImportRemoteForm)
        if error is not None:
            return error
        d = form.cleaned_data
        account = d["account"]
        service = account.service if account else d["service"]
        try:
            client = _client(account, d["service"], d["base_url"], d["token"] or None)
            listed = remote.list_files(service, client, d["identifier"])
            chosen = remote.choose_file(listed, d["file"].strip() or None,
                                        f"{remote.SERVICES[service]} {d['identifier'].strip()}")
            imp = source_imports.create_repository(request.user, service, chosen, d["identifier"], account=account,
                                                   server=d["base_url"], name=d["name"], token=d["token"] or None)
        except InputError as exc:
            return refused(str(exc))
        imp = source_imports.submit(imp)
        return Response(SourceImportSerializer(imp).data, status=status.HTTP_202_ACCEPTED,
                        headers={"Location": reverse("api-sql-import-detail", args=[imp.pk])})


class RemoteDeposit(APIView):
    required_scope = "admin"
    throttle_scope = "sql"
    @extend_schema(request=RemoteDepositSerializer,
                   responses={202: RepositoryDepositJobSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Deposit a run's published rows as a new draft on Zenodo or Dataverse (never published), "
                           "as a job: 202 with the job to poll (GET /api/v1/runs/<id>/: status, progress, phase, "
                           "message; options.draft when it succeeded; cancel as any job)",
                   tags=["repositories"])
    def post(self, request, job_id):
        j = owned_job(request, job_id)
        if j.kind not in (Job.RUN, Job.SYNTHESIS) or j.dataset.is_transactions or j.status != Job.SUCCEEDED or not hasattr(j, "result"):
            raise Http404("this job has no table of published rows")
        data = _body(request)
        data.setdefault("format", "csv")
        form = DepositForm(data, owner=request.user)
        if not form.is_valid():
            return _form_errors(form)
        try:
            job = remote_jobs.create_deposit(j, form)
        except InputError as exc:
            return refused(str(exc))
        job = queue(job)
        return Response(RepositoryDepositJobSerializer(job).data, status=status.HTTP_202_ACCEPTED,
                        headers={"Location": reverse("api-run", args=[job.pk])})


urlpatterns = [
    path("connections/", RemoteConnections.as_view(), name="api-remote-connections"),
    path("connections/<int:account_id>/", RemoteConnectionDetail.as_view(), name="api-remote-connection"),
    path("files/", RemoteFiles.as_view(), name="api-remote-files"),
    path("import/", RemoteImport.as_view(), name="api-remote-import"),
    path("deposit/<uuid:job_id>/", RemoteDeposit.as_view(), name="api-remote-deposit"),
]
