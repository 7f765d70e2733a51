"""Differential privacy releases in the API: a noisy histogram (OpenDP's Laplace or geometric mechanism) or
randomized response on one column of a dataset, validated by the web DP page's form (dp_forms.DPForm) and
computed by the same service (services.dp.release). Nothing is stored: every call draws new noise, so every
call is a release of its own and spends its ε again (the schema says so)."""

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

from ..dp_forms import MECHANISM_CHOICES, MODE_CHOICES, DPForm
from ..engine import InputError, dp
from ..services import datasets as dataset_service
from ..services import dp as dp_service
from ..services import exports
from .common import owned_dataset, refused
from .parsers import BoundedJSONParser as JSONParser
from .serializers import ApiErrorSerializer

SPENDS = ("Every call is a NEW release: new noise is drawn and its ε is spent again (the budgets of repeated "
          "calls on the same data add up). Nothing is stored; keep the answer if you need it again.")


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
                             "cells [{cell, true_count, noisy_count}], utility_cost; rr -> column, epsilon, "
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
            released = dp_service.release(ds, form.cleaned_data)
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


urlpatterns = [path("<int:dataset_id>/", DPRelease.as_view(), name="api-dp-release")]
