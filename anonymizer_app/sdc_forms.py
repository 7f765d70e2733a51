"""The run form's "SDC methods" part, read from the engine's registry (engine.sdc.METHODS): a box per method and
its parameters' fields, applied after the recoding in registry order, recoding methods (local suppression,
microaggregation) before perturbations (PRAM, noise, ...), then the seed of the random ones. The job keeps the
steps with its options (services/sdc_runs.py); the API takes the same fields (GET /registry/ names them)."""

from __future__ import annotations

from django import forms

from .engine.sdc import METHODS, SdcMethod
from .engine.sdc.steps import SdcStep


def sdc_field_name(method: str, name: str) -> str:
    return f"sdc:{method}:{name}"


SEED_FIELD = "sdc_seed"


def ordered_methods() -> list[SdcMethod]:
    """Recoding methods first (their guarantee is then recounted on the rows perturbations leave alone)."""
    return sorted(METHODS.values(), key=lambda m: m.kind != "recoding")


def _field(param) -> forms.Field:
    label = param.field_label
    default = param.default
    if isinstance(default, float) and default.is_integer():
        default = int(default)
    common = {"label": label, "help_text": param.help, "initial": default, "required": False}
    if param.choices is not None:
        return forms.ChoiceField(choices=[(c, c) for c in param.choices], **common)
    if param.kind is int:
        return forms.IntegerField(**common)
    if param.kind is float:
        return forms.FloatField(**common)
    return forms.CharField(max_length=2000, **common)


class SdcFields:
    """Mixed into the run form: the SDC methods as fields, the steps they make."""

    fields: dict
    cleaned_data: dict

    def add_sdc_fields(self) -> None:
        for method in ordered_methods():
            self.fields[sdc_field_name(method.name, "enabled")] = forms.BooleanField(
                required=False, label=method.label, help_text=method.summary)
            for param in method.parameters:
                self.fields[sdc_field_name(method.name, param.name)] = _field(param)
        self.fields[SEED_FIELD] = forms.IntegerField(
            required=False, initial=0, min_value=0, max_value=2**32 - 1, label="Seed of the random SDC methods",
            help_text="PRAM, noise and rank swapping draw from it; the result reports it.")

    def sdc_steps(self) -> list[SdcStep]:
        """The ticked methods as steps (InputError names the method and the parameter)."""
        steps = []
        for method in ordered_methods():
            if not self.cleaned_data.get(sdc_field_name(method.name, "enabled")):
                continue
            values = {p.name: self.cleaned_data.get(sdc_field_name(method.name, p.name)) for p in method.parameters}
            steps.append(SdcStep(method.name, {k: v for k, v in values.items() if v is not None and v != ""}))
        return steps

    def sdc_options(self) -> dict:
        """The job options that carry the steps (none when no method is ticked)."""
        steps = self.sdc_steps()
        if not steps:
            return {}
        return {"sdc": [s.to_json() for s in steps], "sdc_seed": int(self.cleaned_data.get(SEED_FIELD) or 0)}

    def sdc_groups(self) -> list[dict]:
        """For the template: each method with its box, kind, guarantee and parameter fields."""
        bound = self  # a Django form: fields are bound through __getitem__
        return [{"name": m.name, "label": m.label, "kind": m.kind, "summary": m.summary,
                 "guarantee": m.guarantee, "acts_on": m.acts_on,
                 "enabled": bound[sdc_field_name(m.name, "enabled")],  # type: ignore[index]
                 "fields": [bound[sdc_field_name(m.name, p.name)] for p in m.parameters]}  # type: ignore[index]
                for m in ordered_methods()]

    def sdc_seed_field(self):
        return self[SEED_FIELD]

