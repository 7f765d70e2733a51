"""GET /api/v1/registry/: the algorithms (with what each supports: lattice, cluster, out of core, person level)
and privacy models with their parameters, read from the engine's registries, and the sources datasets come from
(services/sources), and the SDC methods applied after the recoding (engine.sdc.METHODS); a model, algorithm, source
or SDC method registered later appears without a change here. Each parameter
names the run field that carries it (POST /api/v1/runs/ takes the run form's fields)."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from ..engine import ALGORITHMS, COLUMN_TYPES, PRIVACY_MODELS, Role
from ..engine.algorithms import SUPPORT_FLAGS
from ..engine.model.persons import ADVERSARIES
from ..forms import model_field_name, option_field_name
from ..sdc_forms import SEED_FIELD, ordered_methods, sdc_field_name
from ..services import sources
from .serializers import RegistrySerializer

KINDS = {int: "integer", float: "number", str: "string", bool: "boolean"}


def _number(value) -> float | None:
    return None if value is None else float(value)


def _parameter(param, form_field: str | None) -> dict:
    default = param.default
    if not isinstance(default, (int, float, str, bool)) and default is not None:
        default = str(default)
    return {"name": param.name, "kind": KINDS.get(param.kind, "string"), "default": default, "help": param.help,
            "minimum": _number(param.minimum), "maximum": _number(param.maximum),
            "above": _number(getattr(param, "above", None)),
            "choices": list(param.choices) if param.choices is not None else None, "form_field": form_field}


def registry() -> dict:
    algorithms = [{
        "name": a.name, "label": a.label, "summary": a.summary, "recoding": a.recoding, "optimal": a.optimal,
        "models": list(a.models), "reference": a.reference, "runs_from_run_form": not a.republishes,
        **{flag: getattr(a, flag) for flag in SUPPORT_FLAGS},  # lattice, cluster, out_of_core, person_level
        # a release of a sequence is not run from the run form (policies, CLI): no run fields
        "options": [_parameter(p, None if a.republishes else option_field_name(a.name, p)) for p in a.options],
    } for a in ALGORITHMS.values()]
    models = [{
        "name": m.name, "label": m.label, "needs_sensitive": m.needs_sensitive,
        "column_source": m.column_source, "group": m.group, "variant": m.variant_name,
        # the run's fields that switch the model on, pick its variant and its column (None: not offered)
        "enabled_field": model_field_name(m.group, "enabled") if m.group else None,
        "variant_field": model_field_name(m.group, "variant") if m.group and m.variant_name else None,
        "column_field": model_field_name(m.group, "column") if m.group and m.column_source else None,
        "parameters": [_parameter(p, model_field_name(m.group, p.name) if m.group else p.name)
                       for p in m.parameters],
    } for m in PRIVACY_MODELS.values()]
    return {"algorithms": algorithms, "privacy_models": models, "column_types": list(COLUMN_TYPES),
            "roles": [r.value for r in Role], "person_adversaries": dict(ADVERSARIES), "sources": source_entries(),
            "sdc_methods": sdc_entries(), "sdc_seed_field": SEED_FIELD}


def sdc_entries() -> list[dict]:
    """Every registered SDC method in the order a run applies them, with the run fields that carry it."""
    return [{
        "name": m.name, "label": m.label, "kind": m.kind, "summary": m.summary, "guarantee": m.guarantee,
        "acts_on": m.acts_on, "reference": m.reference, "enabled_field": sdc_field_name(m.name, "enabled"),
        "parameters": [_parameter(p, sdc_field_name(m.name, p.name)) for p in m.parameters],
    } for m in ordered_methods()]


def source_entries() -> list[dict]:
    """Every registered source: where it is imported (its own API path and command, or the generic ones) and
    the parameters of the generic import (POST /api/v1/sources/<name>/ takes them under "parameters")."""
    return [{
        "name": s.name, "label": s.label, "summary": s.summary, "generic": s.generic,
        "api": f"/api/v1/{s.api_path}" if s.api_path else None, "command": s.command_line or None,
        "parameters": [_parameter(p, None) for p in s.parameters],
    } for s in sources.SOURCES.values()]


class Registry(APIView):
    @extend_schema(responses=RegistrySerializer, summary="Algorithms, privacy models and their parameters",
                   tags=["registry"])
    def get(self, request):
        return Response(registry())


urlpatterns = [path("", Registry.as_view(), name="api-registry")]
