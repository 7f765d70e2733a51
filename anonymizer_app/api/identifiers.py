"""Identifier treatments in the API (the web's /keys/ and /datasets/<id>/identifiers/ pages, through the same
service, services/pseudonyms.py): the key ring, each identifying or person-id column's treatment, and the download of a
result's re-identification table.

- A key's secret is in exactly one answer, the 201 that creates it (``Cache-Control: no-store``); lists and
  details give its id, name and date and the columns and policies naming it, never the secret (no fingerprint
  of it is kept either, so none is shown).
- PUT of a dataset's treatments replaces them all, or changes nothing: an identifying column left out goes
  back to removal (as an unset row of the web form), and every column's problem is reported at once with the
  web page's messages.
- A re-identification table is more than the token can read: its download is a POST carrying the account's
  password (as the web asks for it again). An API key alone, leaked from a script, does not reveal whom the
  pseudonyms stand for; wrong passwords have their own counter per (account, address) (accounts/reconfirm.py),
  apart from the login lockout, so a stolen key can neither guess the password nor lock the owner out.
"""

from __future__ import annotations

from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils.cache import add_never_cache_headers
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.reconfirm import confirm_password

from ..engine import InputError
from ..engine.run import identifiers as id_rules
from ..models import PseudonymKey, ReidentificationTable
from ..services import pseudonyms
from ..services.vault import VaultError
from .common import object_key, owned_dataset, owned_job, refused
from .parsers import BoundedJSONParser as JSONParser
from .serializers import ApiErrorSerializer

INT32 = 2**31 - 1


# ---- keys ------------------------------------------------------------------------------------------------
class KeySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    created = serializers.DateTimeField()
    columns = serializers.ListField(child=serializers.CharField(),
                                    help_text="identifying columns whose pseudonyms use it, as 'dataset: column'")
    policies = serializers.ListField(child=serializers.CharField(), help_text="release policies naming it")


class KeyCreatedSerializer(KeySerializer):
    secret = serializers.CharField(help_text="the key's secret in hex: shown in this answer only, never again")


class KeyCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, allow_blank=True, help_text="one key per set of linked tables")
    secret = serializers.CharField(required=False, allow_blank=True, default="", max_length=1000,
                                   help_text="your own secret as at least 32 hex digits; empty: 32 random bytes")


class KeyDeletedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    policies = serializers.ListField(child=serializers.CharField(),
                                     help_text="release policies naming the key: applying them stops with a message "
                                               "until their rules name another key")
    columns = serializers.ListField(child=serializers.CharField(),
                                    help_text="columns that used it, as 'dataset: column': they go back to removal")


def _key_row(key: PseudonymKey) -> dict:
    return {"id": key.pk, "name": key.name, "created": key.created,
            "columns": [f"{c.dataset.name}: {c.name}" for c in pseudonyms.columns_using(key)],
            "policies": pseudonyms.policies_using(key)}


def _owned_key(request, key_id: int) -> PseudonymKey:
    return get_object_or_404(PseudonymKey, pk=object_key(key_id), owner=request.user)


class KeyList(APIView):
    required_scope = "admin"
    parser_classes = [JSONParser]

    @extend_schema(responses={200: KeySerializer(many=True)}, summary="Your pseudonymization keys (never a secret)",
                   tags=["identifiers"])
    def get(self, request):
        return Response(KeySerializer([_key_row(k) for k in PseudonymKey.objects.filter(owner=request.user)],
                                      many=True).data)

    @extend_schema(request=KeyCreateSerializer, responses={201: KeyCreatedSerializer, 400: ApiErrorSerializer},
                   summary="Create a key (generated, or your hex secret); its secret is in this answer only",
                   tags=["identifiers"])
    def post(self, request):
        s = KeyCreateSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        try:
            key, secret = pseudonyms.create_key(request.user, s.validated_data["name"], s.validated_data["secret"])
        except InputError as exc:
            return refused(str(exc))
        response = Response(KeyCreatedSerializer({**_key_row(key), "secret": secret.hex()}).data,
                            status=status.HTTP_201_CREATED)
        add_never_cache_headers(response)  # the one answer holding the secret must not be kept by a cache
        return response


class KeyDetail(APIView):
    required_scope = "admin"
    @extend_schema(responses={200: KeySerializer, 404: ApiErrorSerializer}, summary="A key (never its secret)",
                   tags=["identifiers"])
    def get(self, request, key_id):
        return Response(KeySerializer(_key_row(_owned_key(request, key_id))).data)

    @extend_schema(responses={200: KeyDeletedSerializer, 404: ApiErrorSerializer},
                   summary="Delete a key; the answer names the policies and columns that used it", tags=["identifiers"])
    def delete(self, request, key_id):
        key = _owned_key(request, key_id)
        row = _key_row(key)
        pseudonyms.delete_key(key)
        return Response({"detail": f"Key {row['name']!r} deleted.", "policies": row["policies"],
                         "columns": row["columns"]})


# ---- a dataset's identifying columns ----------------------------------------------------------------------
class RuleSerializer(serializers.Serializer):
    column = serializers.CharField(help_text="an identifying or person-id column of the dataset (a keyed pseudonym "
                                             "of the person id keeps each person's records linkable in the release)")
    treatment = serializers.ChoiceField(choices=list(id_rules.TREATMENTS), default=id_rules.REMOVE)
    key = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=INT32,
                                   help_text="pseudonym: the id of one of your keys (GET /keys/)")
    case_sensitive = serializers.BooleanField(required=False, help_text="pseudonym/surrogate; false folds case")
    length = serializers.IntegerField(required=False, min_value=-INT32, max_value=INT32,
                                      help_text=f"pseudonym/surrogate: hex digits of the token, "
                                                f"{id_rules.TOKEN_MIN}..{id_rules.TOKEN_MAX}")
    prefix = serializers.IntegerField(required=False, min_value=-INT32, max_value=INT32,
                                      help_text="mask: characters kept at the start")
    suffix = serializers.IntegerField(required=False, min_value=-INT32, max_value=INT32,
                                      help_text="mask: characters kept at the end")
    regex = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=1000,
                                  help_text="mask: the matches of this pattern are replaced (instead of prefix/suffix)")
    char = serializers.CharField(required=False, allow_blank=True, max_length=10, trim_whitespace=False,
                                 help_text="mask: the replacing character")


class TreatmentsSerializer(serializers.Serializer):
    columns = RuleSerializer(many=True, help_text="one per identifying or person-id column, in the table's order")
    treatments = serializers.DictField(child=serializers.CharField(), read_only=True,
                                       help_text="the treatments and what each does")


class TreatmentsPutSerializer(serializers.Serializer):
    columns = RuleSerializer(many=True, help_text="the identifying and person-id columns' treatments; one left out "
                                                              "is removed")


def _rule_out(column) -> dict:
    rule = column_rule_dict(column)
    if rule.get("key") is not None:
        rule["key"] = int(rule["key"]) if str(rule["key"]).isdigit() else None
    return rule


def column_rule_dict(column) -> dict:
    """The column's stored rule as the engine's dict form (a removed column: just its treatment)."""
    rule = pseudonyms.column_rule(column)
    return rule.to_dict() if rule is not None else {"column": column.name, "treatment": id_rules.REMOVE}


def _treatments(ds) -> dict:
    columns = pseudonyms.treated_columns(ds)
    return {"columns": [_rule_out(c) for c in columns], "treatments": dict(id_rules.TREATMENTS)}


class DatasetIdentifiers(APIView):
    parser_classes = [JSONParser]

    @extend_schema(responses={200: TreatmentsSerializer, 404: ApiErrorSerializer},
                   summary="The identifying columns' treatments", tags=["identifiers"])
    def get(self, request, dataset_id):
        return Response(_treatments(owned_dataset(request, dataset_id)))

    @extend_schema(request=TreatmentsPutSerializer,
                   responses={200: TreatmentsSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Set the identifying columns' treatments (all or nothing; the next run uses them)",
                   tags=["identifiers"])
    def put(self, request, dataset_id):
        ds = owned_dataset(request, dataset_id)
        s = TreatmentsPutSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        identifying = {c.name: c for c in pseudonyms.treated_columns(ds)}  # identifying columns and the person id
        names = set(ds.columns.values_list("name", flat=True))
        given: dict[str, dict] = {}
        errors: list[str] = []
        for item in s.validated_data["columns"]:
            name = item["column"]
            if name in given:
                errors.append(f"column {name!r} is given twice")
            elif name not in names:
                errors.append(f"column {name!r}: the dataset has no such column")
            elif name not in identifying:  # the service's own message
                errors.append(f"column {name!r} is not identifying: only identifying and person-id columns are "
                              f"treated")
            given[name] = {k: v for k, v in item.items() if k != "column" and v is not None}
        if not errors:
            try:
                with transaction.atomic():  # all columns or none, as the web page
                    for name, column in identifying.items():
                        try:
                            pseudonyms.save_rule(column, given.get(name, {"treatment": id_rules.REMOVE}))
                        except InputError as exc:
                            errors.append(str(exc))
                    if errors:
                        raise InputError("; ".join(errors))
            except InputError:
                pass
        if errors:
            return refused("; ".join(errors), errors={"columns": errors})
        return Response(_treatments(ds))


# ---- re-identification table --------------------------------------------------------------------------------
class PasswordSerializer(serializers.Serializer):
    password = serializers.CharField(max_length=4096, trim_whitespace=False,
                                     help_text="your account's password: an API key alone does not open the table")


class RunReidentification(APIView):
    required_scope = "admin"
    throttle_scope = "reidentification"
    parser_classes = [JSONParser]

    @extend_schema(request=PasswordSerializer, responses={
        (200, "text/csv"): OpenApiResponse(OpenApiTypes.BINARY, description="column,original,pseudonym lines"),
        400: ApiErrorSerializer, 403: ApiErrorSerializer, 404: ApiErrorSerializer, 429: ApiErrorSerializer,
        503: ApiErrorSerializer},
        summary="Download the result's re-identification table (give your password)", tags=["identifiers"])
    def post(self, request, job_id):
        job = owned_job(request, job_id)
        table = ReidentificationTable.objects.filter(job=job).first()
        if table is None:
            raise Http404("this result has no re-identification table")
        s = PasswordSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        # a failure counter of its own per (account, address), not the login lockout (accounts/reconfirm.py): a
        # stolen key can neither guess the password nor lock its owner's log-in
        checked = confirm_password(request, request.user, s.validated_data["password"])
        if checked.locked:
            response = refused(checked.message, status.HTTP_429_TOO_MANY_REQUESTS)
            response["Retry-After"] = str(checked.minutes * 60)
            return response
        if not checked.ok:
            return refused("password: that is not your password", status.HTTP_403_FORBIDDEN)
        try:
            text = pseudonyms.reidentification_csv(table)
        except VaultError as exc:  # the server's vault key, not the request: said as it is (docs/vault.md)
            return refused(str(exc), status.HTTP_503_SERVICE_UNAVAILABLE)
        response = HttpResponse(text, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = content_disposition_header(True, f"{job.dataset.name}-reidentification.csv")
        add_never_cache_headers(response)
        return response


urlpatterns = [
    path("", KeyList.as_view(), name="api-keys"),
    path("<int:key_id>/", KeyDetail.as_view(), name="api-key"),
]
dataset_urlpatterns = [
    path("<int:dataset_id>/identifiers/", DatasetIdentifiers.as_view(), name="api-dataset-identifiers"),
]
run_urlpatterns = [
    path("<uuid:job_id>/reidentification/", RunReidentification.as_view(), name="api-run-reidentification"),
]
