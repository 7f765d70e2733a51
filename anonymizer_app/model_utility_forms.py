"""The form of models trained on the release (views/model_utility.py): choices from the run's columns and from
the engine's registries (engine.measure.model_utility.MODELS, feature_encoding.ENCODINGS)."""

from __future__ import annotations

from django import forms

from .engine.measure.feature_encoding import ENCODING_HELP, ENCODINGS
from .engine.measure.model_utility import MODELS, SPLITS, TASKS

SPLIT_LABELS = {"holdout": "A fixed split: hold out a share of the rows", "kfold": "k folds: each row tested once"}


class ModelUtilityForm(forms.Form):
    target = forms.ChoiceField(label="Target column", help_text="the column the models predict; it must be "
                               "published as it is (not a quasi-identifier)")
    features = forms.MultipleChoiceField(label="Features", widget=forms.CheckboxSelectMultiple,
                                         help_text="the columns the models read (the target is never one of them)")
    models = forms.MultipleChoiceField(label="Models", widget=forms.CheckboxSelectMultiple,
                                       choices=[(m.name, m.label) for m in MODELS.values()], initial=list(MODELS))
    encoding = forms.ChoiceField(label="Encoding of generalized values", choices=[(e, e) for e in ENCODINGS],
                                 initial="one-hot", help_text=ENCODING_HELP)
    task = forms.ChoiceField(label="Task", choices=[(t, t) for t in TASKS], initial="auto",
                             help_text="auto: a text column or one of at most 20 numbers is classes, else a number")
    split = forms.ChoiceField(label="Test rows", choices=[(s, SPLIT_LABELS[s]) for s in SPLITS], initial="holdout")
    test_percent = forms.FloatField(label="Held-out share (%)", min_value=5, max_value=90, initial=30)
    folds = forms.IntegerField(label="Folds", min_value=2, max_value=20, initial=5)
    seed = forms.IntegerField(label="Seed", min_value=0, max_value=2**32 - 1, initial=0,
                              help_text="the split and every model's random state: the same seed gives the same "
                                        "figures")

    def __init__(self, *args, columns: list[str], targets: list[str], synthetic: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if synthetic:  # a synthetic set's test rows are those held out of the synthesis: no split to choose
            for name in ("split", "test_percent", "folds"):
                del self.fields[name]
            self.fields["encoding"].help_text = ("a synthetic set holds values, not ranges: numeric columns are "
                                                 "numbers and text columns one-hot under either encoding")
        target_field = self.fields["target"]
        assert isinstance(target_field, forms.ChoiceField)
        target_field.choices = [(c, c) for c in targets]
        feature_field = self.fields["features"]
        assert isinstance(feature_field, forms.MultipleChoiceField)
        feature_field.choices = [(c, c) for c in columns]
        if not self.is_bound:
            self.initial.setdefault("features", list(columns))

    def clean(self):
        data = super().clean()
        if data.get("target") and data.get("features") is not None:
            data["features"] = [f for f in data["features"] if f != data["target"]]
            if not data["features"]:
                raise forms.ValidationError("features: choose at least one column besides the target")
        return data

    def spec_data(self) -> dict:
        d = self.cleaned_data
        data = {"target": d["target"], "features": list(d["features"]),
                "models": d["models"], "encoding": d["encoding"], "task": d["task"], "seed": d["seed"]}
        if "split" in self.fields:
            data.update(split=d["split"], test_share=d["test_percent"] / 100.0, folds=d["folds"])
        return data
