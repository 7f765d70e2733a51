"""The generic import page's form: one field per parameter of a source (services/sources), built from its
Parameters as the run form builds an algorithm's options, and the dataset's name."""

from __future__ import annotations

from django import forms

from .forms import parameter_field
from .services.sources import Source


def parameter_field_name(name: str) -> str:
    return f"param:{name}"


class SourceForm(forms.Form):
    name = forms.CharField(label="Dataset name", max_length=200, required=False,
                           help_text="Optional; the file's name otherwise.")

    def __init__(self, source: Source, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.source = source
        for param in source.parameters:
            self.fields[parameter_field_name(param.name)] = parameter_field(param)

    def values(self) -> dict:
        """The parameters given (blank ones left out: Source.values fills their defaults and checks them)."""
        out = {}
        for param in self.source.parameters:
            value = self.cleaned_data.get(parameter_field_name(param.name))
            if value is not None and value != "":
                out[param.name] = value
        return out
