"""`manage.py anonymize`'s model flags, generated from the registry (management/model_flags.py): the
flags and defaults of before, the same one-line messages, and the research-subset marker read by the
engine's one parser (privacy.parse_marker)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_anonymize import call, read_text_table

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.privacy import (
    BetaLikeness,
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
    TCloseness,
)
from anonymizer_app.management.base import UserError
from anonymizer_app.management.commands.anonymize import MODEL_FLAGS, Command

PEOPLE = Path(__file__).resolve().parent.parent / "anonymizer_app" / "demo_data" / "people"


def parse(*args: str) -> dict:
    parser = Command().create_parser("manage.py", "anonymize")
    return vars(parser.parse_args(["in.csv", "--qi", "age", "--k", "2", "--out", "o.csv", *args]))


def test_the_flags_of_before():
    assert set(MODEL_FLAGS) == {"--l", "--l-variant", "--c", "--t", "--t-distance", "--beta", "--beta-variant",
                                "--delta-min", "--delta-max", "--population", "--research-column", "--model-column",
                                "--ak-alpha", "--ak-k", "--delta-disclosure", "--average-risk", "--kmap",
                                "--kmap-sampling-fraction", "--kmap-estimator", "--kmap-significance",
                                "--kmap-population", "--population-uniqueness",
                                "--uniqueness-sampling-fraction", "--epsilon", "--delta", "--dp-search-share",
                                "--record-id"}
    opts = parse()
    assert (opts["l_variant"], opts["t_distance"], opts["beta_variant"]) == ("distinct", "equal", "enhanced")
    assert all(opts[d] is None for d in ("l", "c", "t", "beta", "delta_min", "delta_max", "model_column"))


@pytest.mark.parametrize("args,models", [
    (["--l", "3"], [DistinctLDiversity(3, "disease")]),
    (["--l", "2.5", "--l-variant", "entropy"], [EntropyLDiversity(2.5, "disease")]),
    (["--l", "2", "--l-variant", "recursive"], [RecursiveCLDiversity(3.0, 2, "disease")]),  # c defaults to 3
    (["--l", "2", "--l-variant", "recursive", "--c", "4"], [RecursiveCLDiversity(4, 2, "disease")]),
    (["--t", "0.3", "--t-distance", "ordered", "--model-column", "age"], [TCloseness(0.3, "ordered", "age")]),
    (["--beta", "2", "--beta-variant", "basic", "--t", "0.2"],
     [TCloseness(0.2, "equal", "disease"), BetaLikeness(2, "basic", "disease")]),
    (["--t-distance", "ordered"], []),  # a choice without its model: the model is not asked for
])
def test_models_from_the_flags(args, models):
    assert Command._models(parse("--sensitive", "disease", *args)) == models


def test_delta_presence_defaults_and_marker_column():
    (model,) = Command._models(parse("--delta-max", "0.8", "--research-column", "in_study"))
    assert (model.name, model.delta_min, model.delta_max, model.column) == ("delta-presence", 0.0, 0.8,
                                                                            "__research_subset__")


@pytest.mark.parametrize("args,message", [
    (["--c", "3"], "--c applies to --l with --l-variant recursive"),
    (["--l", "2", "--l-variant", "entropy", "--c", "3"], "--c applies to --l with --l-variant recursive"),
    (["--model-column", "disease"], "--model-column applies to --l, --t, --beta, --ak-alpha or --delta-disclosure"),
    (["--delta-max", "0.5", "--model-column", "disease", "--research-column", "r"],
     "--model-column applies to --l, --t, --beta, --ak-alpha or --delta-disclosure"),
    (["--research-column", "r"], "--population and --research-column apply to δ-presence or k-map (population "
                                 "table): give --delta-min and/or --delta-max or --kmap-population"),
    (["--kmap-population", "3"], "--kmap-population needs the research subset: --population FILE or "
                                 "--research-column COL"),
    (["--delta-min", "0.1", "--population", "p.csv", "--research-column", "r"],
     "give --population or --research-column, not both"),
    (["--delta-max", "0.5"], "--delta-min/--delta-max need the research subset: --population FILE or "
                             "--research-column COL"),
    (["--t", "0.2"], "--t needs a sensitive column: give --sensitive COL (or --model-column COL)"),
    (["--beta", "x", "--sensitive", "disease"], "beta must be a number, got 'x'"),
])
def test_the_messages_of_before(args, message):
    with pytest.raises((UserError, InputError)) as err:
        Command._models(parse(*args))
    assert str(err.value) == message


def test_an_unknown_research_marker_value_is_refused_with_its_row(tmp_path):
    population = read_text_table(PEOPLE / "db_100.csv", ",")
    population["in_study"] = ["yes" if i % 3 == 0 else "no" for i in range(len(population))]
    population.loc[6, "in_study"] = "maybe"
    population.to_csv(tmp_path / "pop.csv", index=False)
    out = tmp_path / "out.csv"
    code, message, _ = call(tmp_path / "pop.csv", "--identifier", "id", "--qi", "age", "--k", "2",
                            "--delta-max", "0.8", "--research-column", "in_study", "--out", out, "--quiet")
    assert code == 2 and "\n" not in message
    assert "research-subset column 'in_study', row 7: 'maybe' is not a marker value" in message
    assert not out.exists()


def test_yes_no_markers_are_read_like_1_0(tmp_path):
    population = read_text_table(PEOPLE / "db_100.csv", ",")
    population["in_study"] = [" Yes" if i % 3 == 0 else "no" for i in range(len(population))]
    population.to_csv(tmp_path / "pop.csv", index=False)
    out = tmp_path / "out.csv"
    code, message, _ = call(tmp_path / "pop.csv", "--identifier", "id", "--qi", "age", "--k", "2",
                            "--delta-max", "0.8", "--research-column", "in_study", "--out", out, "--quiet")
    assert code == 0, message
    assert len(read_text_table(out, ",")) == 34
