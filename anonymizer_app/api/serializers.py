"""Serializers shared by the API's concerns: errors, and the registries' algorithms and privacy models."""

from __future__ import annotations

from rest_framework import serializers


class ApiErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="what is wrong, naming the field, line or value")
    errors = serializers.DictField(required=False, help_text="field -> messages, for invalid input")  # type: ignore[assignment]  # DRF's metaclass takes declared fields off the class


ErrorSerializer = ApiErrorSerializer  # the name other concerns imported first


class ParameterSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField(help_text="integer, number, string or boolean")
    default = serializers.JSONField(allow_null=True)
    help = serializers.CharField()
    minimum = serializers.FloatField(allow_null=True)
    maximum = serializers.FloatField(allow_null=True)
    above = serializers.FloatField(allow_null=True, help_text="an exclusive lower bound")
    choices = serializers.ListField(child=serializers.CharField(), allow_null=True)
    form_field = serializers.CharField(allow_null=True,
                                       help_text="the run's field carrying it (POST /runs/); null: not a run field")


class AlgorithmSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # DRF's metaclass takes declared fields off the class
    summary = serializers.CharField()
    recoding = serializers.CharField()
    optimal = serializers.BooleanField()
    models = serializers.ListField(child=serializers.CharField(), help_text="privacy models it can honour")
    options = ParameterSerializer(many=True)
    reference = serializers.CharField()
    runs_from_run_form = serializers.BooleanField(help_text="false: a release of a sequence (policies, CLI)")
    lattice = serializers.BooleanField(help_text="a lattice search: the solution lattice and its nodes")
    cluster = serializers.BooleanField(help_text="runs on a Dask cluster")
    out_of_core = serializers.BooleanField(help_text="runs out of core on a table larger than memory")
    person_level = serializers.BooleanField(help_text="counts people, not records")


class PrivacyModelSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # DRF's metaclass takes declared fields off the class
    needs_sensitive = serializers.BooleanField()
    column_source = serializers.CharField(allow_null=True)
    parameters = ParameterSerializer(many=True)
    group = serializers.CharField(allow_null=True, help_text="the run's model group (its form fields)")
    variant = serializers.CharField(allow_blank=True)
    enabled_field = serializers.CharField(allow_null=True)
    variant_field = serializers.CharField(allow_null=True)
    column_field = serializers.CharField(allow_null=True)


class SourceSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # DRF's metaclass takes declared fields off the class
    summary = serializers.CharField()
    generic = serializers.BooleanField(help_text="imported by POST /api/v1/sources/<name>/ with its parameters")
    api = serializers.CharField(allow_null=True, help_text="where the API imports it")
    command = serializers.CharField(allow_null=True, help_text="the manage.py command that imports it")
    parameters = ParameterSerializer(many=True)


class SdcMethodSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # DRF's metaclass takes declared fields off the class
    kind = serializers.CharField(help_text="recoding (its guarantee rechecked by the gate) or perturbation (none)")
    summary = serializers.CharField()
    guarantee = serializers.CharField(allow_blank=True,
                                      help_text="k-anonymity, group size, or empty: a perturbation gives no k guarantee")
    acts_on = serializers.CharField(help_text="key (the quasi-identifiers), numeric or chosen columns")
    reference = serializers.CharField(allow_blank=True)
    enabled_field = serializers.CharField(help_text="the run's field that applies the method (POST /runs/ fields)")
    parameters = ParameterSerializer(many=True)


class RegistrySerializer(serializers.Serializer):
    algorithms = AlgorithmSerializer(many=True)
    privacy_models = PrivacyModelSerializer(many=True)
    column_types = serializers.ListField(child=serializers.CharField())
    roles = serializers.ListField(child=serializers.CharField())
    person_adversaries = serializers.DictField(
        child=serializers.CharField(),
        help_text="with a column of role 'person id': the run's person_adversary choices and what each means")
    sources = SourceSerializer(many=True)
    sdc_methods = SdcMethodSerializer(many=True, help_text="statistical disclosure control methods applied after "
                                                          "the recoding, in this order (engine.sdc.METHODS)")
    sdc_seed_field = serializers.CharField(help_text="the run's field with the seed of the random SDC methods")
