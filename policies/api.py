"""The policies part of the HTTP API (mounted under /api/v1/policies/ by anonymizer_app/api/urls.py): list, create from a job,
import a file (or Amnesia's rules), view, delete, export, check a dataset, apply to a dataset. Thin: every step
is policies/services.py, as the web pages use it; applying queues the job as the run form does. Another
account's policy, job or dataset is a 404."""

from __future__ import annotations

from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from anonymizer_app.api.serializers import ErrorSerializer as ApiErrorSerializer
from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import jobs as job_service

from . import policy_file, services
from .models import Policy, PolicyVersion
from .policy_file import PolicyError

NAME_MAX = Policy._meta.get_field("name").max_length


# ---- serializers ---------------------------------------------------------------------------------
class VersionSerializer(serializers.ModelSerializer):
    source_job = serializers.UUIDField(source="source_job_id", allow_null=True, read_only=True)
    config = serializers.JSONField(help_text="the policy file (docs/policies.md)")

    class Meta:
        model = PolicyVersion
        fields = ["number", "created", "source_job", "config"]


class ReleaseSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    version = serializers.IntegerField(source="version.number")
    job = serializers.UUIDField(source="job_id", allow_null=True)
    created = serializers.DateTimeField()


class PolicySerializer(serializers.ModelSerializer):
    # the detail serializer nests the versions and releases in their place
    versions: serializers.Field = serializers.SerializerMethodField()
    releases: serializers.Field = serializers.SerializerMethodField()

    class Meta:
        model = Policy
        fields = ["id", "name", "description", "created", "versions", "releases"]

    def get_versions(self, obj) -> list[int]:
        return [v.number for v in obj.versions.all()]

    def get_releases(self, obj) -> int:
        return obj.releases.count()


class PolicyDetailSerializer(PolicySerializer):
    versions = VersionSerializer(many=True, read_only=True)
    releases = ReleaseSerializer(many=True, read_only=True)


class CreateSerializer(serializers.Serializer):
    job = serializers.UUIDField(help_text="a finished run of yours")
    name = serializers.CharField(max_length=NAME_MAX, help_text="an existing name adds a version")
    description = serializers.CharField(required=False, allow_blank=True, default="")
    alongside = serializers.BooleanField(required=False, default=False,
                                         help_text="a synthetic set only: keep the anonymization of the policy's "
                                                   "latest version beside this synthesis (applying runs both)")


class ImportSerializer(serializers.Serializer):
    policy = serializers.JSONField(required=False, help_text="a policy file's object (docs/policies.md)")
    rules = serializers.CharField(required=False, trim_whitespace=False,
                                  help_text="Amnesia's anonymization rules, as exported (instead of policy)")
    k = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1,
                                 help_text="with rules: k (not in Amnesia's file)")
    dataset = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1,
                                       help_text="with rules: the dataset whose other columns complete the policy")
    name = serializers.CharField(required=False, allow_blank=True, max_length=NAME_MAX, default="")

    def validate(self, attrs):
        if ("policy" in attrs) == ("rules" in attrs):
            raise serializers.ValidationError("give either policy (a policy file) or rules (Amnesia's rules)")
        return attrs


class ApplySerializer(serializers.Serializer):
    dataset = serializers.IntegerField(min_value=1, max_value=2**31 - 1, help_text="a table dataset of yours")
    version = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1,
                                       help_text="default: the latest")
    on_new_values = serializers.ChoiceField(choices=policy_file.ON_NEW_VALUES, default=policy_file.STOP,
                                            help_text="values a hierarchy does not cover: stop, or extend the "
                                                      "hierarchy (each under an '(other)' node)")


class NewValueSerializer(serializers.Serializer):
    value = serializers.CharField()
    count = serializers.IntegerField()


class NewValuesSerializer(serializers.Serializer):
    column = serializers.CharField()
    total = serializers.IntegerField()
    values = NewValueSerializer(many=True)


class TypeDifferenceSerializer(serializers.Serializer):
    column = serializers.CharField()
    policy = serializers.CharField()
    found = serializers.CharField()


class ReportSerializer(serializers.Serializer):
    missing = serializers.ListField(child=serializers.CharField())
    extra = serializers.ListField(child=serializers.CharField())
    types = TypeDifferenceSerializer(many=True)
    new_values = NewValuesSerializer(many=True)
    blocking = serializers.ListField(child=serializers.CharField())
    clean = serializers.BooleanField()


class AppliedJobSerializer(serializers.Serializer):
    job = serializers.UUIDField()
    kind = serializers.CharField(help_text="run, or synthesis")
    release = serializers.IntegerField()


class AppliedSerializer(serializers.Serializer):
    job = serializers.UUIDField(help_text="the first job: the run, or the synthesis of a policy without one")
    release = serializers.IntegerField()
    version = serializers.IntegerField()
    report = ReportSerializer()
    jobs = AppliedJobSerializer(many=True, help_text="every job the version queued (a run and a synthesis)")


class ErrorSerializer(ApiErrorSerializer):
    report = ReportSerializer(required=False, help_text="the differences, when they stopped the run")


# ---- helpers -------------------------------------------------------------------------------------
ID_RANGE = range(1, 2**63)  # what a database key can be: anything else is no policy (and no query)
POLICY_ID = OpenApiParameter("policy_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="a policy of yours")


def _policy(request, policy_id) -> Policy:
    if int(policy_id) not in ID_RANGE:
        raise Http404("no such policy")
    return get_object_or_404(Policy, pk=int(policy_id), owner=request.user)


def _version(policy: Policy, number: int | None) -> PolicyVersion:
    if number is None:
        version = policy.latest
        if version is None:
            raise Http404("the policy has no version")
        return version
    if number not in ID_RANGE:
        raise Http404("no such version")
    return get_object_or_404(PolicyVersion, policy=policy, number=number)


def _dataset(request, pk: int) -> Dataset:
    return get_object_or_404(Dataset, pk=pk, owner=request.user)


def _refused(message: str, report=None, code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    body = {"detail": message}
    if report is not None:
        body["report"] = report.as_dict()
    return Response(body, status=code)


# ---- views ---------------------------------------------------------------------------------------
class PolicyList(APIView):

    @extend_schema(responses=PolicySerializer(many=True), summary="Your policies", tags=["policies"])
    def get(self, request):
        qs = Policy.objects.filter(owner=request.user).prefetch_related("versions")
        return Response(PolicySerializer(qs, many=True).data)

    @extend_schema(request=CreateSerializer, responses={201: VersionSerializer, 400: ErrorSerializer,
                                                        404: ErrorSerializer},
                   summary="Save a finished run's configuration as a policy (a new version if the name exists)",
                   tags=["policies"])
    def post(self, request):
        s = CreateSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        job = get_object_or_404(Job, pk=s.validated_data["job"], owner=request.user)
        if job.status != Job.SUCCEEDED:
            return _refused("a policy is saved from a finished run or synthetic set")
        try:
            version = services.save_from_job(job, s.validated_data["name"], s.validated_data["description"],
                                             alongside=s.validated_data["alongside"])
        except PolicyError as exc:
            return _refused(str(exc))
        return Response(VersionSerializer(version).data, status=status.HTTP_201_CREATED)


class PolicyImport(APIView):

    @extend_schema(request=ImportSerializer, responses={201: VersionSerializer, 400: ErrorSerializer,
                                                        404: ErrorSerializer},
                   summary="Import a policy file, or Amnesia's anonymization rules", tags=["policies"])
    def post(self, request):
        s = ImportSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        try:
            if "policy" in d:
                config = policy_file.validate(d["policy"], "policy")
                version = services.add_version(request.user, d["name"] or config["name"], config,
                                               config["description"])
            else:
                dataset = _dataset(request, d["dataset"]) if d.get("dataset") is not None else None
                version = services.import_policy(request.user, d["rules"], "rules", d["name"], d.get("k"), dataset)
        except PolicyError as exc:
            return _refused(str(exc))
        return Response(VersionSerializer(version).data, status=status.HTTP_201_CREATED)


class PolicyDetail(APIView):

    @extend_schema(responses={200: PolicyDetailSerializer, 404: ErrorSerializer},
                   parameters=[POLICY_ID], summary="A policy with its versions and releases",
                   tags=["policies"])
    def get(self, request, policy_id: int):
        return Response(PolicyDetailSerializer(_policy(request, policy_id)).data)

    @extend_schema(responses={204: None, 404: ErrorSerializer}, parameters=[POLICY_ID], summary="Delete a policy (its jobs are kept)",
                   tags=["policies"])
    def delete(self, request, policy_id: int):
        with transaction.atomic():
            _policy(request, policy_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class PolicyExport(APIView):

    @extend_schema(parameters=[POLICY_ID, OpenApiParameter("version", int, required=False,
                                                           description="default: the latest")],
                   responses={(200, "application/json"): OpenApiTypes.OBJECT, 404: ErrorSerializer},
                   summary="A version as a policy file", tags=["policies"])
    def get(self, request, policy_id: int):
        policy = _policy(request, policy_id)
        raw = request.query_params.get("version")
        if raw is not None and not (raw.isascii() and raw.isdigit()):
            raise Http404("version: a version number")
        version = _version(policy, int(raw) if raw is not None else None)
        response = HttpResponse(services.export_text(version), content_type="application/json; charset=utf-8")
        response["Content-Disposition"] = content_disposition_header(
            True, f"{policy.name}-v{version.number}.policy.json")
        return response


class PolicyCheck(APIView):

    @extend_schema(request=ApplySerializer, responses={200: ReportSerializer, 400: ErrorSerializer,
                                                       404: ErrorSerializer},
                   parameters=[POLICY_ID], summary="The differences between a dataset and a policy version, before any run",
                   tags=["policies"])
    def post(self, request, policy_id: int):
        s = ApplySerializer(data=request.data)
        s.is_valid(raise_exception=True)
        version = _version(_policy(request, policy_id), s.validated_data.get("version"))
        dataset = _dataset(request, s.validated_data["dataset"])
        if dataset.layout != Dataset.TABLE:
            return _refused(f"{dataset.name}: a policy applies to a table, not to a transaction file")
        return Response(services.schema_report(dataset, version.config).as_dict())


class PolicyApply(APIView):
    throttle_scope = "run"

    @extend_schema(parameters=[POLICY_ID], request=ApplySerializer, responses={202: AppliedSerializer, 400: ErrorSerializer,
                                                       404: ErrorSerializer, 409: ErrorSerializer},
                   summary="Apply a policy version to a dataset: the job is queued and recorded as a release; "
                           "differences answer 409 with the report", tags=["policies"])
    def post(self, request, policy_id: int):
        s = ApplySerializer(data=request.data)
        s.is_valid(raise_exception=True)
        version = _version(_policy(request, policy_id), s.validated_data.get("version"))
        dataset = _dataset(request, s.validated_data["dataset"])
        if dataset.layout != Dataset.TABLE:
            return _refused(f"{dataset.name}: a policy applies to a table, not to a transaction file")
        report = services.schema_report(dataset, version.config)
        try:
            made = services.apply_jobs(dataset, version, s.validated_data["on_new_values"])
        except PolicyError as exc:
            blocked = report.blocking or (report.new_values and s.validated_data["on_new_values"] == policy_file.STOP)
            return _refused(str(exc), report, status.HTTP_409_CONFLICT if blocked else status.HTTP_400_BAD_REQUEST)
        for job in made:
            try:
                job_service.submit_job(job)
            except Exception as exc:  # broker unreachable: the job would wait forever, so end it and say why
                Job.objects.filter(pk=job.pk, status=Job.QUEUED).update(
                    status=Job.FAILED, finished=timezone.now(), message=f"could not queue the job: {exc}")
        releases = [job.policy_releases.get() for job in made]
        return Response({"job": made[0].pk, "release": releases[0].number, "version": version.number,
                         "report": report.as_dict(),
                         "jobs": [{"job": j.pk, "kind": j.kind, "release": r.number} for j, r in zip(made, releases)]},
                        status=status.HTTP_202_ACCEPTED)
