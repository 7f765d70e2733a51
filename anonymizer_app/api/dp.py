"""Differential privacy releases in the API: a noisy histogram (OpenDP's Laplace or geometric mechanism) or
randomized response on one column of a dataset, validated by the web DP page's form (dp_forms.DPForm) and
computed by the same service (services.dp.release). Every call draws new noise, so every call is a release of
its own and spends its ε again (the schema says so); it is written to the dataset's ε ledger and refused (400,
the spent and remaining budget named) past the dataset's budget. GET /api/v1/datasets/<id>/privacy-budget/
reads the ledger (scope read, owner only)."""

from __future__ import annotations

import math

from django.http import HttpResponse
from django.urls import path
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ..dp_forms import MECHANISM_CHOICES, MODE_CHOICES, POST_PROCESSING_CHOICES, DPForm
from ..engine import InputError, dp, dp_postprocess
from ..services import datasets as dataset_service
from ..services import dp as dp_service
from ..services import exports, privacy_ledger
from .common import owned_dataset, refused
from .parsers import BoundedJSONParser as JSONParser
from .serializers import ApiErrorSerializer

SPENDS = ("Every call is a NEW release: new noise is drawn and its ε is spent again (the budgets of repeated "
          "calls on the same data add up, sequential composition). Each is written to the dataset's ε ledger "
          "(GET /api/v1/datasets/<id>/privacy-budget/) with its published figures; a call that would take the "
          "total past the dataset's budget is refused (400) before any noise is drawn.")


class DPReleaseSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=[m for m, _ in MODE_CHOICES],
                                   help_text="counts: a histogram of 'columns'; rr: randomized response on "
                                             "'rr_column'")
    epsilon = serializers.FloatField(help_text=f"the privacy budget this release spends, {dp.MIN_EPSILON:g} to "
                                               f"{dp.MAX_EPSILON:g}")
    columns = serializers.ListField(child=serializers.CharField(), required=False, default=list,
                                    help_text="counts: the columns to count (one cell per combination)")
    mechanism = serializers.ChoiceField(choices=[m for m, _ in MECHANISM_CHOICES], required=False,
                                        default="laplace")
    bounds = serializers.CharField(required=False, allow_blank=True, default="",
                                   help_text="counts: one COLUMN=LOWER:UPPER a line for each numeric column "
                                             "(public bounds, never read from the data)")
    post_processing = serializers.ChoiceField(
        choices=[m for m, _ in POST_PROCESSING_CHOICES], required=False, default=dp_postprocess.DEFAULT,
        help_text="counts: none (the raw noisy counts), round, round-clamp (rounded, negatives to 0) or "
                  "consistent (non-negative integers adding up to the rounded noisy total: least-squares "
                  "projection then largest-remainder rounding); free in privacy terms, no ε spent")
    bins = serializers.IntegerField(required=False, default=dp.DEFAULT_BINS, min_value=1, max_value=1000)
    rr_column = serializers.CharField(required=False, allow_blank=True, default="",
                                      help_text="rr: the column whose values are randomized")
    format = serializers.ChoiceField(choices=["json", "csv"], required=False, default="json",
                                     help_text="json: the figures; csv: the release itself (the web's 'Download "
                                               "CSV': the histogram's noisy counts or the perturbed column)")


class DPRelease(APIView):
    throttle_scope = "run"
    parser_classes = [JSONParser]

    @extend_schema(
        request=DPReleaseSerializer,
        responses={200: OpenApiTypes.OBJECT,
                   (200, "text/csv"): OpenApiResponse(OpenApiTypes.BINARY, description="the release (format=csv)"),
                   400: ApiErrorSerializer, 404: ApiErrorSerializer},
        summary="A differentially private release of a dataset (histogram or randomized response); spends ε",
        description=SPENDS + " JSON: counts -> columns, mechanism, epsilon, scale, sensitivity, epsilon_spent, "
                             "post_processing, cells [{cell, true_count, noisy_count (raw), released_count "
                             "(post-processed: the release)}], utility_cost (of the released counts); rr -> column, epsilon, "
                             "keep_probability, epsilon_spent, categories [{category, true_count, "
                             "perturbed_count, estimated_count}], utility_cost. The true figures are for you, "
                             "the owner: only the noisy ones are the release.",
        tags=["differential privacy"])
    def post(self, request, dataset_id):
        s = DPReleaseSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        ds = owned_dataset(request, dataset_id)
        if ds.is_transactions:
            return refused("dataset: a transaction dataset has no columns to count; upload it as a table")
        form = DPForm({k: v for k, v in d.items() if k != "format"}, columns=dataset_service.dataset_columns(ds))
        if not form.is_valid():
            errors = {name: [str(m) for m in msgs] for name, msgs in form.errors.items()}
            text = "; ".join(f"{n}: {m[0]}" if n != "__all__" else m[0] for n, m in errors.items())
            return refused(text, errors=errors)
        try:
            released = dp_service.release(ds, form.cleaned_data, request.user)
        except InputError as exc:
            return refused(str(exc))
        if d["format"] == "csv":
            response = HttpResponse(exports.export_csv(dp_service.release_frame(released)),
                                    content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = content_disposition_header(
                True, dp_service.release_filename(ds, form.cleaned_data))
            return response
        return Response(dict(_json_safe(released.summary()), release_note=SPENDS))


def _json_safe(value):
    """NaN (a relative error over a total of 0) as null: JSON has no NaN."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return None if isinstance(value, float) and math.isnan(value) else value


class PrivacyBudget(APIView):
    """The dataset's ε ledger, read-only: its budget, spent and remaining, and every release."""

    required_scope = "read"

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: ApiErrorSerializer},
                   summary="A dataset's ε ledger: budget, spent, remaining and every differentially private release",
                   description="Accounting by sequential composition (the ε, and δ, of every release add up). "
                               "JSON: budget (null: none), spent, remaining (null without a budget), delta_spent, "
                               "releases, accounting, entries [{id, created_at, user, mechanism, epsilon, delta, "
                               "description, run (a SafePub run's id, null once deleted), release (a histogram's "
                               "or randomized response's published figures)}], newest first. Entries stay when "
                               "a release is deleted. Owner only (others 404).",
                   tags=["differential privacy"])
    def get(self, request, dataset_id):
        ds = owned_dataset(request, dataset_id)
        entries = [{"id": e.pk, "created_at": e.created_at.isoformat(), "user": e.user.username if e.user else None,
                    "mechanism": e.mechanism, "epsilon": e.epsilon, "delta": e.delta, "description": e.description,
                    "run": str(e.job_id) if e.job_id else None, "release": e.release}
                   for e in privacy_ledger.entries(ds)]
        return Response(dict(privacy_ledger.state(ds).as_dict(), entries=entries))


urlpatterns = [path("<int:dataset_id>/", DPRelease.as_view(), name="api-dp-release")]
dataset_urlpatterns = [path("<int:dataset_id>/privacy-budget/", PrivacyBudget.as_view(),
                            name="api-dataset-privacy-budget")]
