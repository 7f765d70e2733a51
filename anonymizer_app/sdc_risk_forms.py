"""The risk pages' options of the "Risk with sampling weights (sdcMicro)" section (GET, prefix ``sdc``): the
individual-risk method, the maximum global risk of the threshold, and whether SUDA2 runs."""

from __future__ import annotations

from django import forms

from .engine.measure.risk.sdc_individual import METHODS

METHOD_CHOICES = [("approx", "approximation (sdcMicro's default)"), ("exact", "exact negative-binomial series")]
assert [m for m, _ in METHOD_CHOICES] == list(METHODS)


class SdcRiskForm(forms.Form):
    method = forms.ChoiceField(label="Individual risk", choices=METHOD_CHOICES, required=False, initial="approx",
                               help_text="Benedetti-Franconi risk of records whose key combination occurs 3 or more "
                                         "times")
    max_global_risk = forms.FloatField(label="Maximum global risk", required=False, initial=0.01, min_value=0.0001,
                                       max_value=0.9999, help_text="the individual-risk threshold is computed for it "
                                                                   "(sdcMicro's default 0.01)")
    suda = forms.ChoiceField(label="SUDA2", choices=[("yes", "compute SUDA2 and DIS-SUDA"), ("no", "leave out")],
                             required=False, initial="yes")

    def options(self) -> dict:
        d = self.cleaned_data
        return {"method": d.get("method") or "approx", "max_global_risk": d.get("max_global_risk") or 0.01,
                "suda": (d.get("suda") or "yes") == "yes"}
