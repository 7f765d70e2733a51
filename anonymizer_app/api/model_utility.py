"""Models trained on the release in the API: POST /runs/<id>/utility/ queues a job of kind "model-utility" on a
finished run's release or on a synthetic set (a synthesis job: trained on its rows, tested on the original rows it
held out; split, test_share and folds are refused for it) (services.model_utility, the web form's path: the same
validation and messages); it is
polled and cancelled like any job (GET /runs/<job>/, POST /runs/<job>/cancel/), and its figures are
GET /runs/<job>/utility/ once it has succeeded. Owner-only: another user's run or job is a 404."""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import InputError
from ..engine.measure.feature_encoding import ENCODINGS
from ..engine.measure.model_utility import MODELS, SPLITS, TASKS
from ..models import Job
from ..services import model_utility as utility_service
from ..services import synthetic_utility
from .common import owned_job, queue, refused
from .parsers import BoundedJSONParser as JSONParser
from .runs import JobSerializer
from .serializers import ApiErrorSerializer


class UtilitySerializer(serializers.Serializer):
    target = serializers.CharField(help_text="the column to predict: published as it is (not a QI)")
    features = serializers.ListField(child=serializers.CharField(), required=False, default=list,
                                     help_text="the columns the models read (default: every other published column)")
    models = serializers.ListField(child=serializers.ChoiceField(choices=list(MODELS)), required=False,
                                   default=lambda: list(MODELS))
    encoding = serializers.ChoiceField(choices=list(ENCODINGS), required=False, default="one-hot")
    task = serializers.ChoiceField(choices=list(TASKS), required=False, default="auto")
    split = serializers.ChoiceField(choices=list(SPLITS), required=False, default="holdout")
    test_share = serializers.FloatField(required=False, default=0.3, help_text="held-out share, 0.05 to 0.9")
    folds = serializers.IntegerField(required=False, default=5, min_value=2, max_value=20)
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**32 - 1)


class RunUtility(APIView):
    throttle_scope = "run"
    parser_classes = [JSONParser]

    @extend_schema(request=UtilitySerializer,
                   responses={201: JobSerializer, 400: ApiErrorSerializer, 404: ApiErrorSerializer},
                   summary="Train models on a run's release and on its input, or on a synthetic set and on the "
                           "original rows it read (one job; GET .../utility/ of the job gives the figures)", tags=["runs"])
    def post(self, request, job_id):
        source = owned_job(request, job_id)
        s = UtilitySerializer(data=request.data)
        s.is_valid(raise_exception=True)
        data = dict(s.validated_data)
        if source.kind == Job.SYNTHESIS:  # the defaults of a split are not a choice: only what the client sent
            data = {k: v for k, v in data.items() if k not in synthetic_utility.SPLIT_FIELDS or k in request.data}
        try:
            job = utility_service.create_utility_job(source, data)
        except InputError as exc:
            return refused(str(exc))
        return Response(JobSerializer(queue(job)).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: ApiErrorSerializer},
                   summary="The figures of a model-utility job: each model trained on the input and on the release, "
                           "and the baseline (null until it has succeeded)", tags=["runs"])
    def get(self, request, job_id):
        job = owned_job(request, job_id)
        if job.kind != Job.MODEL_UTILITY:
            raise Http404("this job does not train models on a release")
        return Response({"job": JobSerializer(job).data, "figures": utility_service.figures_of(job)})


urlpatterns = [path("<uuid:job_id>/utility/", RunUtility.as_view(), name="api-run-utility")]
