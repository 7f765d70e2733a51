"""A privacy model is one module plus a registry entry: a new one touches 2 files, its module (here the toy
below, defined in this test) and one registry line (its class in ``PRIVACY_MODELS``, engine/privacy/__init__.py;
here ``monkeypatch.setitem``). Registered after every algorithm was (as a plug-in would be), it gets its CLI
flags (management/model_flags.py, the anonymize command's parser), its run-form fields (forms.RunForm, the run
page) and its entry in GET /api/v1/registry/, and every algorithm that takes any model (``AlgorithmInfo.models``
read from the registry when asked) runs with it: the engine's pipeline and the anonymize command publish a
table that satisfies it, without any other change."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import people_dataset
from api_helpers import api_for
from cli_helpers import run_command
from django.core.management import load_command_class

from anonymizer_app.engine.algorithms import ALGORITHMS
from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.model.table import Role, Table
from anonymizer_app.engine.privacy import PRIVACY_MODELS, Parameter, SensitiveModel, make_model, shares
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.forms import RunForm
from anonymizer_app.management.model_flags import ModelFlagError, add_model_arguments, models_from_options


@dataclass(frozen=True)
class AlphaCap(SensitiveModel):
    """The α of (α,k)-anonymity: no sensitive value holds more than a share α of a class of at least
    min_size records (the toy's whole module)."""

    alpha: float
    min_size: int = 1
    scope: str = "class"
    column: str | None = None
    name: ClassVar[str] = "alpha-cap"
    label: ClassVar[str] = "α-cap"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("alpha", float, 0.5, "largest share of one sensitive value in a class", minimum=0.0,
                  maximum=1.0, label="α"),
        Parameter("min_size", int, 1, "classes smaller than this fail", minimum=1, cli_flag="--alpha-min-size"),
        Parameter("scope", str, "class", "where the share is taken", choices=("class", "table"),
                  cli_flag="--alpha-scope"),
    )
    group: ClassVar[str | None] = "alpha"
    group_label: ClassVar[str] = "α-cap"
    enabled_by: ClassVar[tuple[str, ...]] = ("alpha",)
    card_label: ClassVar[str] = "largest share of one value"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def values(self, counts, domain):
        return shares(counts).max(axis=1)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        return (self.values(counts, domain) > self.alpha + 1e-9) | (np.asarray(sizes) < self.min_size)

    def card_value(self, values):
        return float(values.max())

    def summary(self) -> str:
        return f"{self.alpha:g}-cap{self._where()}"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(PRIVACY_MODELS, AlphaCap.name, AlphaCap)  # the registry entry
    return AlphaCap


def test_the_toy_is_a_complete_model(toy):
    model = make_model("alpha-cap", alpha="0.6", column="disease")
    assert model == AlphaCap(0.6, 1, "class", "disease")
    assert model.to_dict() == {"model": "alpha-cap", "alpha": 0.6, "min_size": 1, "scope": "class",
                               "column": "disease"}
    counts = np.array([[1, 1], [3, 1]])
    assert model.classes_failing(counts.sum(axis=1), counts, object()).tolist() == [False, True]
    assert model.card(np.array([2, 4]), counts, object()) == {"value": 0.75, "value_label": "largest share of one value"}


def test_the_cli_parser_gains_the_toy_flags(toy, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # argparse wraps help at the terminal's width
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    help_text = parser.format_help()
    assert "--alpha ALPHA" in help_text and "--alpha-min-size ALPHA_MIN_SIZE" in help_text
    assert "--alpha-scope {class,table}" in help_text
    assert "the column --l, --t, --beta, --ak-alpha, --delta-disclosure or --alpha apply to" in help_text  # --model-column's help
    opts = vars(parser.parse_args(["--alpha", "0.6", "--alpha-min-size", "3", "--alpha-scope", "table"]))
    assert models_from_options(opts, "disease") == [AlphaCap(0.6, 3, "table", "disease")]
    # the generated checks apply to it as to the built-in models
    with pytest.raises(ModelFlagError, match="^--alpha-min-size applies to --alpha$"):
        models_from_options(vars(parser.parse_args(["--alpha-min-size", "3"])), "disease")
    with pytest.raises(ModelFlagError, match=r"^--alpha needs a sensitive column: give --sensitive COL"):
        models_from_options(vars(parser.parse_args(["--alpha", "0.6"])), None)
    with pytest.raises(InputError, match="alpha must be at most 1, got 1.5"):
        models_from_options(vars(parser.parse_args(["--alpha", "1.5"])), "disease")


def test_the_anonymize_command_takes_the_toy_flags(toy):
    command = load_command_class("anonymizer_app", "anonymize")
    parser = command.create_parser("manage.py", "anonymize")
    opts = vars(parser.parse_args(["in.csv", "--qi", "age", "--k", "2", "--out", "o.csv", "--sensitive", "disease",
                                   "--l", "2", "--alpha", "0.5"]))
    models = command._models(opts)
    assert [m.name for m in models] == ["distinct-l-diversity", "alpha-cap"]
    assert models[1] == AlphaCap(0.5, column="disease")


def test_the_run_form_gains_the_toy_fields(toy):
    form = RunForm({"algorithm": "datafly", "k": 2, "suppression_percent": 0, "model:alpha:enabled": "on",
                    "model:alpha:alpha": "0.7", "model:alpha:scope": "table", "model:alpha:column": "disease"},
                   sensitive_columns=["disease"])
    for name in ("model:alpha:enabled", "model:alpha:alpha", "model:alpha:min_size", "model:alpha:scope",
                 "model:alpha:column"):
        assert name in form.fields
    assert form.fields["model:alpha:enabled"].label == "Apply α-cap"
    assert form.fields["model:alpha:alpha"].label == "α"
    assert form.fields["model:alpha:alpha"].widget.attrs["max"] == 1.0
    assert form.is_valid(), form.errors
    spec = form.privacy_models()
    assert spec == [{"model": "alpha-cap", "alpha": 0.7, "min_size": 1, "scope": "table", "column": "disease"}]
    params = {k: v for k, v in spec[0].items() if k != "model"}
    assert make_model(spec[0]["model"], **params) == AlphaCap(0.7, 1, "table", "disease")


@pytest.mark.django_db
def test_the_run_page_shows_the_toy_group(toy, client_alice, user):
    ds = people_dataset(user, hierarchies=False)
    html = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    assert 'data-model-group="alpha"' in html
    for name in ("model:alpha:enabled", "model:alpha:alpha", "model:alpha:min_size", "model:alpha:scope",
                 "model:alpha:column"):
        assert f'name="{name}"' in html


def test_without_the_registry_entry_nothing_is_offered():
    assert "alpha-cap" not in PRIVACY_MODELS
    assert not any(k.startswith("model:alpha:") for k in RunForm(sensitive_columns=["disease"]).fields)


def test_a_parameter_of_some_variants_only_says_which():
    # recursive (c,l)-diversity's c: the run page shows it only while that variant is chosen (run.js)
    form = RunForm(sensitive_columns=["disease"])
    marked = {name: f.widget.attrs["data-variants"] for name, f in form.fields.items()
              if "data-variants" in f.widget.attrs}
    assert marked == {"model:l:c": "recursive"}


# ---- end to end: a model registered after the algorithms ------------------------------------------------------
def _table() -> Table:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"age": rng.integers(20, 70, 80).astype(str), "zip": rng.choice(["1301", "1302"], 80),
                          "disease": rng.choice(["flu", "cold", "ulcer", "gout"], 80)})
    return Table(frame, {"age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE})


def _largest_share(published: pd.DataFrame) -> float:
    return float(published.groupby(["age", "zip"])["disease"].value_counts(normalize=True).max())


def test_every_algorithm_taking_any_model_takes_the_toy(toy):
    takers = [name for name, info in ALGORITHMS.items() if "alpha-cap" in info.models]
    assert {"datafly", "flash", "mondrian", "kmember"} <= set(takers)
    assert "anatomy" not in takers and "safepub" not in takers  # they name the models they honour


@pytest.mark.parametrize("algorithm", ["datafly", "mondrian"])
def test_the_engine_runs_with_the_toy(toy, algorithm):
    spec = RunSpec.build(_table(), None, algorithm, k=2, models=[AlphaCap(0.6, column="disease")],
                         suppression_limit=0.1)
    pub = pipeline.run(spec)
    assert pub.report["models"][-1] == {"model": "alpha-cap", "alpha": 0.6, "min_size": 1, "scope": "class",
                                        "column": "disease"}
    assert _largest_share(pub.table) <= 0.6


def test_the_anonymize_command_runs_with_the_toy(toy, tmp_path):
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _table().frame.to_csv(source, index=False)
    code, stdout, stderr = run_command("anonymize", source, "--qi", "age", "--qi", "zip", "--sensitive", "disease",
                                       "--k", "2", "--alpha", "0.6", "--suppression", "0.1", "--out", out)
    assert code == 0, stdout + stderr
    assert _largest_share(pd.read_csv(out, dtype=str)) <= 0.6


@pytest.mark.django_db
def test_the_api_lists_the_toy(toy, user):
    body = api_for(user).get("/api/v1/registry/").json()
    entry = next(m for m in body["privacy_models"] if m["name"] == "alpha-cap")
    assert (entry["label"], entry["group"], entry["enabled_field"]) == ("α-cap", "alpha", "model:alpha:enabled")
    assert [p["name"] for p in entry["parameters"]] == ["alpha", "min_size", "scope"]
    assert "alpha-cap" in next(a for a in body["algorithms"] if a["name"] == "datafly")["models"]
