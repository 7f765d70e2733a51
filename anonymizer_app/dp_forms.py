"""The differential privacy form: a histogram of chosen columns (ε, mechanism, bounds of numeric columns)
or randomized response on one column (ε). A POST form: every submission is a new release."""

from __future__ import annotations

from typing import cast

from django import forms

from .engine import InputError, dp, dp_postprocess

MODE_CHOICES = [("counts", "histogram (noisy counts)"), ("rr", "randomized response on one column")]
MECHANISM_CHOICES = [("laplace", "Laplace (real-valued noise)"), ("geometric", "geometric (whole-number noise)")]
POST_PROCESSING_CHOICES = [(m, dp_postprocess.LABELS[m]) for m in
                           (dp_postprocess.CONSISTENT, dp_postprocess.ROUND_CLAMP, dp_postprocess.ROUND, dp_postprocess.NONE)]


class DPForm(forms.Form):
    mode = forms.ChoiceField(label="Release", choices=MODE_CHOICES, initial="counts", widget=forms.RadioSelect)
    epsilon = forms.FloatField(label="ε (privacy budget)", initial=1.0,
                               help_text=f"from {dp.MIN_EPSILON:g} to {dp.MAX_EPSILON:g}; smaller is more private and noisier")
    columns = forms.MultipleChoiceField(label="Columns to count", required=False,
                                        widget=forms.CheckboxSelectMultiple,
                                        help_text="one histogram cell per combination of their values")
    mechanism = forms.ChoiceField(label="Mechanism", choices=MECHANISM_CHOICES, initial="laplace")
    bounds = forms.CharField(label="Bounds of numeric columns", required=False,
                             widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="one COLUMN=LOWER:UPPER a line, e.g. age=17:90; public, not read from the data")
    post_processing = forms.ChoiceField(
        label="Post-processing of the counts", choices=POST_PROCESSING_CHOICES, initial=dp_postprocess.DEFAULT,
        required=False, help_text="free in privacy terms (it does not look at the data again): no ε is spent on it")
    bins = forms.IntegerField(label="Bins between the bounds", initial=dp.DEFAULT_BINS, min_value=1, max_value=1000)
    rr_column = forms.ChoiceField(label="Column for randomized response", required=False)

    def __init__(self, *args, columns: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["columns"]).choices = [(c, c) for c in columns]
        cast(forms.ChoiceField, self.fields["rr_column"]).choices = [("", "—"), *[(c, c) for c in columns]]

    def clean_epsilon(self):
        e = self.cleaned_data["epsilon"]
        try:
            return dp.check_epsilon(e)
        except InputError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_post_processing(self):
        return self.cleaned_data.get("post_processing") or dp_postprocess.DEFAULT

    def clean(self):
        data = super().clean()
        if data.get("mode") == "counts" and not data.get("columns"):
            self.add_error("columns", "Choose at least one column to count.")
        if data.get("mode") == "rr" and not data.get("rr_column"):
            self.add_error("rr_column", "Choose the column for randomized response.")
        return data


class BudgetForm(forms.Form):
    """The dataset's ε budget (empty: back to the default setting)."""

    budget = forms.FloatField(label="ε budget of this dataset", required=False, min_value=0.000001,
                              help_text="the total ε of all its differentially private releases (sequential "
                                        "composition: they add up); empty for the default")
