"""The risk analysis form (a GET form: the page computes and shows, it stores nothing): the QIs, the
population model, the risk threshold and the size of the QI combinations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from django import forms

from .engine.measure.risk import REGIONS
from .services.risk import MAX_COMBINATION_SIZE

POPULATION_CHOICES = [("none", "none (the table is the population)"), ("fraction", "sampling fraction"),
                      ("region", "region"), ("size", "population size"),
                      ("table", "population table (another of your datasets)")]
REGION_CHOICES = [(key, f"{r['label']}: {r['population']:,} ({r['source']})") for key, r in REGIONS.items()]


class RiskForm(forms.Form):
    qi = forms.MultipleChoiceField(label="Quasi-identifiers", widget=forms.CheckboxSelectMultiple,
                                   error_messages={"required": "Choose at least one quasi-identifier."})
    population = forms.ChoiceField(label="Population model", choices=POPULATION_CHOICES, initial="none",
                                   widget=forms.RadioSelect)
    sampling_fraction = forms.FloatField(label="Sampling fraction", required=False, min_value=0.0, max_value=1.0,
                                         help_text="the share of the population the table holds, above 0 and at most 1")
    region = forms.ChoiceField(label="Region", choices=REGION_CHOICES, required=False, initial="usa")
    population_size = forms.IntegerField(label="Population size", required=False, min_value=1)
    population_dataset = forms.TypedChoiceField(label="Population dataset", required=False, coerce=int,
                                                empty_value=None,
                                                help_text="holds every record of this table, with the same QI columns")
    threshold = forms.FloatField(label="Risk threshold", initial=0.2, min_value=0.0, max_value=1.0,
                                 help_text="records whose risk is above it are at risk")
    combinations = forms.IntegerField(label="QI combinations up to", initial=1, min_value=1,
                                      max_value=MAX_COMBINATION_SIZE,
                                      help_text="distinction and separation of combinations of up to this many QIs")

    def __init__(self, *args, columns: list[str], populations: Sequence[tuple[int, str]] = (),
                 combinations: bool = True, **kwargs):
        """``combinations``: offer the size of the QI combinations whose distinction and separation are shown;
        False on a page that shows none (a result's risk: before and after), where it would change nothing."""
        super().__init__(*args, **kwargs)
        if not combinations:
            del self.fields["combinations"]
        cast(forms.ChoiceField, self.fields["qi"]).choices = [(c, c) for c in columns]
        cast(forms.ChoiceField, self.fields["population_dataset"]).choices = [("", "—"), *populations]

    def clean(self):
        data = super().clean()
        model = data.get("population")
        if model == "fraction":
            f = data.get("sampling_fraction")
            if f is None:
                self.add_error("sampling_fraction", "Give the sampling fraction.")
            elif f <= 0:
                self.add_error("sampling_fraction", f"Sampling fraction {f:g}: it is above 0 and at most 1.")
        if model == "size" and data.get("population_size") is None:
            self.add_error("population_size", "Give the population size.")
        if model == "table" and data.get("population_dataset") is None:
            self.add_error("population_dataset", "Choose the population dataset.")
        if model == "region" and not data.get("region"):
            self.add_error("region", "Choose a region.")
        if data.get("threshold") == 0:
            self.add_error("threshold", "The threshold is above 0.")
        return data

    def population_options(self) -> dict:
        d = self.cleaned_data
        return {"model": d["population"], "sampling_fraction": d.get("sampling_fraction"),
                "region": d.get("region") or None, "size": d.get("population_size"),
                "dataset": d.get("population_dataset")}


class PopulationForm(RiskForm):
    """The population model and the threshold alone (the comparison page: its runs fix the QIs)."""

    def __init__(self, *args, populations: Sequence[tuple[int, str]] = (), **kwargs):
        super().__init__(*args, columns=[], populations=populations, **kwargs)
        del self.fields["qi"], self.fields["combinations"]
        cast(forms.ChoiceField, self.fields["population"]).choices = [c for c in POPULATION_CHOICES if c[0] != "none"]
        self.fields["population"].initial = "fraction"
