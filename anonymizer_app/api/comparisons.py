"""Comparisons in the API: several algorithms for several k on one dataset, queued as one job of kind
"comparison" through the compare page's form and services.comparison; its figures are the job's report
(GET /api/v1/runs/<id>/report/, rows under "comparison"), polled and deleted like any job."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError, Role
from ..engine.model.persons import ADVERSARIES
from ..forms import CompareForm, RunForm
from ..services import comparison as comparison_service
from .common import owned_dataset, queue, refused
from .parsers import BoundedJSONParser as JSONParser
from .runs import JobSerializer
from .serializers import ApiErrorSerializer


class ComparisonSerializer(serializers.Serializer):
    dataset = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    algorithms = serializers.ListField(child=serializers.CharField(), help_text="algorithms of GET /registry/")
    k_values = serializers.ListField(child=serializers.IntegerField(min_value=-2**31, max_value=2**31 - 1))
    # the run form's default (forms.RunForm), as the web comparison form's
    suppression_percent = serializers.FloatField(required=False,
                                                 default=RunForm.base_fields["suppression_percent"].initial)
    sensitive = serializers.CharField(required=False, allow_blank=True, default="")
    person_adversary = serializers.ChoiceField(choices=list(ADVERSARIES), required=False, default="class",
                                               help_text="with a person-id column: as POST /runs/")
    weights = serializers.CharField(required=False, allow_blank=True, default="",
                                    help_text="attribute weights 'qi=w,qi=w' (w from 0 to 1, others 0.5) for every "
                                              "algorithm that takes them (the lattice searches, Mondrian, k-member, "
                                              "OKA); the others run unweighted")


class Comparisons(APIView):
    throttle_scope = "comparison"
    parser_classes = [JSONParser]

    @extend_schema(request=ComparisonSerializer,
                   responses={201: JobSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Compare algorithms over values of k (one job; its report holds the table)",
                   tags=["runs"])
    def post(self, request):
        s = ComparisonSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        ds = owned_dataset(request, d["dataset"])
        if ds.is_transactions:
            return refused("dataset: a transaction dataset is compared on the web items page")
        sensitive = [c.name for c in ds.columns.all() if c.role == Role.SENSITIVE.value]
        form = CompareForm({"algorithms": d["algorithms"], "k_values": ", ".join(map(str, d["k_values"])),
                            "suppression_percent": d["suppression_percent"], "sensitive": d["sensitive"]},
                           sensitive_columns=sensitive)
        if not form.is_valid():
            errors = {k: [str(m) for m in v] for k, v in form.errors.items()}
            return refused("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()), errors=errors)
        c = form.cleaned_data
        try:
            job = comparison_service.create_comparison(ds, c["algorithms"], c["k_values"],
                                                       c["suppression_percent"] / 100.0, c["sensitive"] or "",
                                                       person_adversary=d["person_adversary"], weights=d["weights"])
        except InputError as exc:
            return refused(str(exc))
        return Response(JobSerializer(queue(job)).data, status=status.HTTP_201_CREATED)


urlpatterns = [path("", Comparisons.as_view(), name="api-comparisons")]
