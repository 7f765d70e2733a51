"""Runs in the API: submit (the run form, its pre-flight checks and services.jobs.create_job, as the web run
page: the one pipeline and its publishing gate run the job), list, poll status/progress/phase, cancel, delete;
and their results: the report JSON, pages of published rows, the download (the web download itself: formats,
formula neutralization), the configuration and the release report."""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError, Role
from ..engine.measure import figure_catalogue
from ..engine.model.persons import ADVERSARIES
from ..forms import DELIMITER_CHOICES, RunForm, parse_delimiter
from ..models import Dataset, Job
from ..services import downloads, erasure, exports, preflight, pseudonyms, release_report, results, run_submit
from ..services import jobs as job_service
from ..services.results import RESULT_PAGES, job_result
from ..setvalued_forms import SetRunForm, item_library
from . import identifiers, risk
from .common import owned_dataset, owned_job, queue, refused
from .datasets import MAX_PAGE, PAGE_PARAMETERS, page_of
from .parsers import BoundedJSONParser as JSONParser
from .serializers import ApiErrorSerializer


class RunSubmitSerializer(serializers.Serializer):
    dataset = serializers.IntegerField(min_value=1, max_value=2**31 - 1, help_text="a table dataset of yours")
    algorithm = serializers.CharField(help_text="an algorithm of GET /registry/")
    k = serializers.IntegerField(min_value=-2**31, max_value=2**31 - 1)
    suppression_percent = serializers.FloatField(required=False, default=5.0,
                                                 help_text="share of records that may be suppressed, 0-100")
    suppressed_rows = serializers.ChoiceField(choices=["remove", "keep"], required=False, default="remove")
    sensitive = serializers.CharField(required=False, allow_blank=True, default="",
                                      help_text="sensitive column for the reports")
    person_adversary = serializers.ChoiceField(
        choices=list(ADVERSARIES), required=False, default="class",
        help_text="with a person-id column (role 'person id'; every model then counts persons): what the adversary "
                  "knows of a person: " + "; ".join(f"{key}: {text}" for key, text in ADVERSARIES.items()))
    reidentification_table = serializers.BooleanField(
        required=False, default=False,
        help_text="keep the original value behind each pseudonym or surrogate, encrypted with the result and never "
                  "in an export (POST /runs/<id>/reidentification/ with your password downloads it)")
    publish_as_is = serializers.ListField(
        child=serializers.CharField(), required=False, default=list,
        help_text="columns that look like direct identifiers (GET /datasets/<id>/columns/: identifier_suggestion "
                  "of high confidence) but are left insensitive or sensitive, confirmed to be published as they "
                  "are; without this the pre-flight refuses the run naming each")
    fields = serializers.DictField(required=False, default=dict,  # type: ignore[assignment]  # DRF takes declared fields off the class
                                   help_text="further run form fields by name: algorithm options "
                                             "('option:<algorithm>:<parameter>') and privacy models "
                                             "('model:<group>:enabled', 'model:<group>:<parameter>', "
                                             "'model:<group>:column'), as GET /registry/ lists them "
                                             "(form_field); with a set-valued column 'set-m', "
                                             "'set-set_algorithm', 'set-hierarchy'")


class ProblemSerializer(serializers.Serializer):
    field = serializers.CharField(allow_null=True)
    message = serializers.CharField()


class CheckSerializer(serializers.Serializer):
    problems = ProblemSerializer(many=True)


class RefusedRunSerializer(ApiErrorSerializer):
    problems = ProblemSerializer(many=True, required=False)


class JobSerializer(serializers.ModelSerializer):
    dataset = serializers.IntegerField(source="dataset_id")
    finished_job = serializers.BooleanField(source="is_finished", help_text="succeeded, failed or cancelled")
    has_result = serializers.SerializerMethodField()
    reidentification_table = serializers.SerializerMethodField(
        help_text="the run keeps a re-identification table (POST …/reidentification/ with your password)")

    class Meta:
        model = Job
        fields = ["id", "dataset", "kind", "algorithm", "k", "suppression_limit", "sensitive", "options", "models",
                  "person_adversary", "status", "progress", "phase", "message", "cancel_requested", "finished_job", "has_result",
                  "reidentification_table",
                  "created", "started", "finished"]

    def get_has_result(self, job) -> bool:
        return job.status == Job.SUCCEEDED and job.kind not in RESULT_PAGES and job.kind != Job.LATTICE

    def get_reidentification_table(self, job) -> bool:
        return bool((job.config or {}).get("reidentification_table"))


class JobPageSerializer(serializers.Serializer):
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    count = serializers.IntegerField(help_text="your jobs in all (of the dataset, when one is given)")
    results = JobSerializer(many=True, help_text="the page's jobs (as GET /runs/<id>/)")


def _form_for(request, ds: Dataset, data: dict) -> tuple[RunForm, object, object]:
    """The run page's form on this dataset (the same choices of columns and populations), its set-valued
    companion when a column holds sets, and the population chosen, if any."""
    cols = list(ds.columns.all())
    sensitive = [c.name for c in cols if c.role == Role.SENSITIVE.value]
    subset = [c.name for c in cols if c.role in (Role.SENSITIVE.value, Role.INSENSITIVE.value)]
    populations = list(Dataset.objects.filter(owner=request.user).exclude(pk=ds.pk).order_by("name"))
    person = next((c.name for c in cols if c.role == Role.PERSON.value), None)
    form = RunForm(data, sensitive_columns=sensitive, subset_columns=subset, populations=populations,
                   person_column=person)
    set_form = None
    if any(c.item_delimiter for c in cols):
        set_form = SetRunForm(data, prefix="set", with_k=False, hierarchies=item_library(request.user))
    return form, set_form, populations


def _form_data(d: dict) -> dict:
    data = {key: value for key, value in d["fields"].items()}
    data.update(algorithm=d["algorithm"], k=d["k"], suppression_percent=d["suppression_percent"],
                suppressed_rows=d["suppressed_rows"], sensitive=d["sensitive"], person_adversary=d["person_adversary"])
    if d.get("reidentification_table"):
        data["reidentification_table"] = True
    if d.get("publish_as_is"):
        data["publish_as_is"] = list(d["publish_as_is"])
    # a form's unticked box is absent; JSON says false
    return {k: v for k, v in data.items() if v is not False and v is not None}


def _problems(form, set_form, ds: Dataset, populations) -> list[dict]:
    """The form's errors, then the pre-flight checks on the data (the run page's, in its order)."""
    errors = []
    for f in (form, set_form):
        if f is not None and not f.is_valid():
            errors += [{"field": None if name == "__all__" else name, "message": str(m)}
                       for name, msgs in f.errors.items() for m in msgs]
    if errors:
        return errors
    d = form.cleaned_data
    if form.population() is not None:
        return []
    return [p.to_dict() for p in preflight.check_run(ds, d["algorithm"], d["k"], d["suppression_percent"] / 100.0,
                                                     form.privacy_models(),
                                                     publish_as_is=d.get("publish_as_is") or ())]


def _submit_body(request):
    s = RunSubmitSerializer(data=request.data)
    s.is_valid(raise_exception=True)
    d = s.validated_data
    ds = owned_dataset(request, d["dataset"])
    if ds.is_transactions:
        return ds, None, None, None, "dataset: a transaction dataset runs k^m anonymization on the web items page"
    form, set_form, populations = _form_for(request, ds, _form_data(d))
    known = set(form.fields) | ({set_form.add_prefix(name) for name in set_form.fields} if set_form else set())
    unknown = sorted(name for name in d["fields"] if name not in known)
    if unknown:  # a form would ignore them: a misspelt model would run without it
        return ds, None, None, None, (f"fields: no run field {unknown[0]!r} for this dataset; the fields are the "
                                      f"form_field names of GET /registry/")
    return ds, form, set_form, populations, ""


def _refusal(problems: list[dict]) -> Response:
    text = "; ".join(f"{p['field']}: {p['message']}" if p["field"] else p["message"] for p in problems)
    return Response({"detail": text, "problems": problems}, status=status.HTTP_400_BAD_REQUEST)


class RunList(APIView):
    throttle_scope = {"POST": "run"}
    parser_classes = [JSONParser]

    @extend_schema(parameters=[OpenApiParameter("dataset", OpenApiTypes.INT, required=False,
                                                description="only this dataset's jobs"),
                               OpenApiParameter("offset", OpenApiTypes.INT, required=False,
                                                description="first job (0-based, newest first)"),
                               OpenApiParameter("limit", OpenApiTypes.INT, required=False,
                                                description=f"jobs in the page, at most {MAX_PAGE} (default 100)")],
                   responses={200: JobPageSerializer, 400: ApiErrorSerializer},
                   summary="Your jobs, newest first, a page at a time", tags=["runs"], operation_id="runs_list")
    def get(self, request):
        qs = Job.objects.filter(owner=request.user)
        if "dataset" in request.query_params:
            s = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
            try:
                qs = qs.filter(dataset_id=s.run_validation(request.query_params["dataset"]))
            except serializers.ValidationError as exc:
                raise serializers.ValidationError({"dataset": exc.detail}) from None
        offset, limit = page_of(request)
        # newest first with the id as tie-break: two jobs created in the same instant keep one order across pages
        page = qs.order_by("-created", "-pk")[offset:offset + limit]
        return Response({"offset": offset, "limit": limit, "count": qs.count(),
                         "results": JobSerializer(page, many=True).data})

    @extend_schema(request=RunSubmitSerializer,
                   responses={201: JobSerializer, 400: RefusedRunSerializer, 404: ApiErrorSerializer},
                   summary="Submit a run (the run form's validation and pre-flight checks)", tags=["runs"])
    def post(self, request):
        ds, form, set_form, populations, problem = _submit_body(request)
        if problem:
            return refused(problem)
        problems = _problems(form, set_form, ds, populations)
        if problems:
            return _refusal(problems)
        try:
            job = run_submit.create_from_form(form, set_form, ds, populations)
        except InputError as exc:
            return _refusal([{"field": None, "message": str(exc)}])
        # the dataset's identifier treatments and the re-identification choice, as the web run page
        pseudonyms.snapshot(job, bool(form.cleaned_data.get("reidentification_table")))
        job = queue(job)
        return Response(JobSerializer(job).data, status=status.HTTP_201_CREATED)


class RunCheck(APIView):
    parser_classes = [JSONParser]

    @extend_schema(request=RunSubmitSerializer, responses={200: CheckSerializer, 400: ApiErrorSerializer,
                                                           404: ApiErrorSerializer},
                   summary="The pre-flight checks of a run, without submitting it", tags=["runs"])
    def post(self, request):
        ds, form, set_form, populations, problem = _submit_body(request)
        if problem:
            return refused(problem)
        # the submit's own creation, undone: it refuses exactly what the submit refuses
        problems = _problems(form, set_form, ds, populations) or \
            run_submit.creation_problems(form, set_form, ds, populations)
        return Response({"problems": problems})


class RunDetail(APIView):
    @extend_schema(responses={200: JobSerializer, 404: ApiErrorSerializer},
                   summary="A job: status, progress and phase (poll this)", tags=["runs"])
    def get(self, request, job_id):
        return Response(JobSerializer(owned_job(request, job_id)).data)

    @extend_schema(responses={204: None, 404: ApiErrorSerializer},
                   summary="Delete a job and its result (a running one is stopped)", tags=["runs"])
    def delete(self, request, job_id):
        erasure.erase_job(owned_job(request, job_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class RunCancel(APIView):
    @extend_schema(request=None, responses={200: JobSerializer, 404: ApiErrorSerializer, 409: ApiErrorSerializer},
                   summary="Cancel a queued or running job", tags=["runs"])
    def post(self, request, job_id):
        j = owned_job(request, job_id)
        if j.is_finished:
            return refused(f"the job has already {j.status}", status.HTTP_409_CONFLICT)
        # as the web's cancel: a request the worker reads at its next progress report; a queued job ends now
        Job.objects.filter(pk=j.pk).update(cancel_requested=True)
        stopped = Job.objects.filter(pk=j.pk, status=Job.QUEUED).update(
            status=Job.CANCELLED, finished=timezone.now(), phase="cancelled", message="cancelled before it started")
        if not stopped:
            job_service.cancel_if_stale(j)
        j.refresh_from_db()
        return Response(JobSerializer(j).data)


# ---- results ---------------------------------------------------------------------------------------------
def _table_result(request, job_id):
    j = owned_job(request, job_id)
    if j.kind in RESULT_PAGES or j.kind == Job.LATTICE:
        raise Http404("this job has no anonymized output")
    return j, job_result(j)


class PublishedRowsSerializer(serializers.Serializer):
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    count = serializers.IntegerField(help_text="published rows in all")
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.ListField(child=serializers.CharField(allow_null=True)))
    suppressed = serializers.ListField(child=serializers.BooleanField(), help_text="per row: suppressed")


class RunReport(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: ApiErrorSerializer},
                   summary="The result's report (figures, models' checks, verification)", tags=["results"])
    def get(self, request, job_id):
        j = owned_job(request, job_id)
        report = job_result(j).report
        # the report as stored (raw figures), and beside it "figures": each figure's label and text as every page
        # words and formats it (engine.measure.figure_catalogue), the models' checks included; "attribute_figures":
        # the per-quasi-identifier figures the same way (a full-domain transformation's; empty otherwise)
        return Response({**report, "figures": figure_catalogue.run_figures(report),
                         "attribute_figures": figure_catalogue.attribute_figures(report)})


class RunRows(APIView):
    @extend_schema(parameters=PAGE_PARAMETERS,
                   responses={200: PublishedRowsSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="A page of the published rows", tags=["results"])
    def get(self, request, job_id):
        j, res = _table_result(request, job_id)
        offset, limit = page_of(request)
        if res.report.get("kind") == "set-valued":
            return refused("a set-valued result is records of items: download it instead")
        frame, suppressed = results.output_rows(res, offset, offset + limit)
        count = res.report.get("records", len(frame))
        return Response({"offset": offset, "limit": limit, "count": count,
                         "columns": [str(c) for c in frame.columns],
                         "rows": [[None if v is None else str(v) for v in row] for row in frame.itertuples(index=False)],
                         "suppressed": [bool(x) for x in suppressed]})


class DownloadQuery(serializers.Serializer):
    format = serializers.ChoiceField(choices=list(exports.EXPORT_FORMATS), required=False, default="csv")
    delimiter = serializers.ChoiceField(choices=[name for name, _ in DELIMITER_CHOICES], required=False)
    drop_suppressed = serializers.ChoiceField(choices=["0", "1"], required=False, default="0")
    shuffle = serializers.ChoiceField(choices=["0", "1"], required=False, default="0")
    table = serializers.ChoiceField(choices=["st"], required=False, help_text="st: Anatomy's sensitive table")


FILE = OpenApiResponse(OpenApiTypes.BINARY, description="the file")
# the media types a download can have (CSV and TSV are both sent as text/csv, as on the web)
DOWNLOAD_TYPES = list(dict.fromkeys(["text/csv", *(f.content_type.split(";")[0] for f in
                                                   exports.EXPORT_FORMATS.values())]))


class RunDownload(APIView):
    throttle_scope = "download"
    @extend_schema(parameters=[DownloadQuery], responses={
        **{(200, media): FILE for media in DOWNLOAD_TYPES}, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Download the published table (the web download: CSV cells that a spreadsheet would "
                           "run as formulas are neutralized)", tags=["results"])
    def get(self, request, job_id):
        DownloadQuery(data=request.query_params).is_valid(raise_exception=True)
        j, res = _table_result(request, job_id)
        query = request._request.GET  # the web download's query: the same file
        delimiter = parse_delimiter(query.get("delimiter"), j.dataset.delimiter)
        if delimiter is None:
            return downloads.bad_request("delimiter must be one of: " + ", ".join(n for n, _ in DELIMITER_CHOICES))
        return downloads.table_download(j, res, delimiter, query)


class RunConfig(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: ApiErrorSerializer},
                   summary="The run's configuration JSON (as downloaded on the web)", tags=["results"])
    def get(self, request, job_id):
        return downloads.config_download(owned_job(request, job_id))


class RunReleaseReport(APIView):
    @extend_schema(responses={(200, "text/html"): OpenApiResponse(OpenApiTypes.STR, description="the report"),
                              404: ApiErrorSerializer},
                   summary="The release report (HTML; .pdf beside it)", tags=["results"])
    def get(self, request, job_id):  # a run's or a synthetic set's (release_report.reported_job decides)
        return release_report.page_response(owned_job(request, job_id), request._request)


class RunReleaseReportPdf(APIView):
    throttle_scope = "download"
    @extend_schema(responses={(200, "application/pdf"): FILE, 404: ApiErrorSerializer, 503: ApiErrorSerializer},
                   summary="The release report as PDF", tags=["results"])
    def get(self, request, job_id):
        return release_report.pdf_response(owned_job(request, job_id), request._request)


urlpatterns = [
    path("", RunList.as_view(), name="api-runs"),
    path("check/", RunCheck.as_view(), name="api-run-check"),
    path("<uuid:job_id>/", RunDetail.as_view(), name="api-run"),
    path("<uuid:job_id>/cancel/", RunCancel.as_view(), name="api-run-cancel"),
    path("<uuid:job_id>/report/", RunReport.as_view(), name="api-run-report"),
    path("<uuid:job_id>/rows/", RunRows.as_view(), name="api-run-rows"),
    path("<uuid:job_id>/download/", RunDownload.as_view(), name="api-run-download"),
    path("<uuid:job_id>/config/", RunConfig.as_view(), name="api-run-config"),
    path("<uuid:job_id>/release-report/", RunReleaseReport.as_view(), name="api-run-release-report"),
    path("<uuid:job_id>/release-report.pdf", RunReleaseReportPdf.as_view(), name="api-run-release-report-pdf"),
    *risk.run_urlpatterns,
    *identifiers.run_urlpatterns,
]
