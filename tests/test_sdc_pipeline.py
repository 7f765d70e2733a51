"""SDC steps through the one pipeline and the gate (engine/run/sdc.py): recoding then local suppression, then a
perturbation; the gate's recount from the published rows; a tampered release refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.errors import InputError, VerificationError
from anonymizer_app.engine.model.table import Role, Table
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.sdc import apply_steps, check_published
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.sdc import METHODS
from anonymizer_app.engine.sdc.local_suppression import suppress_locally
from anonymizer_app.engine.sdc.local_suppression_fk import encode_keys, wildcard_fk
from anonymizer_app.engine.sdc.steps import SdcStep, parse_step

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def _testdata2_table(person: bool = False) -> Table:
    frame = pd.read_csv(REFERENCE / "testdata2.csv", dtype=str)
    roles = {c: Role.INSENSITIVE for c in frame.columns}
    roles.update({c: Role.QUASI_IDENTIFYING for c in KEYS})
    if person:
        roles["ori_hid"] = Role.PERSON
    types = {c: "string" for c in frame.columns}
    types.update({"expend": "integer", "income": "decimal", "savings": "decimal"})
    return Table(frame, roles, types, name="testdata2")


def sdc_only(steps, k: int = 1, levels: str = "0,0,0,0,0,0,0", **kw) -> RunSpec:
    """SDC methods alone: the chosen transformation at level 0 with k = 1 (nothing generalized or suppressed)."""
    spec = RunSpec.build(_testdata2_table(**kw), None, "full-domain", k=k, options={"levels": levels})
    return replace(spec, sdc=tuple(steps))


def test_local_suppression_through_the_pipeline_equals_sdcmicro():
    publication = pipeline.run(sdc_only([SdcStep("local_suppression", {"k": 2})]))
    section = publication.report["sdc"]
    step = section["steps"][0]
    assert step["figures"]["suppressed cells"] == 97
    assert step["changed_cells"] == {"urbrur": 3, "roof": 10, "walls": 7, "water": 56, "electcon": 0,
                                     "relat": 16, "sex": 5}
    assert step["check"]["holds"] and step["check"]["records below k"] == 0 and step["check"]["k"] == 2
    published = publication.table
    assert len(published) == 93
    assert int((published[KEYS] == "").sum().sum()) == 97
    # recounted independently: every record agrees (missing as wildcard) with at least one other
    rows = published[KEYS].to_numpy()
    for r in rows:
        assert sum(all(a == "" or b == "" or a == b for a, b in zip(r, s)) for s in rows) >= 2


def test_recoding_then_local_suppression_then_pram():
    steps = [parse_step("local_suppression:k=3,importance=sex,urbrur"), SdcStep("pram", {"variables": "relat2"})]
    # global recoding first (relat one level up its default hierarchy: a lattice node), then the remaining cells
    spec = sdc_only(steps, levels="0,0,0,0,0,1,0")
    publication = pipeline.run(replace(spec, sdc_seed=11))
    section = publication.report["sdc"]
    assert [s["method"] for s in section["steps"]] == ["local_suppression", "pram"]
    assert section["seed"] == 11
    ls, pram = section["steps"]
    assert ls["check"]["holds"] and ls["check"]["k"] == 3
    recoded = set(publication.table["relat"]) - {""}
    assert recoded and not recoded & set(_testdata2_table().frame["relat"])  # groups like "{1, 2}", no raw code
    assert pram["changed_cells"].keys() == {"relat2"}
    assert pram["check"] is None and "no k guarantee" in pram["statement"]
    fk = wildcard_fk(encode_keys(publication.table, KEYS))
    assert fk.min() >= 3
    # the importance order: sex and urbrur (most important) suppressed less than the rest
    assert ls["changed_cells"]["sex"] <= min(ls["changed_cells"][c] for c in ("water", "walls"))


def test_gate_refuses_a_tampered_release_and_accepts_the_real_one():
    table = _testdata2_table()
    spec = sdc_only([SdcStep("local_suppression", {"k": 2})])
    publication = pipeline.run(replace(spec, sdc=()))
    applied = apply_steps(publication, table, spec.sdc, 0)
    real = publication.table
    assert check_published(real, applied)["steps"][0]["check"]["holds"]
    # un-suppress one cell: put the original value back where it makes its record unique again
    original = table.frame
    tampered = None
    for row, col in zip(*np.nonzero((real[KEYS] == "").to_numpy())):
        trial = real.copy()
        trial.iloc[row, trial.columns.get_loc(KEYS[col])] = original.iloc[row][KEYS[col]]
        if wildcard_fk(encode_keys(trial, KEYS)).min() < 2:
            tampered = trial
            break
    assert tampered is not None
    with pytest.raises(VerificationError, match="Local suppression's guarantee"):
        check_published(tampered, applied)


def test_person_id_and_unknown_parameters_are_refused():
    with pytest.raises(InputError, match="count records, not persons: the person id 'ori_hid'"):
        pipeline.run(sdc_only([SdcStep("local_suppression", {"k": 2})], person=True))
    with pytest.raises(InputError, match="Local suppression: unknown parameter 'kk'"):
        SdcStep("local_suppression", {"kk": 2})
    with pytest.raises(InputError, match="unknown SDC method 'nope'"):
        parse_step("nope:k=2")
    with pytest.raises(InputError, match="Local suppression: k must be at least 2"):
        parse_step("local_suppression:k=1")
    assert parse_step("local_suppression:k=3,importance=sex,age,combs=3,2").parameters == {
        "k": 3, "importance": "sex,age", "combs": "3,2"}


def test_microaggregation_group_sizes_rechecked():
    assert "microaggregation" in METHODS  # registered by engine/sdc/__init__.py: the test may not pass by skipping
    publication = pipeline.run(sdc_only([SdcStep("microaggregation", {"variables": "expend,income", "k": 3})]))
    step = publication.report["sdc"]["steps"][0]
    assert step["check"]["holds"]
    counts = publication.table[["expend", "income"]].value_counts()
    assert counts.min() >= 3


def test_heuristic_equals_engine_call_on_the_same_rows():
    frame = pd.read_csv(REFERENCE / "testdata2.csv", dtype=str)
    assert suppress_locally(frame, KEYS, 2).total == 97


def test_a_later_perturbation_that_breaks_k_is_refused_by_the_gate():
    """A perturbation after local suppression that makes a record rare again: the gate refuses the publication."""
    from anonymizer_app.engine.sdc import SdcMethod, SdcOutcome

    def apply(frame, context, params):
        out = frame.copy()
        out.iloc[0, out.columns.get_loc("roof")] = "a value no other record has"
        return SdcOutcome(out, {}, {"roof": 1}, {})
    METHODS["toy_breaker"] = SdcMethod(name="toy_breaker", label="Toy breaker", kind="perturbation",
                                       summary="changes one key cell", apply=apply)
    try:
        spec = sdc_only([SdcStep("local_suppression", {"k": 2}), SdcStep("toy_breaker")])
        with pytest.raises(VerificationError, match=r"Local suppression's guarantee \(k-anonymity\) does not hold "
                                                    r"on the published rows \(Toy breaker changed its columns"):
            pipeline.run(spec)
    finally:
        del METHODS["toy_breaker"]
